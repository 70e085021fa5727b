// Runs: recent reflection jobs with their steps and per-belief results, and "Reflect now".
import { api, ApiError } from "./api.js";
import { ago, h, percent, reasonWords, replace, toast } from "./dom.js";

const STEPS = ["pull", "propose", "check", "submit"];
const GATES = { safe: "safe", needs_review: "needs review", duplicate: "duplicate" };
const POLL_MS = 1000;
const POLL_LIMIT = 120;

function duration(job) {
  const start = Date.parse(job.started_at || job.created_at);
  const end = Date.parse(job.finished_at || "");
  if (!start || !end) return "";
  const seconds = (end - start) / 1000;
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(1)} s`;
}

function stepsView(job) {
  const byName = new Map((job.steps || []).map((step) => [step.name, step]));
  return h(
    "ol",
    { class: "steps", "aria-label": "Steps" },
    STEPS.map((name) => {
      const step = byName.get(name) || { status: "waiting" };
      return h("li", { class: `step step-${step.status}`, title: step.error || step.status }, name);
    }),
  );
}

function resultView(result) {
  const outcome = result.accepted
    ? h("a", { class: "result-link", href: `/?belief=${encodeURIComponent(result.belief_id)}` }, "to review")
    : h("span", { class: "result-rejected" }, reasonWords(result.rejected_reason || "").text || "not submitted");
  return h(
    "li",
    { class: `result ${result.accepted ? "accepted" : "rejected"}` },
    h("p", { class: "result-text" }, result.belief),
    h(
      "p",
      { class: "memory-meta" },
      h("span", { class: `chip gate-${result.gate}` }, GATES[result.gate] || result.gate),
      result.op && result.op !== "add" ? h("span", { class: "chip" }, result.op) : null,
      typeof result.confidence === "number" ? h("span", {}, `${percent(result.confidence)} sure`) : null,
      outcome,
    ),
    (result.reasons || []).length
      ? h("p", { class: "result-reasons" }, result.reasons.map((code) => reasonWords(code).text).join(" · "))
      : null,
  );
}

function jobView(job, ctx) {
  const out = job.output_data || {};
  const results = out.results || [];
  const accepted = results.filter((r) => r.accepted).length;
  const agentId = job.input_data?.agent_id || job.agent_id;
  return h(
    "article",
    { class: `job job-${job.status}`, "data-job-id": job.id },
    h(
      "header",
      { class: "job-head" },
      h("span", { class: `chip status-${job.status}` }, job.status),
      agentId ? h("span", { class: "chip chip-agent" }, ctx.agentName(agentId)) : null,
      h("span", {}, `${job.trigger || "manual"} · ${ago(job.created_at || job.started_at)}`),
      duration(job) ? h("span", {}, duration(job)) : null,
    ),
    stepsView(job),
    job.error ? h("p", { class: "job-error", role: "note" }, job.error) : null,
    job.status === "succeeded"
      ? h(
          "p",
          { class: "job-summary" },
          `${out.episodes_considered ?? 0} episodes read, ${out.proposed ?? results.length} proposed, ${accepted} sent to review.`,
        )
      : null,
    results.length
      ? h(
          "details",
          { class: "results" },
          h("summary", {}, `Results · ${results.length}`),
          h("ul", { class: "result-list" }, results.map(resultView)),
        )
      : null,
    (out.dropped || []).length
      ? h(
          "p",
          { class: "result-reasons" },
          `${out.dropped.length} dropped by the parser: `,
          [...new Set(out.dropped.map((d) => d.reason.replaceAll("_", " ")))].join(", "),
        )
      : null,
  );
}

export function createRuns(ctx) {
  const list = document.getElementById("runs-list");
  const button = document.getElementById("reflect-now");
  const picker = document.getElementById("runs-agent");

  button.addEventListener("click", reflectNow);

  function chosenAgent() {
    return ctx.agentFilter() || picker.value;
  }

  async function refresh() {
    const filter = ctx.agentFilter();
    picker.hidden = Boolean(filter) || ctx.agentIds().length < 2;
    if (!picker.options.length || picker.dataset.agents !== ctx.agentIds().join(",")) {
      replace(picker, ctx.agentIds().map((id) => h("option", { value: id }, ctx.agentName(id))));
      picker.dataset.agents = ctx.agentIds().join(",");
    }
    button.disabled = !chosenAgent();
    replace(list, h("p", { class: "loading" }, "Loading runs…"));
    let body;
    try {
      ({ body } = await api(`/jobs?limit=20${filter ? `&agent_id=${filter}` : ""}`));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        button.disabled = true;
        return replace(list, h("p", { class: "empty-line" }, "This server does not run reflection jobs yet."));
      }
      throw error;
    }
    const jobs = body.items || [];
    if (!jobs.length) return replace(list, h("p", { class: "empty-line" }, "No runs yet. Reflect now to distil recent episodes into beliefs."));
    replace(list, jobs.map((job) => jobView(job, ctx)));
  }

  async function reflectNow() {
    const agentId = chosenAgent();
    if (!agentId) return;
    button.disabled = true;
    button.textContent = "Reflecting…";
    try {
      let { body: job } = await api("/jobs", {
        method: "POST",
        body: { workflow_id: "agent-reflection", input_data: { agent_id: agentId } },
      });
      await refresh();
      for (let i = 0; i < POLL_LIMIT && ["queued", "running"].includes(job.status); i++) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        ({ body: job } = await api(`/jobs/${encodeURIComponent(job.id)}`));
      }
      await refresh();
      const accepted = (job.output_data?.results || []).filter((r) => r.accepted).length;
      if (job.status === "succeeded") {
        toast(accepted ? `Reflection done: ${accepted} new to review` : "Reflection done: nothing new to learn", accepted ? { action: "Review", onAction: () => ctx.go("review") } : {});
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
