// Runs: recent reflection jobs with their steps and per-belief results, and "Reflect now".
import { api } from "./api.js";
import { ago, h, percent, reasonWords, replace, toast } from "./dom.js";

const STEPS = ["pull", "propose", "check", "submit"];
const GATES = { safe: "safe", needs_review: "needs review", duplicate: "duplicate" };
const POLL_MS = 1000;
const POLL_LIMIT = 120;

function resultView(result) {
  const rejected = result.rejected ? reasonWords(result.rejected).text : "not submitted";
  const reasons = [...new Set((result.structured_reasons || []).map((reason) => reasonWords(reason).text))].filter(
    (text) => result.accepted || text !== rejected,
  );
  const outcome = result.accepted ? h("a", { href: `/?belief=${result.belief_id}` }, "to review") : h("span", rejected);
  return h(
    `li.result.${result.accepted ? "accepted" : "rejected"}`,
    h("p", result.belief),
    h(
      "p.memory-meta",
      h(`span.chip.gate-${result.gate}`, GATES[result.gate] || result.gate),
      result.op !== "add" && h("span.chip", result.op),
      h("span", `${percent(result.confidence)} sure`),
      outcome,
    ),
    reasons.length > 0 && h("p.hint", reasons.join(" · ")),
  );
}

function jobView(job, ctx) {
  const out = job.output_data || {};
  const results = out.results || [];
  const dropped = out.dropped || [];
  const steps = new Map(job.steps.map((step) => [step.name, step]));
  const seconds =
    job.finished_at && (Date.parse(job.finished_at) - Date.parse(job.started_at || job.created_at)) / 1000;
  return h(
    `article.job.job-${job.status}`,
    { "data-job-id": job.id },
    h(
      "header.job-head",
      h(`span.chip.status-${job.status}`, job.status),
      h("span.chip.chip-agent", ctx.agentName(job.agent_id)),
      h(
        "span",
        `${job.trigger} · ${ago(job.created_at)}${seconds ? ` · ${seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(1)} s`}` : ""}`,
      ),
    ),
    h(
      "ol.steps",
      { "aria-label": "Steps" },
      STEPS.map((name) => {
        const step = steps.get(name) || { status: "waiting" };
        return h(`li.step.step-${step.status}`, { title: step.error || step.status }, name);
      }),
    ),
    job.error && h("p.job-error", job.error),
    job.status === "succeeded" &&
      h(
        "p",
        `${out.episodes_considered ?? 0} episodes read, ${out.proposed ?? 0} proposed, ${results.filter((r) => r.accepted).length} sent to review.`,
      ),
    results.length > 0 &&
      h("details", h("summary", `Results · ${results.length}`), h("ul.result-list", results.map(resultView))),
    dropped.length > 0 &&
      h(
        "p.hint",
        `${dropped.length} dropped by the parser: ${[...new Set(dropped.map((d) => d.reason.replaceAll("_", " ")))].join(", ")}`,
      ),
  );
}

export function createRuns(ctx) {
  const [list, button, picker] = ["runs-list", "reflect-now", "runs-agent"].map((id) => document.getElementById(id));
  const chosenAgent = () => ctx.agentFilter() || picker.value;
  button.addEventListener("click", reflectNow);

  async function refresh() {
    const ids = ctx.agentIds();
    picker.hidden = Boolean(ctx.agentFilter()) || ids.length < 2;
    if (picker.dataset.agents !== ids.join()) {
      replace(
        picker,
        ids.map((id) => h("option", { value: id }, ctx.agentName(id))),
      );
      picker.dataset.agents = ids.join();
    }
    button.disabled = !chosenAgent();
    const agent = ctx.agentFilter();
    const { body } = await api(`/jobs?limit=20${agent ? `&agent_id=${agent}` : ""}`);
    if (!body.items.length)
      return replace(list, h("p.hint", "No runs yet. Reflect now to distil recent episodes into beliefs."));
    replace(
      list,
      body.items.map((job) => jobView(job, ctx)),
    );
  }

  async function reflectNow() {
    button.disabled = true;
    button.textContent = "Reflecting…";
    try {
      const input_data = { agent_id: chosenAgent() };
      let { body: job } = await api("/jobs", { method: "POST", body: { workflow_id: "agent-reflection", input_data } });
      await refresh();
      for (let i = 0; i < POLL_LIMIT && ["queued", "running"].includes(job.status); i++) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        ({ body: job } = await api(`/jobs/${job.id}`));
      }
      await refresh();
      const accepted = (job.output_data?.results || []).filter((r) => r.accepted).length;
      if (job.status === "succeeded") {
        const review = accepted ? { action: "Review", onAction: () => ctx.go("review") } : {};
        toast(
          accepted ? `Reflection done: ${accepted} new to review` : "Reflection done: nothing new to learn",
          review,
        );
        ctx.reviewChanged();
      } else if (job.status === "failed") toast(`Reflection failed: ${job.error || "see the run"}`, { tone: "warn" });
      else toast("Reflection is still running; it shows up here when done.");
    } catch (error) {
      toast(`Could not start a reflection: ${error.message}`, { tone: "warn" });
    } finally {
      button.disabled = false;
      button.textContent = "Reflect now";
    }
  }

  return { refresh };
}
