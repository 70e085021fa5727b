// A typed use of the generated client: `tsc --strict` must accept it as written.
import { client } from "./client/client.gen";
import {
  createAgent,
  createTurn,
  exportMemoryMarkdown,
  getBelief,
  keepBelief,
  listBeliefs,
} from "./client/sdk.gen";
import type { Belief, BeliefStatus, Problem, TurnIn } from "./client/types.gen";

export async function flow(baseUrl: string, key: string): Promise<string | null | undefined> {
  client.setConfig({ baseUrl, auth: key });
  await createAgent({ body: { id: "coder", name: "Coder" } });
  const turn: TurnIn = {
    session_id: "s1",
    messages: [{ role: "user", content: "Convert the PDF" }, { role: "assistant", content: "Done" }],
  };
  const reported = await createTurn({ path: { agent_id: "coder" }, body: turn });
  const finished: string | undefined = reported.data?.episode.finished_at;
  const pending: BeliefStatus = "pending";
  const page = await listBeliefs({ query: { status: pending, limit: 10 } });
  const first: Belief | undefined = page.data?.items[0];
  if (first === undefined) return finished;
  const fetched = await getBelief({ path: { belief_id: first.id } });
  const etag = fetched.response?.headers.get("ETag") ?? "";
  const kept = await keepBelief({ path: { belief_id: first.id }, headers: { "If-Match": etag } });
  if (kept.error !== undefined) {
    const problem: Problem = kept.error;
    const extra = problem.extra;
    if (extra && !Array.isArray(extra)) return extra.current_etag;
    return problem.detail;
  }
  const markdown: string | undefined = (await exportMemoryMarkdown({ path: { agent_id: "coder" } })).data;
  return markdown;
}
