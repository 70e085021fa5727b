// One review card: the belief (never scrolled away), what it changes, why it needs you, actions.
import {
  ago,
  button,
  cleanRationale,
  conflictIds,
  diffView,
  h,
  icon,
  opLabel,
  percent,
  reasonsOf,
  reasonWords,
  replace,
  shortcutsOn,
} from "./dom.js";
import { belief as loadBelief, evidenceDetails } from "./evidence.js";
import { auditDetails } from "./audit.js";

export const LABELS = { keep: "Keep", forget: "Forget", edit: "Edit" };
const SHORTCUTS = { keep: "ArrowRight K", forget: "ArrowLeft F", edit: "ArrowUp E" };
const TARGET_LABELS = { supersede: "Replaces", strengthen: "Strengthens", weaken: "Weakens", forget: "Would forget" };
export const UNTRUSTED_KEEP =
  "Keep is off: this was learned from third-party content. Edit it into your own words to keep it.";
const QUICK_REASONS = ["Not true", "Too specific", "Out of date", "Already known"];
const coarse = () => matchMedia("(pointer: coarse)").matches;

/** "yarn → bun" from the ``changes`` reason about ``id``, if the gate sent one. */
export function changeWords(item, id) {
  const reason = reasonsOf(item).find((r) => r.kind === "changes" && r.target === id && r.change);
  return reason ? `${reason.change.old} → ${reason.change.new}` : null;
}

/** The card element; ``on`` holds the review's handlers (decide, edit, mode, undo, dismiss). */
export function cardView(item, { ctx, mode, notice, on }) {
  const pending = item.status === "pending";
  const untrusted = item.provenance === "untrusted";
  const rationale = cleanRationale(item.rationale);
  const textId = `text-${item.id}`;
  const confidence = h("span.confidence-fill");
  confidence.style.width = percent(item.confidence);
  const saveKeys = coarse() ? "" : " Ctrl+Enter saves, Esc cancels.";
  return h(
    `article.card.depth-0${untrusted ? ".untrusted" : ""}`,
    { "data-belief-id": item.id, "aria-labelledby": textId },
    Object.entries(LABELS).map(([action, label]) => h(`div.stamp.stamp-${action}`, { "aria-hidden": "true" }, label)),
    h(
      "header.card-head",
      h("span.chip.chip-agent", ctx.agentName(item.agent_id)),
      item.op !== "add" && h("span.chip.chip-op", opLabel(item.op)),
      item.role && h("span.chip", item.role),
      h(
        "span.confidence",
        { title: "How sure the agent is" },
        h("span.confidence-bar", confidence),
        `${percent(item.confidence)} sure`,
      ),
    ),
    h(
      "div.card-belief",
      h("p.learned", "I've learned:"),
      mode === "edit"
        ? h(
            "div.edit-box",
            h("textarea.edit-text", {
              id: textId,
              "aria-label": "Belief, in your words",
              maxlength: "2000",
              rows: "3",
              value: item.content,
              oninput: (e) => autosize(e.target),
            }),
            h("p.hint", `Saving makes your words active memory.${saveKeys}`),
          )
        : h("p.belief-text", { id: textId }, item.content),
    ),
    h(
      "div.card-body",
      targetView(item),
      reasonsView(item),
      rationale && h("p.rationale", h("b", "Why: "), rationale),
      item.note && h("blockquote.agent-note", h("p", item.note), h("footer", "— the agent's note, in its own words")),
      item.source_episodes.length > 0 && evidenceDetails(item),
      auditDetails(item.id),
      h("p.card-meta", `Proposed ${ago(item.created_at)}${item.proposed_by?.job_id ? " by a reflection run" : ""}`),
    ),
    notice && h("p.notice", { role: "alert" }, notice),
    footer(item, { pending, untrusted, mode, on }),
  );
}

export function autosize(area) {
  area.style.height = "auto";
  area.style.height = `${area.scrollHeight + 2}px`;
}

function targetView(item) {
  if (!item.target_belief_id) return null;
  const box = h("div.target", h("p.label", "Loading the belief it changes…"));
  loadBelief(item.target_belief_id).then(
    (target) =>
      target
        ? replace(
            box,
            h(
              "p.label",
              `${TARGET_LABELS[item.op]}${item.op === "supersede" || item.op === "forget" ? "" : ` (now ${percent(target.confidence)} sure)`}:`,
            ),
            item.op === "supersede" ? diffView(target.content, item.content) : h("p", target.content),
          )
        : replace(box, h("p.label", "The belief it changes is gone.")),
    () => replace(box, h("p.label", "Could not load the belief it changes.")),
  );
  return box;
}

function reasonsView(item) {
  // op:* reasons are told by the op chip and the box above; changes:* inside their contradicts:.
  const codes = reasonsOf(item).filter((reason) => reason.kind !== "op" && reason.kind !== "changes");
  if (!codes.length) return null;
  return h(
    "ul.reasons",
    { "aria-label": "Why this needs you" },
    codes.map((reason) => {
      const { text, beliefId } = reasonWords(reason);
      const change = beliefId && changeWords(item, beliefId);
      const quote = beliefId && h("q.reason-quote", "…");
      if (quote)
        loadBelief(beliefId).then(
          (other) => (quote.textContent = other ? other.content : "(no longer there)"),
          () => quote.remove(),
        );
      return h(
        `li.reason.reason-${reason.kind}`,
        h("span", text),
        change && h("b.reason-change", `changes ${change}`),
        quote,
      );
    }),
  );
}

const act = (action, onclick, label = LABELS[action]) => {
  const el = button(`act.act-${action}`, onclick, icon(action), label);
  if (label === LABELS[action] && shortcutsOn()) el.setAttribute("aria-keyshortcuts", SHORTCUTS[action]);
  return el;
};

function footer(item, { pending, untrusted, mode, on }) {
  if (!pending) {
    return h(
      "footer.card-actions",
      button("act", () => on.undoDecided(item), icon("undo"), "Undo"),
      button("act", () => on.dismiss(item), "Next"),
    );
  }
  const conflicts = conflictIds(item).length > 0;
  if (mode === "edit") {
    const save = conflicts
      ? [
          act("keep", () => on.saveEdit({ retire: true }), "Save and retire the old one"),
          act("keep", () => on.saveEdit({ retire: false }), "Save, keep both"),
        ]
      : [act("keep", () => on.saveEdit({}), "Save")];
    return h("footer.card-actions.choices", button("act", on.cancelEdit, "Cancel"), save);
  }
  if (mode === "keep") {
    return h(
      "div.card-foot",
      h(
        "p.choice-title",
        `${item.op === "supersede" ? "This replaces" : "This contradicts"} a belief in memory. Keep:`,
      ),
      h(
        "footer.card-actions.choices",
        act("keep", () => on.decide("keep", { retire: true }), "Keep and retire the old one"),
        act("keep", () => on.decide("keep", { retire: false }), "Keep both"),
        button("act", () => on.setMode(null), "Cancel"),
      ),
    );
  }
  const keep = act("keep", () => (conflicts ? on.setMode("keep") : on.decide("keep")));
  if (untrusted) {
    keep.disabled = true;
    keep.setAttribute("aria-describedby", `why-${item.id}`);
  }
  return h(
    "div.card-foot",
    h(
      "footer.card-actions",
      act("forget", () => on.decide("forget")),
      act("edit", on.startEdit),
      keep,
    ),
    h(
      "div.card-extras",
      untrusted && h("p.keep-blocked", { id: `why-${item.id}` }, UNTRUSTED_KEEP),
      mode === "reason" ? reasonForm(on) : button("linkish", () => on.setMode("reason"), "Forget with a reason…"),
    ),
  );
}

function reasonForm(on) {
  const submit = (reason) => on.decide("forget", { reason: reason.trim() });
  const input = h("input.reason-input", {
    type: "text",
    maxlength: "1000",
    placeholder: "Why forget it? (optional)",
    "aria-label": "Reason for forgetting",
    onkeydown: (event) => (event.key === "Enter" ? submit(input.value) : event.key === "Escape" && on.setMode(null)),
  });
  queueMicrotask(() => input.focus());
  return h(
    "div.reason-form",
    input,
    h(
      "div.quick-reasons",
      QUICK_REASONS.map((text) => button("chip.chip-button", () => submit(text), text)),
    ),
    h(
      "div.row",
      button("act", () => on.setMode(null), "Cancel"),
      button("act.act-forget", () => submit(input.value), "Forget with reason"),
    ),
  );
}
