// The top card's modes (edit, choose what a Keep retires, a reason) and what a swipe asks for.
import { conflictIds, toast } from "./dom.js";
import { UNTRUSTED_KEEP } from "./card.js";

/** Switch ``state.mode`` on the top card; ``decide`` sends what the reviewer chose. */
export function createModes(state, { render, topCard, decide }) {
  function setMode(next) {
    state.mode = next;
    render();
  }

  /** A swipe (or its key): "keep", "forget" or "edit" on the top card. */
  function swiped(action) {
    const item = state.queue[0];
    if (action === "edit") return startEdit();
    if (item?.status !== "pending") return;
    if (action === "keep" && item.provenance === "untrusted") return toast(UNTRUSTED_KEEP, { tone: "warn" });
    if (action === "keep" && conflictIds(item).length) return setMode("keep");
    decide(action);
  }

  function startEdit() {
    if (state.queue[0]?.status === "pending") setMode("edit");
  }

  function cancelEdit() {
    setMode(null);
    topCard()?.querySelector(".act-edit")?.focus();
  }

  function saveEdit({ retire = false } = {}) {
    const area = topCard()?.querySelector("textarea");
    const content = area ? area.value.trim() : "";
    if (content) return decide("edit", { content, retire });
    toast("A belief needs some words. Use Forget to drop it.", { tone: "warn" });
    area?.focus();
  }

  return { setMode, swiped, startEdit, cancelEdit, saveEdit };
}
