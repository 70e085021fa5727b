// The review stack: the top card, the empty ghosts behind it, its fly-out, and the counts.
import { h, plural, reducedMotion, shortcutsOn } from "./dom.js";
import { autosize } from "./card.js";

const DEPTH = 3;
const FLY = {
  keep: "translate(140%, 40px) rotate(24deg)",
  forget: "translate(-140%, 40px) rotate(-24deg)",
  edit: "translate(0, -120%) scale(0.96)",
};

/** Paint ``state`` into the stack; ``cardFor(item)`` builds a card, ``more()`` loads the next page. */
export function createStack(state, { ctx, mine, cardFor, more, els }) {
  const { stack, progress, meter, empty, emptyStats } = els;
  let top = null; // {key, el} of the rendered top card; the cards behind it are empty ghosts
  let arriving = false; // the next top card rises into place after one flew out

  function render() {
    const item = state.queue[0];
    const key =
      item && [item.id, item.version, item.status, state.notices.get(item.id), state.mode, shortcutsOn()].join("|");
    if (top && top.key !== key) {
      top.el.remove();
      top = null;
    }
    if (item && !top) {
      top = { key, el: cardFor(item) };
      if (arriving) top.el.classList.add("arrive");
      stack.insertBefore(top.el, stack.querySelector(".leaving")); // under a card still flying
      arriving = false;
      if (state.mode === "edit") {
        const area = top.el.querySelector("textarea");
        area.focus();
        area.setSelectionRange(area.value.length, area.value.length);
        autosize(area);
      } else if (state.mode === "keep") top.el.querySelector(".choices .act").focus();
    }
    if (state.focusNext) {
      const buttons = [...(top?.el.querySelectorAll(".card-actions .act:not(:disabled)") || [])];
      (
        buttons.find((b) => b.classList.contains(`act-${state.focusNext}`)) ||
        buttons[0] ||
        empty.querySelector("h2")
      ).focus({ preventScroll: true });
      state.focusNext = null;
    }
    const ghosts = [...stack.querySelectorAll(".ghost")];
    const wanted = Math.max(0, Math.min(state.queue.length, DEPTH) - 1);
    for (let i = ghosts.length; i < wanted; i++) stack.prepend(h("div.card.ghost", { "aria-hidden": "true" }));
    for (const ghost of ghosts.slice(wanted)) ghost.remove();
    stack.querySelectorAll(".ghost").forEach((ghost, i, all) => {
      ghost.className = `card ghost depth-${all.length - i}`;
    });
    renderCounts();
    empty.hidden = !state.loaded || state.queue.length > 0;
    if (state.loaded && !state.queue.length && state.cursor) more();
    if (item && !performance.getEntriesByName("credence:first-card").length) performance.mark("credence:first-card");
  }

  /** Counts from what the server answered: "done" grows when a decision is confirmed (or queued). */
  function renderCounts() {
    const { stats } = state;
    const pending = state.queue.filter((entry) => entry.status === "pending").length;
    const others = state.all.filter((entry) => !mine(entry)).length;
    const cleared = stats.keep + stats.forget + stats.edit;
    const plus = state.cursor ? "+" : "";
    const parts = [pending ? `${pending}${plus} to review` : "Nothing to review"];
    if (others) parts.push(`${others}${plus} waiting for other agents`);
    if (cleared) parts.push(`${cleared} done`);
    if (state.loaded) progress.textContent = parts.join(" · ");
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
    ctx.pendingChanged(pending + others, Boolean(state.cursor));
  }

  /** The top card leaves the way it was decided; the next render raises the one behind it. */
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

  /** The rendered top card's element, if any. */
  const topCard = () => top?.el;

  return { render, renderCounts, flyOut, topCard };
}
