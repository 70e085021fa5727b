// DOM helpers (no innerHTML anywhere: text stays text), toasts, and words for the server's codes.

const isAttrs = (v) => v && typeof v === "object" && !(v instanceof Node) && !Array.isArray(v);

/** Build an element: h("p.note", "text"), h("button.act", {onclick: f}, icon("keep"), "Keep"). */
export function h(spec, ...rest) {
  const [tag, ...classes] = spec.split(".");
  const el = document.createElement(tag);
  if (classes.length) el.className = classes.join(" ");
  const attrs = isAttrs(rest[0]) ? rest.shift() : {};
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = `${el.className} ${value}`.trim();
    else if (name === "hidden" || name === "disabled" || name === "value" || name === "checked") el[name] = value;
    else el.setAttribute(name, value === true ? "" : value);
  }
  append(el, rest);
  return el;
}

/** A type=button button. */
export const button = (spec, onclick, ...children) => h(`button.${spec}`, { type: "button", onclick }, ...children);

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const ICONS = {
  keep: "M5 12.5l4.5 4.5L19 7.5",
  forget: "M6.5 6.5l11 11M17.5 6.5l-11 11",
  edit: "M4 20h4L19 9l-4-4L4 16v4zM13.5 6.5l4 4",
  undo: "M9 14L4 9l5-5M4 9h10.5a5.5 5.5 0 010 11H11",
};

/** A decorative stroke icon (aria-hidden, so it never changes a button's accessible name). */
export function icon(name) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "icon");
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", ICONS[name]);
  svg.append(path);
  return svg;
}

// --- toasts

let toastTimer = null;

/** A short message with an optional action button; a new toast replaces the old one. */
export function toast(message, { action, onAction, tone = "info", timeout = 6000 } = {}) {
  const region = document.getElementById("toast");
  const act =
    action &&
    button(
      "toast-action",
      () => {
        hideToast();
        onAction();
      },
      action,
    );
  replace(region, h(`div.toast-body.tone-${tone}`, h("span", message), act));
  region.hidden = false;
  clearTimeout(toastTimer);
  if (timeout) toastTimer = setTimeout(hideToast, timeout);
}

export function hideToast() {
  const region = document.getElementById("toast");
  region.hidden = true;
  region.replaceChildren();
}

// --- time and numbers

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const STEPS = [
  [60, "second"],
  [60, "minute"],
  [24, "hour"],
  [30, "day"],
  [12, "month"],
  [Infinity, "year"],
];

export function ago(timestamp, now = Date.now()) {
  if (!timestamp) return "never";
  let value = (Date.parse(timestamp) - now) / 1000;
  for (const [size, unit] of STEPS) {
    if (Math.abs(value) < size) return relative.format(Math.round(value), unit);
    value /= size;
  }
  return timestamp;
}

export const when = (t) =>
  t ? new Date(t).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "";
export const percent = (value) => `${Math.round(value * 100)}%`;
export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

// --- the server's codes in words

const OPS = {
  strengthen: "Strengthens a belief",
  weaken: "Weakens a belief",
  forget: "Asks to forget a belief",
  supersede: "Replaces a belief",
};
export const opLabel = (op) => OPS[op] || op;

const REASONS = {
  untrusted_source: "Learned from third-party content (a web page, mail or tool output)",
  duplicate_of: "Duplicates a belief already in memory",
  near_duplicate_of: "Very close to a belief already in memory",
  previously_forgotten: "You forgot something like this before",
  contradicts: "Contradicts a belief in memory",
  contradicts_in_batch: "Contradicts another proposal from the same run",
  duplicate_in_batch: "Repeats another proposal from the same run",
  missing_target: "Names no belief to change",
  unknown_target: "Points at a belief that does not exist",
  target_forgotten: "Points at a belief you already forgot",
  op: "Changes a belief already in memory",
  unsourced:
    "Cites no source episodes, so it may repeat what the agent read rather than what happened: check it here (a notification's Keep only opens this card)",
  unsourced_after_third_party:
    "Cites nothing, and the agent read third-party content in the 24 hours before: treated as third-party",
};

/** {text, beliefId} for a structured reason {kind, target} (a belief's or a job result's). */
export function reasonWords({ kind, target }) {
  const text = REASONS[kind] || kind.replaceAll("_", " ");
  return { text, beliefId: target && /^b_/.test(target) ? target : null };
}

/** A belief's structured reasons: [{kind, target, change: {old, new} | null}]. */
export const reasonsOf = (item) => item.reasons || [];

/** Ids of the beliefs this one contradicts or replaces: a Keep may retire them, or keep both. */
export function conflictIds(item) {
  const ids = reasonsOf(item)
    .filter((reason) => reason.kind === "contradicts" && reason.target)
    .map((reason) => reason.target);
  if (item.op === "supersede" && item.target_belief_id) ids.push(item.target_belief_id);
  return [...new Set(ids)];
}

/** The rationale without the reflection job's "[needs human review] code, code." prefix (the
 * card already shows those reasons in words). */
export function cleanRationale(text) {
  return (text || "").replace(/^\s*\[needs human review\](?:\s+[\w:-]+(?:,\s*[\w:-]+)*)?\.?\s*/i, "").trim();
}

// --- word diff (a supersede shows what changes)

/** [[kind, text]…] with kind "same" | "del" | "ins", from an LCS over words. */
export function wordDiff(before, after) {
  // Each word carries its trailing space, so spaces never "match" on their own.
  const a = before.match(/\S+\s*/g) || [];
  const b = after.match(/\S+\s*/g) || [];
  if (a.length * b.length > 250000)
    return [
      ["del", before],
      ["ins", after],
    ];
  const cols = b.length + 1;
  const lcs = new Uint16Array((a.length + 1) * cols);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const down = (i + 1) * cols + j;
      lcs[i * cols + j] = a[i] === b[j] ? lcs[down + 1] + 1 : Math.max(lcs[down], lcs[i * cols + j + 1]);
    }
  }
  const out = [];
  const push = (kind, text) => {
    const last = out[out.length - 1];
    if (last && last[0] === kind) last[1] += text;
    else out.push([kind, text]);
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      push("same", a[i]);
      i++;
      j++;
    } else if (lcs[(i + 1) * cols + j] >= lcs[i * cols + j + 1]) push("del", a[i++]);
    else push("ins", b[j++]);
  }
  while (i < a.length) push("del", a[i++]);
  while (j < b.length) push("ins", b[j++]);
  return out;
}

export const diffView = (before, after) =>
  h(
    "p.diff",
    wordDiff(before, after).map(([kind, text]) => (kind === "same" ? text : h(`${kind}.diff-${kind}`, text))),
  );

export const SHORTCUTS_KEY = "credence.shortcuts";
/** Single-key shortcuts are on unless switched off in Settings (WCAG 2.1.4). */
export const shortcutsOn = () => localStorage.getItem(SHORTCUTS_KEY) !== "off";

export const reducedMotion = () => matchMedia("(prefers-reduced-motion: reduce)").matches;
