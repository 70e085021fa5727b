// The review view: the card stack and its counts, decisions, undo and the offline queue.
import { api, db, decisionPath, OfflineError } from "./api.js";
import { ago, conflictIds, h, plural, reducedMotion, shortcutsOn, toast } from "./dom.js";
import { autosize, cardView, UNTRUSTED_KEEP } from "./card.js";
import { forgetCachedBelief } from "./evidence.js";
import { attachSwipe, fitTouch } from "./gestures.js";

const DEPTH = 3;
const DONE = { keep: "Kept", forget: "Forgotten", edit: "Saved in your words", reopen: "Back for review" };
const KEYS = { ArrowRight: "keep", k: "keep", ArrowLeft: "forget", f: "forget", ArrowUp: "edit", e: "edit", u: "undo" };
const FLY = {
  keep: "translate(140%, 40px) rotate(24deg)",
  forget: "translate(-140%, 40px) rotate(-24deg)",
  edit: "translate(0, -120%) scale(0.96)",
};
const PENDING_KEY = "pending-list";

export function createReview(ctx) {
  const $ = (id) => document.getElementById(id);
  const [stack, progress, meter, empty, emptyStats, failure] = [
    "stack",
    "review-progress",
    "review-meter",
    "review-empty",
    "review-stats",
    "review-error",
  ].map($);
  let all = []; // every pending belief the server listed (every agent), newest first
  let queue = []; // the agent filter's share of it, top card first
  let cursor = null;
  let loaded = false;
  let mode = null; // "edit", "keep" (choosing what a Keep retires) or "reason" on the top card
  let top = null; // {key, el} of the rendered top card; the cards behind it are empty ghosts
  let arriving = false; // the next top card rises into place after one flew out
  let focusNext = null; // after a decision, focus goes to this action on the next card
  const notices = new Map(); // belief id -> why its card is back (a 412, a failure, a deep link)
  const undoStack = [];
  const stats = { keep: 0, forget: 0, edit: 0 };

  // --- loading: the whole pending list (the badge counts every agent), kept for outages

  const query = (after) => `/beliefs?status=pending&limit=100${after ? `&cursor=${after}` : ""}`;
  const mine = (item) => !ctx.agentFilter() || item.agent_id === ctx.agentFilter();

  async function refresh({ pinned } = {}) {
    let listed;
    try {
      ({ body: listed } = await api(query()));
      await db.set(PENDING_KEY, { items: listed.items, next_cursor: listed.next_cursor, at: new Date().toISOString() });
      failure.hidden = true;
    } catch (error) {
      const saved = await db.get(PENDING_KEY).catch(() => null);
      if (!saved || !(error instanceof OfflineError)) return failed(error);
      listed = saved;
      showFailure(`${error.message} Showing the cards as they were ${ago(saved.at)}; decisions wait on this device.`);
      ctx.failed(error);
    }
    const queued = new Set((await db.outbox()).map((entry) => entry.belief_id));
    all = listed.items.filter((item) => !queued.has(item.id));
    cursor = listed.next_cursor;
    // The card on top stays there (as the server has it now); the rest follow the server.
    const fresh = all.filter(mine);
    const current = queue[0];
    const kept =
      current && (fresh.find((item) => item.id === current.id) || ((mode || notices.has(current.id)) && current));
    const first = pinned || kept;
    queue = first ? [first, ...fresh.filter((item) => item.id !== first.id)] : fresh;
    loaded = true;
    render();
  }

  function failed(error) {
    if (error.status === 401) return; // re-pairing takes over
    if (!loaded) progress.textContent = "Could not load the cards";
    showFailure(error.message);
    ctx.failed(error);
  }

  function showFailure(message) {
    failure.hidden = false;
    failure.querySelector("p").textContent = message;
  }
  failure.querySelector("button").addEventListener("click", () => refresh().catch(failed));

  async function loadMore() {
    const { body } = await api(query(cursor));
    const known = new Set(all.map((item) => item.id));
    const more = body.items.filter((item) => !known.has(item.id));
    all.push(...more);
    queue.push(...more.filter(mine));
    cursor = body.next_cursor;
    render();
  }

  /** Put one belief's card on top (a deep link or a notification tap). */
  async function open(id) {
    let item = null;
    try {
      ({ body: item } = await api(`/beliefs/${encodeURIComponent(id)}`));
    } catch (error) {
      toast(error.status === 404 ? "That belief does not exist, or is not yours to see." : error.message, {
        tone: "warn",
      });
    }
    if (item && item.status !== "pending") {
      const word =
        { active: "kept", forgotten: "forgotten", superseded: "retired by a newer belief" }[item.status] || item.status;
      notices.set(item.id, `Already ${word} ${ago(item.decided_at)}. Undo puts it back for review.`);
    }
    mode = null;
    return refresh({ pinned: item });
  }

  // --- rendering

  function render() {
    const item = queue[0];
    const key = item && [item.id, item.version, item.status, notices.get(item.id), mode, shortcutsOn()].join("|");
    if (top && top.key !== key) {
      top.el.remove();
      top = null;
    }
    if (item && !top) {
      top = { key, el: cardFor(item) };
      if (arriving) top.el.classList.add("arrive");
      stack.insertBefore(top.el, stack.querySelector(".leaving")); // under a card still flying
      arriving = false;
      if (mode === "edit") {
        const area = top.el.querySelector("textarea");
        area.focus();
        area.setSelectionRange(area.value.length, area.value.length);
        autosize(area);
      } else if (mode === "keep") top.el.querySelector(".choices .act").focus();
    }
    if (focusNext) {
      const buttons = [...(top?.el.querySelectorAll(".card-actions .act:not(:disabled)") || [])];
      (buttons.find((b) => b.classList.contains(`act-${focusNext}`)) || buttons[0] || empty.querySelector("h2")).focus({
        preventScroll: true,
      });
      focusNext = null;
    }
    const ghosts = [...stack.querySelectorAll(".ghost")];
    const wanted = Math.max(0, Math.min(queue.length, DEPTH) - 1);
    for (let i = ghosts.length; i < wanted; i++) stack.prepend(h("div.card.ghost", { "aria-hidden": "true" }));
    for (const ghost of ghosts.slice(wanted)) ghost.remove();
    stack.querySelectorAll(".ghost").forEach((ghost, i, all) => {
      ghost.className = `card ghost depth-${all.length - i}`;
    });
    renderCounts();
    empty.hidden = !loaded || queue.length > 0;
    if (loaded && !queue.length && cursor) loadMore().catch(failed);
    if (item && !performance.getEntriesByName("credence:first-card").length) performance.mark("credence:first-card");
  }

  /** Counts from what the server answered: "done" grows when a decision is confirmed (or queued). */
  function renderCounts() {
    const pending = queue.filter((entry) => entry.status === "pending").length;
    const others = all.filter((entry) => !mine(entry)).length;
    const cleared = stats.keep + stats.forget + stats.edit;
    const more = cursor ? "+" : "";
    const parts = [pending ? `${pending}${more} to review` : "Nothing to review"];
    if (others) parts.push(`${others}${more} waiting for other agents`);
    if (cleared) parts.push(`${cleared} done`);
    if (loaded) progress.textContent = parts.join(" · ");
    meter.hidden = !cleared;
    meter.firstElementChild.style.width = `${(100 * cleared) / (cleared + pending || 1)}%`;
    const said = [
      [stats.keep, "kept"],
      [stats.edit, "rewritten in your words"],
      [stats.forget, "forgotten"],
    ]
      .filter(([n]) => n)
      .map(([n, word]) => `${n} ${word}`);
    emptyStats.textContent = said.length
      ? `You cleared the pile: ${said.join(", ")}. New lessons arrive as notifications.`
      : "Nothing waits for you. New lessons arrive as notifications, or run a reflection from Runs.";
    if (others && !pending)
      emptyStats.textContent += ` ${plural(others, "belief")} of other agents wait: choose “All agents”.`;
    ctx.pendingChanged(pending + others, Boolean(cursor));
  }

  function cardFor(item) {
    const on = { decide, startEdit, cancelEdit, saveEdit, setMode, undoDecided, dismiss };
    const card = cardView(item, { ctx, mode, notice: notices.get(item.id), on });
    if (item.status === "pending" && mode !== "edit") attachSwipe(card, swiped);
    fitTouch(card);
    return card;
  }

  function swiped(action) {
    const item = queue[0];
    if (action === "edit") return startEdit();
    if (item?.status !== "pending") return;
    if (action === "keep" && item.provenance === "untrusted") return toast(UNTRUSTED_KEEP, { tone: "warn" });
    if (action === "keep" && conflictIds(item).length) return setMode("keep");
    decide(action);
  }

  function setMode(next) {
    mode = next;
    render();
  }

  function flyOut(action) {
    if (!top) return;
    const { el } = top;
    top = null;
    arriving = true;
    el.inert = true;
    if (reducedMotion()) return el.remove();
    el.classList.remove("dragging");
    el.classList.add("leaving");
    el.style.transform = FLY[action];
    setTimeout(() => el.remove(), 420);
  }

  // --- decisions

  const post = (item, action, idem, body) =>
    api(decisionPath(item.id, action), {
      method: "POST",
      body,
      headers: { "If-Match": `"${item.version}"`, "Idempotency-Key": idem },
    });

  const enqueue = (item, action, idem, body) =>
    db.enqueue({
      id: idem,
      kind: "decision",
      belief_id: item.id,
      content: item.content,
      action,
      version: item.version,
      body,
    });

  async function decide(action, extra = {}) {
    const item = queue[0];
    if (item?.status !== "pending") return;
    if (action === "keep" && item.provenance === "untrusted") return toast(UNTRUSTED_KEEP, { tone: "warn" });
    let body;
    if (action === "edit") body = { content: extra.content };
    if (action === "forget") body = extra.reason ? { reason: extra.reason } : {};
    // Keep and retire the old one: the contradicted beliefs become superseded in the same step.
    if (extra.retire) body = { ...body, retire: conflictIds(item) };
    flyOut(action);
    queue.shift();
    all = all.filter((other) => other.id !== item.id);
    notices.delete(item.id);
    mode = null;
    focusNext = action;
    render();
    const idem = db.randomKey();
    // On the undo stack at once: an Undo pressed while the decision is in flight waits for it.
    let settle;
    const entry = { action, before: item, ready: new Promise((resolve) => (settle = resolve)) };
    undoStack.push(entry);
    try {
      const { body: after } = await post(item, action, idem, body);
      forgetCachedBelief(item.id);
      for (const id of body?.retire || []) forgetCachedBelief(id);
      stats[action] += 1;
      entry.after = after;
      toast(DONE[action], { action: "Undo", onAction: undo, tone: action });
    } catch (error) {
      if (!(error instanceof OfflineError) && undoStack.includes(entry)) undoStack.splice(undoStack.indexOf(entry), 1);
      if (error instanceof OfflineError) {
        await enqueue(item, action, idem, body);
        stats[action] += 1;
        entry.queued = idem;
        ctx.outboxChanged({ sync: true });
        const back = error.offline ? "you are back online" : "the server answers again";
        toast(`${DONE[action]} on this device: it syncs when ${back}`, {
          action: "Undo",
          onAction: undo,
          tone: "offline",
        });
      } else if (error.status === 412) await conflict(item);
      else if (error.status === 404) toast("This belief is gone, or no longer yours to review.", { tone: "warn" });
      else if (error.status === 409 && body?.retire)
        putBack(item, `Nothing was decided: ${error.detail}. Keep both, or decide again.`);
      else if (error.status !== 401) putBack(item, error.detail);
    } finally {
      settle();
    }
    renderCounts();
  }

  async function conflict(stale) {
    forgetCachedBelief(stale.id);
    let fresh;
    try {
      ({ body: fresh } = await api(`/beliefs/${stale.id}`));
    } catch (error) {
      return putBack(stale, `It changed since you loaded it, and reloading failed: ${error.message}`);
    }
    if (fresh.status === "pending")
      return putBack(fresh, "It changed since you loaded it. This is the current version: decide again.");
    const word = fresh.status === "active" ? "kept" : fresh.status;
    toast(`It was already ${word} elsewhere (${ago(fresh.decided_at)}). Nothing more to do.`, {
      tone: "warn",
      timeout: 9000,
    });
  }

  function putBack(item, notice) {
    queue = [item, ...queue.filter((other) => other.id !== item.id)];
    if (item.status === "pending" && !all.some((other) => other.id === item.id)) all.unshift(item);
    if (notice) notices.set(item.id, notice);
    focusNext = "keep";
    render();
  }

  async function undo() {
    const last = undoStack.pop();
    if (!last) return toast("Nothing to undo");
    await last.ready;
    if (!last.after && !last.queued) return toast("Nothing to undo: that decision did not go through");
    if (last.queued) {
      if ((await db.outbox()).some((entry) => entry.id === last.queued)) {
        await db.dequeue(last.queued);
        stats[last.action] -= 1;
        ctx.outboxChanged();
        putBack(last.before);
        return toast("Undone");
      }
      try {
        // It synced meanwhile: undo it on the server like any other decision.
        ({ body: last.after } = await api(`/beliefs/${last.before.id}`));
      } catch (error) {
        undoStack.push(last);
        return toast(`Undo needs the server: ${error.message}`, { tone: "warn" });
      }
    }
    const outcome = await reopen(last.after);
    if (outcome === "done") stats[last.action] -= 1;
    if (outcome === "failed") undoStack.push(last);
    renderCounts();
  }

  /** Reopen a decided belief; resolves to "done", "stale" (it changed since) or "failed". */
  async function reopen(after) {
    const idem = db.randomKey();
    notices.delete(after.id);
    try {
      const { body } = await post(after, "reopen", idem);
      forgetCachedBelief(after.id);
      putBack(body);
      toast(DONE.reopen);
      return "done";
    } catch (error) {
      if (error instanceof OfflineError) {
        await enqueue(after, "reopen", idem);
        ctx.outboxChanged({ sync: true });
        putBack({ ...after, status: "pending", version: after.version + 1 });
        toast("Undone on this device: it syncs when you are back online", { tone: "offline" });
        return "done";
      }
      const stale = error.status === 412;
      toast(
        stale
          ? "It changed since your decision, so undo stopped. Find it in History."
          : `Could not undo: ${error.detail}`,
        { tone: "warn", timeout: 9000 },
      );
      return stale ? "stale" : "failed";
    }
  }

  function undoDecided(item) {
    queue = queue.filter((other) => other.id !== item.id);
    reopen(item);
  }

  function dismiss(item) {
    notices.delete(item.id);
    queue = queue.filter((other) => other.id !== item.id);
    render();
  }

  function startEdit() {
    if (queue[0]?.status === "pending") setMode("edit");
  }

  function cancelEdit() {
    setMode(null);
    top?.el.querySelector(".act-edit")?.focus();
  }

  function saveEdit({ retire = false } = {}) {
    const area = top?.el.querySelector("textarea");
    const content = area ? area.value.trim() : "";
    if (content) return decide("edit", { content, retire });
    toast("A belief needs some words. Use Forget to drop it.", { tone: "warn" });
    area?.focus();
  }

  // --- keyboard

  function onKey(event) {
    if (mode === "edit" || mode === "keep") {
      if (event.key === "Escape") mode === "edit" ? cancelEdit() : setMode(null);
      else if (mode === "edit" && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        // With a conflict the reviewer still chooses: focus goes to "Save and retire the old one".
        if (conflictIds(queue[0]).length) top.el.querySelector(".choices .act-keep").focus();
        else saveEdit();
      } else return false;
      return true;
    }
    if (!shortcutsOn()) return false;
    if (event.altKey || event.metaKey || event.ctrlKey || event.target.closest?.("input, textarea, select, .card-body"))
      return false;
    // ArrowUp scrolls while the page or the card is scrolled; only at the very top does it edit.
    if (event.key === "ArrowUp" && (scrollY > 0 || top?.el.querySelector(".card-body").scrollTop > 0)) return false;
    const action = KEYS[event.key.length === 1 ? event.key.toLowerCase() : event.key];
    if (action === "undo") undo();
    else if (action === "edit") startEdit();
    else if (action) swiped(action);
    return Boolean(action);
  }

  function removeDecided(ids) {
    const stays = (item) => !ids.includes(item.id) || (mode && item === queue[0]);
    queue = queue.filter(stays);
    all = all.filter(stays);
    render();
  }

  return { refresh, open, onKey, removeDecided };
}
