// Review keys: the swipes' equivalents (→/K keep, ←/F forget, ↑/E edit), U undo, Esc, Ctrl+Enter.
import { conflictIds, shortcutsOn } from "./dom.js";

const KEYS = { ArrowRight: "keep", k: "keep", ArrowLeft: "forget", f: "forget", ArrowUp: "edit", e: "edit", u: "undo" };

/** The review's keydown handler: true when it used the key (the caller then prevents the default). */
export function reviewKeys(state, { topCard, modes, undo }) {
  const { setMode, swiped, startEdit, cancelEdit, saveEdit } = modes;
  return function onKey(event) {
    const { mode } = state;
    if (mode === "edit" || mode === "keep") {
      if (event.key === "Escape") mode === "edit" ? cancelEdit() : setMode(null);
      else if (mode === "edit" && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        // With a conflict the reviewer still chooses: focus goes to "Save and retire the old one".
        if (conflictIds(state.queue[0]).length) topCard().querySelector(".choices .act-keep").focus();
        else saveEdit();
      } else return false;
      return true;
    }
    if (!shortcutsOn()) return false;
    if (event.altKey || event.metaKey || event.ctrlKey || event.target.closest?.("input, textarea, select, .card-body"))
      return false;
    // ArrowUp scrolls while the page or the card is scrolled; only at the very top does it edit.
    if (event.key === "ArrowUp" && (scrollY > 0 || topCard()?.querySelector(".card-body").scrollTop > 0)) return false;
    const action = KEYS[event.key.length === 1 ? event.key.toLowerCase() : event.key];
    if (action === "undo") undo();
    else if (action === "edit") startEdit();
    else if (action) swiped(action);
    return Boolean(action);
  };
}
