// DOM helpers (no innerHTML anywhere: text stays text), toasts, and words for the server's codes.

/** Build an element: h("button", {class: "x", onclick: f}, "Keep"). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = value;
    else if (name === "text") el.textContent = value;
    else if (name === "hidden" || name === "disabled") el[name] = Boolean(value);
    else if (name === "value") el.value = value;
    else el.setAttribute(name, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";
const ICONS = {
  keep: "M5 12.5l4.5 4.5L19 7.5",
  forget: "M6.5 6.5l11 11M17.5 6.5l-11 11",
  edit: "M4 20h4L19 9l-4-4L4 16v4zM13.5 6.5l4 4",
  undo: "M9 14L4 9l5-5M4 9h10.5a5.5 5.5 0 010 11H11",
  bell: "M6 16V11a6 6 0 0112 0v5l1.5 2h-15L6 16zM10 20a2 2 0 004 0",
  sparkle: "M12 3l1.8 5.2L19 10l-5.2 1.8L12 17l-1.8-5.2L5 10l5.2-1.8L12 3z",
  search: "M11 18a7 7 0 110-14 7 7 0 010 14zM16 16l4.5 4.5",
  cloud: "M7 18a4.5 4.5 0 01-.5-9A6 6 0 0118 9.5 4.3 4.3 0 0117.5 18H7z",
};

/** A decorative stroke icon (aria-hidden, so it never changes a button's accessible name). */
export function icon(name) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", `icon icon-${name}`);
  const path = document.createElementNS(SVG_NS, "path");
  path.setAttribute("d", ICONS[name]);
  svg.append(path);
  return svg;
}

// --- toasts --------------------------------------------------------------------------------

let toastTimer = null;

/** Show a short message with an optional action button; a new toast replaces the old one. */
export function toast(message, { action, onAction, tone = "info", timeout = 6000 } = {}) {
  const region = document.getElementById("toast");
  const button = action
    ? h("button", { type: "button", class: "toast-action", onclick: () => { hideToast(); onAction(); } }, action)
    : null;
  replace(region, h("div", { class: `toast-body tone-${tone}` }, h("span", {}, message), button));
  region.hidden = false;
  clearTimeout(toastTimer);
  if (timeout) toastTimer = setTimeout(hideToast, timeout);
}

export function hideToast() {
  const region = document.getElementById("toast");
  region.hidden = true;
  region.replaceChildren();
}

// --- time ----------------------------------------------------------------------------------

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

export function when(timestamp) {
  if (!timestamp) return "";
  return new Date(timestamp).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export const percent = (value) => `${Math.round(value * 100)}%`;

// --- the server's codes in words -------------------------------------------------------------

const OPS = {
  add: "New lesson",
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
  "op:strengthen": "Changes how sure memory is of a belief",
  "op:weaken": "Changes how sure memory is of a belief",
  "op:supersede": "Rewrites a belief already in memory",
  "op:forget": "Would remove a belief from memory",
};

/** {text, beliefId} for a review-reason code such as "contradicts:b_…". */
export function reasonWords(code) {
  if (REASONS[code]) return { text: REASONS[code], beliefId: null };
  const at = code.indexOf(":");
  const kind = at < 0 ? code : code.slice(0, at);
  const arg = at < 0 ? null : code.slice(at + 1);
  const text = REASONS[kind] || code.replaceAll("_", " ");
  return { text, beliefId: arg && /^b_/.test(arg) ? arg : null };
}

/** The rationale without the reflection job's "[needs human review] code, code." prefix (the
 * card already shows those reasons in words). */
export function cleanRationale(text) {
  return (text || "").replace(/^\s*\[needs human review\](?:\s+[\w:-]+(?:,\s*[\w:-]+)*)?\.?\s*/i, "").trim();
}

// --- word diff (supersede shows what changes) ------------------------------------------------

/** [[kind, text]…] with kind "same" | "del" | "ins", from an LCS over words. */
export function wordDiff(before, after) {
  // Each word carries its trailing space, so spaces never "match" on their own.
  const a = before.match(/\S+\s*/g) || [];
  const b = after.match(/\S+\s*/g) || [];
  if (a.length * b.length > 250000) return [["del", before], ["ins", after]];
  const rows = a.length + 1;
  const cols = b.length + 1;
  const lcs = new Uint16Array(rows * cols);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * cols + j] =
        a[i] === b[j]
          ? lcs[(i + 1) * cols + j + 1] + 1
          : Math.max(lcs[(i + 1) * cols + j], lcs[i * cols + j + 1]);
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

export function diffView(before, after) {
  return h(
    "p",
    { class: "diff" },
    wordDiff(before, after).map(([kind, text]) =>
      kind === "same" ? text : h(kind, { class: `diff-${kind}` }, text),
    ),
  );
}

export const prefersReducedMotion = () => matchMedia("(prefers-reduced-motion: reduce)").matches;
