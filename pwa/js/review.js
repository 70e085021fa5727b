// The review view: wires the pile, the card stack, swipes and keys, card modes and the decision queue.
import { cardView } from "./card.js";
import { createDecisions } from "./decisions.js";
import { attachSwipe, fitTouch } from "./gestures.js";
import { reviewKeys } from "./keys.js";
import { createModes } from "./modes.js";
import { createPile } from "./pile.js";
import { createStack } from "./stack.js";

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
  // Shared by the parts below; each changes only what its own functions are about.
  const state = {
    all: [], // every pending belief the server listed (every agent), newest first
    queue: [], // the agent filter's share of it, top card first
    cursor: null,
    loaded: false,
    mode: null, // "edit", "keep" (choosing what a Keep retires) or "reason" on the top card
    focusNext: null, // after a decision, focus goes to this action on the next card
    notices: new Map(), // belief id -> why its card is back (a 412, a failure, a deep link)
    stats: { keep: 0, forget: 0, edit: 0 },
  };
  const mine = (item) => !ctx.agentFilter() || item.agent_id === ctx.agentFilter();

  // Cards are built (and more pages loaded) only after everything below exists.
  const view = createStack(state, {
    ctx,
    mine,
    cardFor,
    more: () => pile.loadMore().catch(pile.failed),
    els: { stack, progress, meter, empty, emptyStats },
  });
  const { render, topCard } = view;
  const pile = createPile(state, { ctx, mine, render, failure, progress });
  const decisions = createDecisions(state, { ctx, stack: view, pile });
  const { decide, undo, undoDecided } = decisions;
  const modes = createModes(state, { render, topCard, decide });
  const onKey = reviewKeys(state, { topCard, modes, undo });

  function cardFor(item) {
    const { startEdit, cancelEdit, saveEdit, setMode } = modes;
    const on = { decide, startEdit, cancelEdit, saveEdit, setMode, undoDecided, dismiss: pile.dismiss };
    const card = cardView(item, { ctx, mode: state.mode, notice: state.notices.get(item.id), on });
    if (item.status === "pending" && state.mode !== "edit") attachSwipe(card, modes.swiped);
    fitTouch(card);
    return card;
  }

  const { refresh, open, removeDecided } = pile;
  return { refresh, open, onKey, removeDecided };
}
