// The decision queue: post a decision, keep it on this device during an outage, undo it.
import { api, db, decisionPath, OfflineError } from "./api.js";
import { ago, conflictIds, toast } from "./dom.js";
import { UNTRUSTED_KEEP } from "./card.js";
import { forgetCachedBelief } from "./evidence.js";

const DONE = { keep: "Kept", forget: "Forgotten", edit: "Saved in your words", reopen: "Back for review" };

/** Decide on the top card of ``state.queue``; ``stack`` repaints, ``pile.putBack`` brings a card back. */
export function createDecisions(state, { ctx, stack, pile }) {
  const undoStack = [];
  const { putBack } = pile;

  const post = (item, action, idem, body) =>
    api(decisionPath(item.id, action), {
      method: "POST",
      body,
      headers: { "If-Match": `"${item.version}"`, "Idempotency-Key": idem },
    });

  // The app's sync (and the service worker) replays these once the server answers again.
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
    const item = state.queue[0];
    if (item?.status !== "pending") return;
    if (action === "keep" && item.provenance === "untrusted") return toast(UNTRUSTED_KEEP, { tone: "warn" });
    let body;
    if (action === "edit") body = { content: extra.content };
    if (action === "forget") body = extra.reason ? { reason: extra.reason } : {};
    // Keep and retire the old one: the contradicted beliefs become superseded in the same step.
    if (extra.retire) body = { ...body, retire: conflictIds(item) };
    stack.flyOut(action);
    state.queue.shift();
    state.all = state.all.filter((other) => other.id !== item.id);
    state.notices.delete(item.id);
    state.mode = null;
    state.focusNext = action;
    stack.render();
    const idem = db.randomKey();
    // On the undo stack at once: an Undo pressed while the decision is in flight waits for it.
    let settle;
    const entry = { action, before: item, ready: new Promise((resolve) => (settle = resolve)) };
    undoStack.push(entry);
    try {
      const { body: after } = await post(item, action, idem, body);
      forgetCachedBelief(item.id);
      for (const id of body?.retire || []) forgetCachedBelief(id);
      state.stats[action] += 1;
      entry.after = after;
      toast(DONE[action], { action: "Undo", onAction: undo, tone: action });
    } catch (error) {
      if (!(error instanceof OfflineError) && undoStack.includes(entry)) undoStack.splice(undoStack.indexOf(entry), 1);
      if (error instanceof OfflineError) {
        await enqueue(item, action, idem, body);
        state.stats[action] += 1;
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
    stack.renderCounts();
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

  async function undo() {
    const last = undoStack.pop();
    if (!last) return toast("Nothing to undo");
    await last.ready;
    if (!last.after && !last.queued) return toast("Nothing to undo: that decision did not go through");
    if (last.queued) {
      if ((await db.outbox()).some((entry) => entry.id === last.queued)) {
        await db.dequeue(last.queued);
        state.stats[last.action] -= 1;
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
    if (outcome === "done") state.stats[last.action] -= 1;
    if (outcome === "failed") undoStack.push(last);
    stack.renderCounts();
  }

  /** Reopen a decided belief; resolves to "done", "stale" (it changed since) or "failed". */
  async function reopen(after) {
    const idem = db.randomKey();
    state.notices.delete(after.id);
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

  /** The card of a belief decided elsewhere (a deep link): Undo puts it back for review. */
  function undoDecided(item) {
    state.queue = state.queue.filter((other) => other.id !== item.id);
    reopen(item);
  }

  return { decide, undo, undoDecided };
}
