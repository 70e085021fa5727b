// Inbox: every pending belief as a list, multi-select, batch Keep / Forget (each one audited and
// idempotent on its own; what fails is told on its row).
import { api, db, decisionPath, OfflineError, pages } from "./api.js";
import { ago, conflictIds, h, plural, reasonsOf, reasonWords, replace, toast } from "./dom.js";

const PAST = { keep: "kept", forget: "forgotten" };

export function createInbox(ctx) {
  const $ = (id) => document.getElementById(id);
  const [list, count, all, keep, forget] = ["inbox-list", "inbox-count", "inbox-all", "inbox-keep", "inbox-forget"].map(
    $,
  );
  let items = [];
  const selected = new Set();
  const problems = new Map(); // belief id -> why the last batch did not apply to it

  all.addEventListener("change", () => {
    for (const item of items) all.checked ? selected.add(item.id) : selected.delete(item.id);
    render();
  });
  keep.addEventListener("click", () => batch("keep"));
  forget.addEventListener("click", () => batch("forget"));

  async function refresh() {
    replace(list, h("p.hint", "Loading…"));
    const agent = ctx.agentFilter();
    items = await pages(`/beliefs?status=pending&limit=200${agent ? `&agent_id=${agent}` : ""}`, 1000);
    for (const id of [...selected]) if (!items.some((item) => item.id === id)) selected.delete(id);
    render();
  }

  function render() {
    count.textContent = `${plural(items.length, "belief")} to review${selected.size ? ` · ${selected.size} selected` : ""}`;
    keep.disabled = forget.disabled = !selected.size;
    all.checked = items.length > 0 && selected.size === items.length;
    all.indeterminate = selected.size > 0 && selected.size < items.length;
    if (!items.length) return replace(list, h("p.hint", "Nothing to review."));
    replace(list, items.map(row));
  }

  function row(item) {
    const id = `pick-${item.id}`;
    const box = h("input", { type: "checkbox", id, checked: selected.has(item.id) });
    box.addEventListener("change", () => {
      box.checked ? selected.add(item.id) : selected.delete(item.id);
      render();
      document.getElementById(id)?.focus();
    });
    const flags = [
      ...new Set(
        reasonsOf(item)
          .filter((reason) => reason.kind !== "changes")
          .map((reason) => reasonWords(reason).text),
      ),
    ];
    return h(
      "article.memory-item.inbox-item",
      { "data-belief-id": item.id },
      h("label.check", box, h("span.belief-text", item.content)),
      h(
        "p.memory-meta",
        h("span.chip.chip-agent", ctx.agentName(item.agent_id)),
        item.provenance === "untrusted" && h("span.chip.chip-warn", "third-party"),
        flags.map((text) => h("span.chip.chip-op", text)),
        h("span", `proposed ${ago(item.created_at)}`),
        h("a", { href: `/?belief=${item.id}` }, "Open card"),
      ),
      problems.has(item.id) && h("p.notice", { role: "alert" }, problems.get(item.id)),
    );
  }

  /** Why a batch Keep must not touch this belief (the card offers the right choice instead). */
  function refusal(item, action) {
    if (action !== "keep") return null;
    if (item.provenance === "untrusted") return "Not kept: learned from third-party content. Edit it on its card.";
    if (conflictIds(item).length) return "Not kept: it conflicts with a belief in memory. Choose on its card.";
    return null;
  }

  async function decideOne(item, action) {
    const idem = db.randomKey();
    const body = action === "forget" ? {} : undefined;
    try {
      await api(decisionPath(item.id, action), {
        method: "POST",
        body,
        headers: { "If-Match": `"${item.version}"`, "Idempotency-Key": idem },
      });
      return "done";
    } catch (error) {
      if (!(error instanceof OfflineError))
        return error.status === 412 ? "It changed since the list loaded; reload and decide again." : error.detail;
      await db.enqueue({
        id: idem,
        kind: "decision",
        belief_id: item.id,
        content: item.content,
        action,
        version: item.version,
        body,
      });
      return "queued";
    }
  }

  async function batch(action) {
    const chosen = items.filter((item) => selected.has(item.id));
    keep.disabled = forget.disabled = true;
    problems.clear();
    let done = 0;
    let queued = 0;
    for (const item of chosen) {
      const refused = refusal(item, action);
      const outcome = refused || (await decideOne(item, action));
      if (outcome === "done" || outcome === "queued") {
        outcome === "done" ? done++ : queued++;
        selected.delete(item.id);
        items = items.filter((other) => other.id !== item.id);
      } else problems.set(item.id, outcome);
    }
    const failed = problems.size;
    const parts = [
      done && `${done} ${PAST[action]}`,
      queued && `${queued} waiting to sync`,
      failed && `${failed} not ${PAST[action]} (see the list)`,
    ];
    toast(parts.filter(Boolean).join(" · ") || "Nothing selected", { tone: failed ? "warn" : action, timeout: 8000 });
    if (queued) ctx.outboxChanged({ sync: true });
    render();
    ctx.reviewChanged();
  }

  return { refresh };
}
