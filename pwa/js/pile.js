// The review pile: the server's pending list (kept for outages), the agent filter's share, deep links.
import { api, db, OfflineError } from "./api.js";
import { ago, toast } from "./dom.js";

const PENDING_KEY = "pending-list";

/** Load and reshape ``state.all``/``state.queue``; ``render`` repaints the stack after each change. */
export function createPile(state, { ctx, mine, render, failure, progress }) {
  // --- loading: the whole pending list (the badge counts every agent), kept for outages

  const query = (after) => `/beliefs?status=pending&limit=100${after ? `&cursor=${after}` : ""}`;

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
    state.all = listed.items.filter((item) => !queued.has(item.id));
    state.cursor = listed.next_cursor;
    // The card on top stays there (as the server has it now); the rest follow the server.
    const fresh = state.all.filter(mine);
    const current = state.queue[0];
    const kept =
      current &&
      (fresh.find((item) => item.id === current.id) || ((state.mode || state.notices.has(current.id)) && current));
    const first = pinned || kept;
    state.queue = first ? [first, ...fresh.filter((item) => item.id !== first.id)] : fresh;
    state.loaded = true;
    render();
  }

  function failed(error) {
    if (error.status === 401) return; // re-pairing takes over
    if (!state.loaded) progress.textContent = "Could not load the cards";
    showFailure(error.message);
    ctx.failed(error);
  }

  function showFailure(message) {
    failure.hidden = false;
    failure.querySelector("p").textContent = message;
  }
  failure.querySelector("button").addEventListener("click", () => refresh().catch(failed));

  async function loadMore() {
    const { body } = await api(query(state.cursor));
    const known = new Set(state.all.map((item) => item.id));
    const more = body.items.filter((item) => !known.has(item.id));
    state.all.push(...more);
    state.queue.push(...more.filter(mine));
    state.cursor = body.next_cursor;
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
      state.notices.set(item.id, `Already ${word} ${ago(item.decided_at)}. Undo puts it back for review.`);
    }
    state.mode = null;
    return refresh({ pinned: item });
  }

  // --- reshaping: a card back on top, a card set aside, cards decided elsewhere

  function putBack(item, notice) {
    state.queue = [item, ...state.queue.filter((other) => other.id !== item.id)];
    if (item.status === "pending" && !state.all.some((other) => other.id === item.id)) state.all.unshift(item);
    if (notice) state.notices.set(item.id, notice);
    state.focusNext = "keep";
    render();
  }

  function dismiss(item) {
    state.notices.delete(item.id);
    state.queue = state.queue.filter((other) => other.id !== item.id);
    render();
  }

  function removeDecided(ids) {
    const stays = (item) => !ids.includes(item.id) || (state.mode && item === state.queue[0]);
    state.queue = state.queue.filter(stays);
    state.all = state.all.filter(stays);
    render();
  }

  return { refresh, failed, loadMore, open, putBack, dismiss, removeDecided };
}
