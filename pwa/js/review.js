// The review view: a stack of pending cards to swipe, tap or key through; undo; offline queue.
import { api, ApiError, db, decisionPath, OfflineError } from "./api.js";
import {
  ago,
  cleanRationale,
  diffView,
  h,
  icon,
  opLabel,
  percent,
  prefersReducedMotion,
  reasonWords,
  replace,
  toast,
} from "./dom.js";
import { belief as loadBelief, evidenceDetails, forgetCachedBelief } from "./evidence.js";

const VISIBLE = 3;
const PAGE = 100;
const DONE = { keep: "Kept", forget: "Forgotten", edit: "Saved in your words", reopen: "Back for review" };
const FLY = {
  keep: "translate(140%, 40px) rotate(24deg)",
  forget: "translate(-140%, 40px) rotate(-24deg)",
  edit: "translate(0, -120%) scale(0.96)",
};
const UNTRUSTED_KEEP =
  "Keep is off: this was learned from third-party content. Edit it into your own words to keep it.";
const QUICK_REASONS = ["Not true", "Too specific", "Out of date", "Already known"];

export function createReview(ctx) {
  const stack = document.getElementById("stack");
  const progress = document.getElementById("review-progress");
  const meter = document.getElementById("review-meter");
  const empty = document.getElementById("review-empty");
  const emptyStats = document.getElementById("review-stats");
  let queue = []; // pending beliefs, top card first
  let nextCursor = null;
  let loaded = false;
  let editing = null; // {id} while the top card's text is being edited
  let reasonOpen = false;
  let drag = null;
  const notices = new Map(); // belief id -> message shown on its card
  const undoStack = [];
  const stats = { keep: 0, forget: 0, edit: 0 };
  const elements = new Map(); // belief id -> {key, el}
  let firstCardMarked = false;

  // --- loading ------------------------------------------------------------------------

  async function refresh({ pinned } = {}) {
    const agent = ctx.agentFilter();
    const query = `/beliefs?status=pending&limit=${PAGE}${agent ? `&agent_id=${agent}` : ""}`;
    const { body } = await api(query);
    const queued = new Set((await db.outbox()).map((item) => item.belief_id));
    const fresh = body.items.filter((item) => !queued.has(item.id));
    nextCursor = body.next_cursor;
    const top = queue[0];
    // Keep the card the reviewer is looking at (or editing) on top; the rest follow the server.
    const keepTop = top && (editing || notices.has(top.id)) && !fresh.some((b) => b.id === top.id);
    queue = fresh;
    if (pinned) queue = [pinned, ...queue.filter((item) => item.id !== pinned.id)];
    else if (keepTop) queue.unshift(top);
    else if (top && queue.some((item) => item.id === top.id)) {
      queue = [queue.find((item) => item.id === top.id), ...queue.filter((item) => item.id !== top.id)];
    }
    loaded = true;
    render();
  }

  async function loadMore() {
    if (!nextCursor) return;
    const agent = ctx.agentFilter();
    const { body } = await api(
      `/beliefs?status=pending&limit=${PAGE}&cursor=${nextCursor}${agent ? `&agent_id=${agent}` : ""}`,
    );
    const known = new Set(queue.map((item) => item.id));
    queue.push(...body.items.filter((item) => !known.has(item.id)));
    nextCursor = body.next_cursor;
    render();
  }

  /** Open one belief's card on top (a deep link or a notification tap). */
  async function open(id) {
    let item;
    try {
      ({ body: item } = await api(`/beliefs/${encodeURIComponent(id)}`));
    } catch (error) {
      toast(error instanceof ApiError && error.status === 404 ? "That belief does not exist, or is not yours to see." : error.message, { tone: "warn" });
      return refresh();
    }
    if (item.status !== "pending") notices.set(item.id, decidedNotice(item));
    return refresh({ pinned: item });
  }

  function decidedNotice(item) {
    const word = item.status === "active" ? "kept" : "forgotten";
    return `Already ${word}${item.decided_at ? ` ${ago(item.decided_at)}` : ""}. Undo puts it back for review.`;
  }

  // --- rendering ----------------------------------------------------------------------

  function render() {
    const visible = queue.slice(0, VISIBLE);
    const ids = new Set(visible.map((item) => item.id));
    for (const [id, entry] of elements) {
      if (!ids.has(id)) {
        entry.el.remove();
        elements.delete(id);
      }
    }
    visible.forEach((item, depth) => {
      const key = `${item.id}:${item.version}:${item.status}:${notices.get(item.id) || ""}:${depth === 0}:${editing?.id === item.id}:${reasonOpen}`;
      let entry = elements.get(item.id);
      if (!entry || entry.key !== key) {
        const el = cardView(item, depth === 0);
        if (entry) entry.el.replaceWith(el);
        entry = { key, el };
        elements.set(item.id, entry);
      }
      entry.el.className = `card depth-${depth}${item.provenance === "untrusted" ? " untrusted" : ""}`;
      entry.el.inert = depth !== 0;
      if (depth !== 0) entry.el.setAttribute("aria-hidden", "true");
      else entry.el.removeAttribute("aria-hidden");
    });
    // Deepest first in the DOM so the top card paints last.
    for (const item of [...visible].reverse()) stack.append(elements.get(item.id).el);
    const pending = queue.filter((item) => item.status === "pending").length;
    const more = nextCursor ? "+" : "";
    progress.textContent = loaded
      ? pending
        ? `${pending}${more} to review`
        : "Nothing to review"
      : "Loading…";
    const cleared = stats.keep + stats.forget + stats.edit;
    meter.hidden = !cleared;
    meter.firstElementChild.style.width = `${(100 * cleared) / Math.max(1, cleared + pending)}%`;
    if (cleared && loaded) progress.textContent += ` · ${cleared} done`;
    empty.hidden = !loaded || queue.length > 0;
    stack.hidden = queue.length === 0;
    if (!queue.length) {
      const total = stats.keep + stats.forget + stats.edit;
      const parts = [
        [stats.keep, "kept"],
        [stats.edit, "rewritten in your words"],
        [stats.forget, "forgotten"],
      ].filter(([n]) => n > 0);
      emptyStats.textContent = total
        ? `You cleared the pile: ${parts.map(([n, word]) => `${n} ${word}`).join(", ")}. New lessons arrive as notifications.`
        : "Nothing waits for you. New lessons arrive as notifications, or run a reflection from Runs.";
      if (nextCursor) loadMore();
    }
    ctx.pendingChanged(pending, Boolean(nextCursor));
    if (visible.length && !firstCardMarked) {
      firstCardMarked = true;
      performance.mark("credence:first-card");
    }
    if (editing) {
      const area = stack.querySelector(".card.depth-0 textarea.edit-text");
      if (area && document.activeElement !== area) {
        area.focus();
        area.setSelectionRange(area.value.length, area.value.length);
        autosize(area);
      }
    }
  }

  function cardView(item, isTop) {
    const textId = `belief-text-${item.id}`;
    const untrusted = item.provenance === "untrusted";
    const pending = item.status === "pending";
    const notice = notices.get(item.id);
    const reasonsId = `keep-reason-${item.id}`;
    const card = h(
      "article",
      { class: "card", "data-belief-id": item.id, "aria-labelledby": textId },
      h("div", { class: "stamp stamp-keep", "aria-hidden": "true" }, "Keep"),
      h("div", { class: "stamp stamp-forget", "aria-hidden": "true" }, "Forget"),
      h("div", { class: "stamp stamp-edit", "aria-hidden": "true" }, "Edit"),
      h(
        "header",
        { class: "card-head" },
        h("span", { class: "chip chip-agent" }, ctx.agentName(item.agent_id)),
        item.op !== "add" ? h("span", { class: `chip chip-op op-${item.op}` }, opLabel(item.op)) : null,
        item.role ? h("span", { class: "chip" }, item.role) : null,
        h(
          "span",
          { class: "confidence", title: "How sure the agent is" },
          h("span", { class: "confidence-bar", "aria-hidden": "true" }, confidenceFill(item.confidence)),
          h("span", { class: "confidence-text" }, `${percent(item.confidence)} sure`),
        ),
      ),
      h(
        "div",
        { class: "card-body" },
        h("p", { class: "learned" }, "I've learned:"),
        isTop && editing?.id === item.id
          ? editField(item, textId)
          : h("p", { class: "belief-text", id: textId }, item.content),
        isTop ? targetView(item) : null,
        isTop ? reasonsView(item) : null,
        isTop && cleanRationale(item.rationale)
          ? h("p", { class: "rationale" }, h("span", { class: "label" }, "Why: "), cleanRationale(item.rationale))
          : null,
        isTop && item.source_episodes.length ? evidenceDetails(item) : null,
        h(
          "p",
          { class: "card-meta" },
          `Proposed ${ago(item.created_at)}${item.proposed_by?.job_id ? " by a reflection run" : ""}`,
        ),
      ),
      notice ? h("p", { class: "notice", role: "alert" }, notice) : null,
      isTop ? actionsView(item, { untrusted, pending, reasonsId }) : null,
    );
    if (isTop && pending && !editing) attachSwipe(card, item);
    if (isTop) fitTouch(card);
    return card;
  }

  // A finger may swipe the card any way while its body fits; once the body scrolls (evidence
  // open, long text), vertical moves scroll it and only sideways swipes decide.
  function fitTouch(card) {
    const body = card.querySelector(".card-body");
    const fit = () => {
      body.style.touchAction = body.scrollHeight > body.clientHeight + 1 ? "pan-y" : "none";
    };
    const observer = new ResizeObserver(fit);
    observer.observe(body);
    for (const child of body.children) observer.observe(child);
    body.addEventListener("toggle", () => requestAnimationFrame(fit), true);
  }

  function confidenceFill(value) {
    const fill = h("span", { class: "confidence-fill" });
    fill.style.width = percent(value);
    return fill;
  }

  function targetView(item) {
    if (!item.target_belief_id) return null;
    const box = h("div", { class: `target op-${item.op}` }, h("p", { class: "label" }, "Loading the belief it changes…"));
    loadBelief(item.target_belief_id)
      .then((target) => {
        if (!target) return replace(box, h("p", { class: "label" }, "The belief it changes is gone."));
        const label = {
          supersede: "Replaces",
          strengthen: `Strengthens (now ${percent(target.confidence)} sure)`,
          weaken: `Weakens (now ${percent(target.confidence)} sure)`,
          forget: "Would forget",
        }[item.op];
        replace(
          box,
          h("p", { class: "label" }, `${label}:`),
          item.op === "supersede"
            ? diffView(target.content, item.content)
            : h("p", { class: "target-text" }, target.content),
        );
      })
      .catch(() => replace(box, h("p", { class: "label" }, "Could not load the belief it changes.")));
    return box;
  }

  function reasonsView(item) {
    // op:* reasons are already told by the op chip and the "Replaces" box.
    const codes = item.review_reasons.filter((code) => !code.startsWith("op:"));
    if (!codes.length) return null;
    return h(
      "ul",
      { class: "reasons", "aria-label": "Why this needs you" },
      codes.map((code) => {
        const { text, beliefId } = reasonWords(code);
        const li = h("li", { class: `reason reason-${code.split(":")[0]}` }, h("span", {}, text));
        if (beliefId) {
          const quote = h("q", { class: "reason-quote" }, "…");
          li.append(quote);
          loadBelief(beliefId)
            .then((other) => (quote.textContent = other ? other.content : "(no longer there)"))
            .catch(() => quote.remove());
        }
        return li;
      }),
    );
  }

  function editField(item, textId) {
    const area = h("textarea", {
      class: "edit-text",
      id: textId,
      "aria-label": "Belief, in your words",
      maxlength: "2000",
      rows: "3",
      value: item.content,
      oninput: (event) => autosize(event.target),
    });
    return h(
      "div",
      { class: "edit-box" },
      area,
      h("p", { class: "hint" }, "Saving makes your words active memory. Ctrl+Enter saves, Esc cancels."),
    );
  }

  function autosize(area) {
    area.style.height = "auto";
    area.style.height = `${area.scrollHeight + 2}px`;
  }

  function actionsView(item, { untrusted, pending, reasonsId }) {
    if (!pending) {
      return h(
        "footer",
        { class: "card-actions" },
        h("button", { type: "button", class: "act act-undo", onclick: () => reopenDecided(item) }, icon("undo"), "Undo"),
        h("button", { type: "button", class: "act", onclick: () => dismiss(item) }, "Next"),
      );
    }
    if (editing?.id === item.id) {
      return h(
        "footer",
        { class: "card-actions" },
        h("button", { type: "button", class: "act", onclick: cancelEdit }, "Cancel"),
        h("button", { type: "button", class: "act act-keep primary", onclick: saveEdit }, icon("keep"), "Save"),
      );
    }
    const footer = h(
      "footer",
      { class: "card-actions" },
      h("button", { type: "button", class: "act act-forget", "aria-keyshortcuts": "ArrowLeft F", onclick: () => decide("forget") }, icon("forget"), "Forget"),
      h("button", { type: "button", class: "act act-edit", "aria-keyshortcuts": "ArrowUp E", onclick: startEdit }, icon("edit"), "Edit"),
      h(
        "button",
        {
          type: "button",
          class: "act act-keep",
          "aria-keyshortcuts": "ArrowRight K",
          disabled: untrusted,
          "aria-describedby": untrusted ? reasonsId : null,
          onclick: () => decide("keep"),
        },
        icon("keep"),
        "Keep",
      ),
    );
    const extras = h(
      "div",
      { class: "card-extras" },
      untrusted ? h("p", { class: "keep-blocked", id: reasonsId }, UNTRUSTED_KEEP) : null,
      reasonOpen ? reasonForm() : h("button", { type: "button", class: "linkish", onclick: () => { reasonOpen = true; render(); } }, "Forget with a reason…"),
    );
    return h("div", { class: "card-foot" }, footer, extras);
  }

  function reasonForm() {
    const input = h("input", { type: "text", class: "reason-input", maxlength: "1000", placeholder: "Why forget it? (optional)", "aria-label": "Reason for forgetting" });
    const submit = (reason) => {
      reasonOpen = false;
      decide("forget", { reason: reason.trim() || null });
    };
    queueMicrotask(() => input.focus());
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") submit(input.value);
      if (event.key === "Escape") { reasonOpen = false; render(); }
    });
    return h(
      "div",
      { class: "reason-form" },
      input,
      h("div", { class: "quick-reasons" }, QUICK_REASONS.map((text) => h("button", { type: "button", class: "chip chip-button", onclick: () => submit(text) }, text))),
      h(
        "div",
        { class: "row" },
        h("button", { type: "button", class: "act", onclick: () => { reasonOpen = false; render(); } }, "Cancel"),
        h("button", { type: "button", class: "act act-forget", onclick: () => submit(input.value) }, "Forget with reason"),
      ),
    );
  }

  // --- swipe --------------------------------------------------------------------------

  function attachSwipe(card, item) {
    card.addEventListener("pointerdown", (event) => {
      if (event.button !== 0 || event.target.closest("button, a, summary, textarea, input, select, .episodes")) return;
      drag = { id: event.pointerId, x: event.clientX, y: event.clientY, t: performance.now(), dx: 0, dy: 0, active: false, card, item };
    });
    card.addEventListener("pointermove", (event) => {
      if (!drag || drag.id !== event.pointerId) return;
      drag.dx = event.clientX - drag.x;
      drag.dy = event.clientY - drag.y;
      if (!drag.active && Math.hypot(drag.dx, drag.dy) > 8) {
        drag.active = true;
        card.setPointerCapture(event.pointerId);
        card.classList.add("dragging");
        getSelection()?.removeAllRanges();
      }
      if (drag.active) paintDrag(card, drag.dx, drag.dy);
    });
    const end = (event) => {
      if (!drag || drag.id !== event.pointerId) return;
      const d = drag;
      drag = null;
      if (!d.active) return;
      card.classList.remove("dragging");
      const width = card.offsetWidth;
      const height = card.offsetHeight;
      const speed = Math.abs(d.dx) / Math.max(1, performance.now() - d.t);
      const horizontal = Math.abs(d.dx) > Math.abs(d.dy);
      let action = null;
      if (event.type !== "pointercancel") {
        if (horizontal && (Math.abs(d.dx) > width * 0.3 || (speed > 0.6 && Math.abs(d.dx) > 60))) {
          action = d.dx > 0 ? "keep" : "forget";
        } else if (!horizontal && d.dy < -Math.min(160, height * 0.25)) action = "edit";
      }
      if (action === "keep" && item.provenance === "untrusted") {
        toast(UNTRUSTED_KEEP, { tone: "warn" });
        action = null;
      }
      if (!action) return springBack(card);
      if (action === "edit") {
        springBack(card);
        return startEdit();
      }
      decide(action);
    };
    card.addEventListener("pointerup", end);
    card.addEventListener("pointercancel", end);
  }

  function paintDrag(card, dx, dy) {
    const up = Math.max(0, -dy);
    card.style.transform = `translate(${dx}px, ${Math.min(dy, 40)}px) rotate(${dx / 20}deg)`;
    const w = card.offsetWidth || 1;
    card.querySelector(".stamp-keep").style.opacity = String(Math.max(0, Math.min(1, dx / (w * 0.3))));
    card.querySelector(".stamp-forget").style.opacity = String(Math.max(0, Math.min(1, -dx / (w * 0.3))));
    card.querySelector(".stamp-edit").style.opacity =
      Math.abs(dx) < up ? String(Math.min(1, up / 160)) : "0";
  }

  function springBack(card) {
    card.style.transform = "";
    for (const stamp of card.querySelectorAll(".stamp")) stamp.style.opacity = "";
  }

  function flyOut(action) {
    const entry = elements.get(queue[0]?.id);
    if (!entry) return;
    elements.delete(queue[0].id);
    const card = entry.el;
    card.inert = true;
    if (prefersReducedMotion()) {
      card.remove();
      return;
    }
    card.classList.remove("dragging");
    card.classList.add("leaving");
    card.style.transform = FLY[action];
    setTimeout(() => card.remove(), 420);
  }

  // --- decisions ----------------------------------------------------------------------

  async function decide(action, extra = {}) {
    const item = queue[0];
    if (!item || item.status !== "pending") return;
    if (action === "keep" && item.provenance === "untrusted") {
      toast(UNTRUSTED_KEEP, { tone: "warn" });
      return;
    }
    let body;
    if (action === "forget") body = extra.reason ? { reason: extra.reason } : {};
    if (action === "edit") body = { content: extra.content };
    flyOut(action);
    queue.shift();
    notices.delete(item.id);
    editing = null;
    reasonOpen = false;
    render();
    const idem = db.randomKey();
    try {
      const { body: after } = await api(decisionPath(item.id, action), {
        method: "POST",
        body,
        headers: { "If-Match": `"${item.version}"`, "Idempotency-Key": idem },
      });
      forgetCachedBelief(item.id);
      stats[action] += 1;
      undoStack.push({ before: item, after, action });
      toast(DONE[action], { action: "Undo", onAction: undo, tone: action });
    } catch (error) {
      if (error instanceof OfflineError) {
        await db.enqueue({ id: idem, kind: "decision", belief_id: item.id, agent_id: item.agent_id, action, version: item.version, body, content: item.content });
        stats[action] += 1;
        undoStack.push({ before: item, queued: idem, action });
        ctx.outboxChanged({ sync: true });
        toast(`${DONE[action]} — saved on this device, it syncs when you are back online`, { action: "Undo", onAction: undo, tone: "offline" });
      } else if (error.status === 412) {
        await conflict(item);
      } else if (error.status === 404) {
        toast("This belief is gone, or no longer yours to review.", { tone: "warn" });
      } else {
        putBack(item, error.detail);
      }
    }
  }

  async function conflict(stale) {
    forgetCachedBelief(stale.id);
    let fresh;
    try {
      ({ body: fresh } = await api(`/beliefs/${encodeURIComponent(stale.id)}`));
    } catch (error) {
      return putBack(stale, `It changed since you loaded it, and reloading failed: ${error.message}`);
    }
    if (fresh.status !== "pending") {
      const word = fresh.status === "active" ? "kept" : "forgotten";
      toast(`Someone else already ${word} it (${ago(fresh.decided_at)}). Nothing more to do.`, { tone: "warn", timeout: 9000 });
      return;
    }
    putBack(fresh, "It changed since you loaded it. This is the current version: decide again.");
  }

  function putBack(item, message) {
    queue = [item, ...queue.filter((other) => other.id !== item.id)];
    if (message) notices.set(item.id, message);
    render();
  }

  async function undo() {
    const last = undoStack.pop();
    if (!last) return toast("Nothing to undo");
    if (last.queued) {
      const waiting = (await db.outbox()).some((entry) => entry.id === last.queued);
      if (waiting) {
        await db.dequeue(last.queued);
        stats[last.action] -= 1;
        ctx.outboxChanged();
        putBack(last.before);
        return toast("Undone");
      }
      // It synced in the meantime: undo it on the server like any other decision.
      try {
        ({ body: last.after } = await api(`/beliefs/${encodeURIComponent(last.before.id)}`));
      } catch (error) {
        undoStack.push(last);
        return toast(`Undo needs the server: ${error.message}`, { tone: "warn" });
      }
    }
    await reopen(last.after, last);
  }

  async function reopen(after, last = null) {
    const idem = db.randomKey();
    try {
      const { body: reopened } = await api(decisionPath(after.id, "reopen"), {
        method: "POST",
        headers: { "If-Match": `"${after.version}"`, "Idempotency-Key": idem },
      });
      if (last) stats[last.action] -= 1;
      notices.delete(after.id);
      forgetCachedBelief(after.id);
      putBack(reopened);
      toast(DONE.reopen);
    } catch (error) {
      if (error instanceof OfflineError) {
        await db.enqueue({ id: idem, kind: "decision", belief_id: after.id, agent_id: after.agent_id, action: "reopen", version: after.version, content: after.content });
        if (last) stats[last.action] -= 1;
        ctx.outboxChanged({ sync: true });
        putBack({ ...after, status: "pending", version: after.version + 1 });
        toast("Undone on this device — it syncs when you are back online", { tone: "offline" });
      } else if (error.status === 412) {
        toast("It changed since your decision, so undo stopped. Find it in History.", { tone: "warn", timeout: 9000 });
      } else {
        if (last) undoStack.push(last);
        toast(`Could not undo: ${error.detail}`, { tone: "warn" });
      }
    }
  }

  function reopenDecided(item) {
    queue = queue.filter((other) => other.id !== item.id);
    reopen(item);
  }

  function dismiss(item) {
    notices.delete(item.id);
    queue = queue.filter((other) => other.id !== item.id);
    render();
  }

  function startEdit() {
    const item = queue[0];
    if (!item || item.status !== "pending") return;
    editing = { id: item.id };
    reasonOpen = false;
    render();
  }

  function cancelEdit() {
    editing = null;
    render();
    stack.querySelector(".card.depth-0 .act-edit")?.focus();
  }

  function saveEdit() {
    const area = stack.querySelector(".card.depth-0 textarea.edit-text");
    const content = area ? area.value.trim() : "";
    if (!content) {
      toast("A belief needs some words. Use Forget to drop it.", { tone: "warn" });
      return area?.focus();
    }
    decide("edit", { content });
  }

  // --- keyboard -----------------------------------------------------------------------

  function onKey(event) {
    if (event.altKey || event.metaKey || (event.ctrlKey && event.key !== "Enter")) return false;
    const inField = event.target.closest?.("input, textarea, select, [contenteditable]");
    if (editing) {
      if (event.key === "Escape") { cancelEdit(); return true; }
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { saveEdit(); return true; }
      return false;
    }
    if (inField) return false;
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    const actions = {
      ArrowRight: () => decide("keep"),
      k: () => decide("keep"),
      ArrowLeft: () => decide("forget"),
      f: () => decide("forget"),
      ArrowUp: startEdit,
      e: startEdit,
      u: undo,
    };
    if (!actions[key]) return false;
    actions[key]();
    return true;
  }

  function removeDecided(ids) {
    const gone = new Set(ids);
    if (!gone.size) return;
    queue = queue.filter((item) => !gone.has(item.id) || editing?.id === item.id);
    render();
  }

  return { refresh, open, onKey, removeDecided, isLoaded: () => loaded };
}
