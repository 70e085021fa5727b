// Memory (active beliefs: search, decay, use) and History (every decision, audit trails).
import { api, db, decisionPath, OfflineError, pages } from "./api.js";
import { AUDIT_WORDS, auditDetails } from "./audit.js";
import { ago, button, conflictIds, h, percent, replace, toast, when } from "./dom.js";

const DAY_MS = 86400000;

/** confidence × exp(−λ · age in days), anchored at the later of created and updated. */
export function decayed(item, lambdaPerDay, now = Date.now()) {
  const anchor = Math.max(Date.parse(item.created_at), Date.parse(item.updated_at));
  return lambdaPerDay > 0
    ? item.confidence * Math.exp((-lambdaPerDay * Math.max(0, now - anchor)) / DAY_MS)
    : item.confidence;
}

export function forgottenWords(reason) {
  if (!reason) return "No reason given";
  if (reason.startsWith("superseded_by:")) return "Replaced by a newer belief";
  if (reason.startsWith("forgotten_by:")) return "Removed by an approved forget request";
  if (reason.startsWith("applied:forget:")) return "Applied: it asked to forget another belief";
  return `“${reason}”`;
}

const decideHere = (item, action, body) =>
  api(decisionPath(item.id, action), {
    method: "POST",
    body,
    headers: { "If-Match": `"${item.version}"`, "Idempotency-Key": db.randomKey() },
  });

function explain(error) {
  if (error instanceof OfflineError) return "You are offline; try again when connected.";
  return error.status === 412 ? "It changed since you loaded it; the list is reloaded." : error.message;
}

const agentQuery = (ctx) => (ctx.agentFilter() ? `&agent_id=${ctx.agentFilter()}` : "");

/** Run a decision from a list; on failure say why (and reload on a 412). */
async function attempt(work, refresh) {
  try {
    return await work();
  } catch (error) {
    toast(explain(error), { tone: "warn" });
    if (error.status === 412) refresh();
    return null;
  }
}

function itemView(item, ctx, meta, actions, trail) {
  return h(
    `article.memory-item.status-${item.status}`,
    { "data-belief-id": item.id },
    item.editing || h("p.belief-text", item.content),
    h("p.memory-meta", h("span.chip.chip-agent", ctx.agentName(item.agent_id)), meta),
    h("div.row-actions", actions),
    trail && auditDetails(item.id, trail),
  );
}

export function createMemory(ctx) {
  const [list, search, count] = ["memory-list", "memory-search", "memory-count"].map((id) =>
    document.getElementById(id),
  );
  let items = [];
  let editingId = null;
  search.addEventListener("input", () => render());

  async function refresh() {
    replace(list, h("p.hint", "Loading memory…"));
    items = await pages(`/beliefs?status=active&limit=200${agentQuery(ctx)}`);
    render();
  }

  function render() {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = items.filter((item) => words.every((w) => item.content.toLowerCase().includes(w)));
    const total = `${items.length} active belief${items.length === 1 ? "" : "s"}`;
    count.textContent = words.length ? `${shown.length} of ${total}` : total;
    if (!shown.length)
      return replace(
        list,
        h("p.hint", items.length ? "No belief matches." : "No active memory yet. Kept beliefs show up here."),
      );
    replace(
      list,
      shown.map((item) => row(item, rivals(item))),
    );
  }

  /** The active beliefs this one contradicts, or that contradict it (both were kept). */
  function rivals(item) {
    return items.filter(
      (other) => other.id !== item.id && (conflictIds(item).includes(other.id) || conflictIds(other).includes(item.id)),
    );
  }

  function row(item, against) {
    const lambda = ctx.agentLambda(item.agent_id);
    const editing = editingId === item.id;
    const area =
      editing &&
      h("textarea.edit-text", {
        "aria-label": "Belief, in your words",
        maxlength: "2000",
        rows: "3",
        value: item.content,
      });
    const meta = [
      item.provenance === "owner" && h("span.chip.chip-owner", "your words"),
      h(
        "span",
        { title: `Confidence decays by ${lambda} a day since it was kept or last changed` },
        `${percent(item.confidence)} sure when kept, ${percent(decayed(item, lambda))} now as it ages`,
      ),
      h(
        "span",
        item.last_injected_at ? `used ${item.injection_count}× · last ${ago(item.last_injected_at)}` : "not used yet",
      ),
      h("span", `kept ${ago(item.decided_at || item.updated_at)}`),
    ];
    const actions = editing
      ? [
          button("act.small", () => edit(null), "Cancel"),
          button("act.small.act-keep", () => save(item, area.value), "Save"),
        ]
      : [
          button("act.small.act-edit", () => edit(item.id), "Edit"),
          button("act.small.act-forget", () => forget(item), "Forget"),
        ];
    const view = itemView({ ...item, editing: area }, ctx, meta, actions, { label: "History" });
    if (against.length) {
      view.classList.add("conflicted");
      view.insertBefore(
        h(
          "ul.contradictions",
          against.map((other) => h("li", h("b", "Contradicts: "), h("q", other.content))),
        ),
        view.children[1],
      );
    }
    return view;
  }

  function edit(id) {
    editingId = id;
    render();
  }

  async function save(item, text) {
    const content = text.trim();
    if (!content) return toast("A belief needs some words.", { tone: "warn" });
    const done = await attempt(() => decideHere(item, "edit", { content }), refresh);
    if (!done) return;
    items = items.map((other) => (other.id === item.id ? done.body : other));
    edit(null);
    toast("Saved in your words");
  }

  async function forget(item) {
    const done = await attempt(() => decideHere(item, "forget", {}), refresh);
    if (!done) return;
    items = items.filter((other) => other.id !== item.id);
    render();
    const undo = async () => {
      if (!(await attempt(() => decideHere(done.body, "reopen"), refresh))) return;
      toast("Back in the review queue");
      ctx.reviewChanged();
    };
    toast("Forgotten", { action: "Undo", tone: "forget", onAction: undo });
  }

  return { refresh };
}

const eventWords = (event) =>
  event.action === "forgotten"
    ? forgottenWords(event.detail)
    : event.action === "superseded" && event.detail
      ? "by a newer belief"
      : "";

export function createHistory(ctx) {
  const [list, form, result] = ["history-list", "audit-lookup", "audit-result"].map((id) =>
    document.getElementById(id),
  );

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const id = form.elements.belief.value.trim();
    try {
      const { body } = await api(`/beliefs/${encodeURIComponent(id)}`);
      replace(result, itemView(body, ctx, h("span", `${body.status}, version ${body.version}`), [], { open: true }));
    } catch (error) {
      replace(result, h("p.hint", error.status === 404 ? "No belief with that id is visible to you." : explain(error)));
    }
  });

  /** Every decision, newest first: what, on which belief, by which device or key, when. */
  async function refresh() {
    replace(list, h("p.hint", "Loading…"));
    const events = await pages(`/audit?limit=100${agentQuery(ctx)}`, 300);
    if (!events.length) return replace(list, h("p.hint", "No decisions yet."));
    const latest = new Set();
    const row = (event) => {
      const newest = !latest.has(event.belief_id);
      latest.add(event.belief_id);
      const item = {
        id: event.belief_id,
        agent_id: event.agent_id,
        content: event.content,
        status: event.after_status,
        version: event.version,
      };
      const meta = [
        h(`span.chip.audit-${event.action}`, AUDIT_WORDS[event.action] || event.action),
        eventWords(event) && h("span", eventWords(event)),
        h(
          "span",
          `by ${event.actor_label || event.actor} · `,
          h("time", { datetime: event.at, title: when(event.at) }, ago(event.at)),
        ),
      ];
      const again =
        newest && event.after_status === "forgotten" && button("act.small", () => reviewAgain(item), "Review again");
      return itemView(item, ctx, meta, [again], {});
    };
    replace(list, events.map(row));
  }

  async function reviewAgain(item) {
    if (!(await attempt(() => decideHere(item, "reopen"), refresh))) return;
    toast("Back in the review queue");
    ctx.reviewChanged();
    refresh();
  }

  return { refresh };
}
