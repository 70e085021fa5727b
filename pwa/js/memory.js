// Memory (active beliefs: search, decay, use) and History (forgotten beliefs, audit trails).
import { api, ApiError, db, decisionPath, OfflineError, pages } from "./api.js";
import { ago, h, percent, replace, toast, when } from "./dom.js";

const DAY_MS = 86400000;
const AUDIT_WORDS = {
  proposed: "Proposed",
  kept: "Kept",
  forgotten: "Forgotten",
  edited: "Edited",
  reopened: "Reopened for review",
  superseded: "Replaced",
  restored: "Restored",
};

/** confidence × exp(−λ · age in days), anchored at the later of created and updated. */
export function decayed(item, lambdaPerDay, now = Date.now()) {
  const anchor = Math.max(Date.parse(item.created_at), Date.parse(item.updated_at));
  const ageDays = Math.max(0, (now - anchor) / DAY_MS);
  return lambdaPerDay > 0 ? item.confidence * Math.exp(-lambdaPerDay * ageDays) : item.confidence;
}

export function forgottenWords(reason) {
  if (!reason) return "No reason given";
  if (reason.startsWith("superseded_by:")) return "Replaced by a newer belief";
  if (reason.startsWith("forgotten_by:")) return "Removed by an approved forget request";
  if (reason.startsWith("applied:forget:")) return "Applied: it asked to forget another belief";
  return `“${reason}”`;
}

/** A <details> showing a belief's audit trail, loaded when opened. */
export function auditDetails(beliefId, { open = false, label = "Audit trail" } = {}) {
  const list = h("ol", { class: "audit" });
  const details = h("details", { class: "audit-details" }, h("summary", {}, label), list);
  let loaded = false;
  const load = async () => {
    if (loaded) return;
    loaded = true;
    replace(list, h("li", { class: "loading" }, "Loading…"));
    try {
      const { body } = await api(`/beliefs/${encodeURIComponent(beliefId)}/audit`);
      replace(
        list,
        body.items.map((row) =>
          h(
            "li",
            { class: `audit-row audit-${row.action}` },
            h("span", { class: "audit-action" }, AUDIT_WORDS[row.action] || row.action),
            h("span", { class: "audit-who" }, ` by ${row.actor}`),
            h("time", { datetime: row.at, title: when(row.at) }, ` · ${ago(row.at)}`),
            h(
              "span",
              { class: "audit-detail" },
              ` · ${row.before_status || "new"} → ${row.after_status}, v${row.version}`,
              row.detail && !["add"].includes(row.detail) ? ` · ${row.detail}` : "",
            ),
          ),
        ),
      );
    } catch (error) {
      loaded = false;
      replace(list, h("li", { class: "loading" }, `Could not load: ${error.message}`));
    }
  };
  details.addEventListener("toggle", () => details.open && load());
  if (open) {
    details.open = true;
    load();
  }
  return details;
}

async function decideHere(item, action, body) {
  return api(decisionPath(item.id, action), {
    method: "POST",
    body,
    headers: { "If-Match": `"${item.version}"`, "Idempotency-Key": db.randomKey() },
  });
}

function explain(error) {
  if (error instanceof OfflineError) return "You are offline; try again when connected.";
  if (error instanceof ApiError && error.status === 412) return "It changed since you loaded it; the list is reloaded.";
  return error.message;
}

export function createMemory(ctx) {
  const list = document.getElementById("memory-list");
  const search = document.getElementById("memory-search");
  const count = document.getElementById("memory-count");
  let items = [];
  let editingId = null;

  search.addEventListener("input", () => render());

  async function refresh() {
    const agent = ctx.agentFilter();
    replace(list, h("p", { class: "loading" }, "Loading memory…"));
    items = await pages(`/beliefs?status=active&limit=200${agent ? `&agent_id=${agent}` : ""}`);
    render();
  }

  function render() {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = items.filter((item) => words.every((w) => item.content.toLowerCase().includes(w)));
    count.textContent = words.length
      ? `${shown.length} of ${items.length} active beliefs`
      : `${items.length} active belief${items.length === 1 ? "" : "s"}`;
    if (!shown.length) {
      return replace(list, h("p", { class: "empty-line" }, items.length ? "No belief matches." : "No active memory yet. Kept beliefs show up here."));
    }
    replace(list, shown.map(row));
  }

  function row(item) {
    const lambda = ctx.agentLambda(item.agent_id);
    const now = decayed(item, lambda);
    const editing = editingId === item.id;
    const area = editing
      ? h("textarea", { class: "edit-text", "aria-label": "Belief, in your words", maxlength: "2000", rows: "3", value: item.content })
      : null;
    return h(
      "article",
      { class: "memory-item", "data-belief-id": item.id },
      editing ? area : h("p", { class: "belief-text" }, item.content),
      h(
        "p",
        { class: "memory-meta" },
        h("span", { class: "chip chip-agent" }, ctx.agentName(item.agent_id)),
        item.provenance === "owner" ? h("span", { class: "chip chip-owner" }, "your words") : null,
        h("span", { title: `Confidence ${percent(item.confidence)}, decaying ${lambda}/day` }, `${percent(item.confidence)} → ${percent(now)} now`),
        h("span", {}, item.last_injected_at ? `used ${item.injection_count}× · last ${ago(item.last_injected_at)}` : "not used yet"),
        h("span", {}, `kept ${ago(item.decided_at || item.updated_at)}`),
      ),
      h(
        "div",
        { class: "row-actions" },
        editing
          ? [
              h("button", { type: "button", class: "act small", onclick: () => { editingId = null; render(); } }, "Cancel"),
              h("button", { type: "button", class: "act small act-keep", onclick: () => save(item, area.value) }, "Save"),
            ]
          : [
              h("button", { type: "button", class: "act small act-edit", onclick: () => { editingId = item.id; render(); } }, "Edit"),
              h("button", { type: "button", class: "act small act-forget", onclick: () => forget(item) }, "Forget"),
            ],
      ),
      auditDetails(item.id, { label: "History" }),
    );
  }

  async function save(item, text) {
    const content = text.trim();
    if (!content) return toast("A belief needs some words.", { tone: "warn" });
    try {
      const { body } = await decideHere(item, "edit", { content });
      items = items.map((other) => (other.id === item.id ? body : other));
      editingId = null;
      render();
      toast("Saved in your words");
    } catch (error) {
      toast(explain(error), { tone: "warn" });
      if (error.status === 412) refresh();
    }
  }

  async function forget(item) {
    try {
      const { body } = await decideHere(item, "forget", {});
      items = items.filter((other) => other.id !== item.id);
      render();
      toast("Forgotten", {
        action: "Undo",
        tone: "forget",
        onAction: async () => {
          try {
            await decideHere(body, "reopen");
            toast("Back in the review queue");
            ctx.reviewChanged();
          } catch (error) {
            toast(explain(error), { tone: "warn" });
          }
        },
      });
    } catch (error) {
      toast(explain(error), { tone: "warn" });
      if (error.status === 412) refresh();
    }
  }

  return { refresh };
}

export function createHistory(ctx) {
  const list = document.getElementById("history-list");
  const form = document.getElementById("audit-lookup");
  const result = document.getElementById("audit-result");

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const id = form.elements.belief.value.trim();
    if (id) showAudit(id);
  });

  async function showAudit(id) {
    replace(result, h("p", { class: "loading" }, "Loading…"));
    try {
      const { body } = await api(`/beliefs/${encodeURIComponent(id)}`);
      replace(
        result,
        h(
          "article",
          { class: "memory-item" },
          h("p", { class: "belief-text" }, body.content),
          h("p", { class: "memory-meta" }, h("span", { class: "chip chip-agent" }, ctx.agentName(body.agent_id)), h("span", {}, `${body.status}, version ${body.version}`)),
          auditDetails(id, { open: true }),
        ),
      );
    } catch (error) {
      replace(result, h("p", { class: "empty-line" }, error.status === 404 ? "No belief with that id is visible to you." : explain(error)));
    }
  }

  async function refresh() {
    const agent = ctx.agentFilter();
    replace(list, h("p", { class: "loading" }, "Loading…"));
    const items = await pages(`/beliefs?status=forgotten&limit=200${agent ? `&agent_id=${agent}` : ""}`, 400);
    if (!items.length) return replace(list, h("p", { class: "empty-line" }, "Nothing forgotten yet."));
    replace(
      list,
      items.map((item) =>
        h(
          "article",
          { class: "memory-item forgotten", "data-belief-id": item.id },
          h("p", { class: "belief-text" }, item.content),
          h(
            "p",
            { class: "memory-meta" },
            h("span", { class: "chip chip-agent" }, ctx.agentName(item.agent_id)),
            h("span", {}, forgottenWords(item.forgotten_reason)),
            h("span", {}, `forgotten ${ago(item.decided_at || item.updated_at)}${item.decided_by ? ` by ${item.decided_by}` : ""}`),
          ),
          h(
            "div",
            { class: "row-actions" },
            h("button", { type: "button", class: "act small", onclick: () => reviewAgain(item) }, "Review again"),
          ),
          auditDetails(item.id),
        ),
      ),
    );
  }

  async function reviewAgain(item) {
    try {
      await decideHere(item, "reopen");
      toast("Back in the review queue");
      ctx.reviewChanged();
      refresh();
    } catch (error) {
      toast(explain(error), { tone: "warn" });
      if (error.status === 412) refresh();
    }
  }

  return { refresh, showAudit };
}
