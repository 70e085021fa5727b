// The review view: a stack of pending cards to swipe, tap or key through; undo; offline queue.
import { api, db, decisionPath, OfflineError } from "./api.js";
import { ago, button, cleanRationale, diffView, h, icon, opLabel, percent, reasonWords, reducedMotion, replace, toast } from "./dom.js";
import { belief as loadBelief, evidenceDetails, forgetCachedBelief } from "./evidence.js";

const DEPTH = 3;
const DONE = { keep: "Kept", forget: "Forgotten", edit: "Saved in your words", reopen: "Back for review" };
const LABELS = { keep: "Keep", forget: "Forget", edit: "Edit" };
const SHORTCUTS = { keep: "ArrowRight K", forget: "ArrowLeft F", edit: "ArrowUp E" };
const KEYS = { ArrowRight: "keep", k: "keep", ArrowLeft: "forget", f: "forget", ArrowUp: "edit", e: "edit", u: "undo" };
const FLY = {
  keep: "translate(140%, 40px) rotate(24deg)",
  forget: "translate(-140%, 40px) rotate(-24deg)",
  edit: "translate(0, -120%) scale(0.96)",
};
const TARGET_LABELS = { supersede: "Replaces", strengthen: "Strengthens", weaken: "Weakens", forget: "Would forget" };
const UNTRUSTED_KEEP = "Keep is off: this was learned from third-party content. Edit it into your own words to keep it.";
const QUICK_REASONS = ["Not true", "Too specific", "Out of date", "Already known"];

export function createReview(ctx) {
  const $ = (id) => document.getElementById(id);
  const [stack, progress, meter, empty, emptyStats] = ["stack", "review-progress", "review-meter", "review-empty", "review-stats"].map($);
  let queue = []; // top card first
  let cursor = null;
  let loaded = false;
  let mode = null; // "edit" or "reason" while the top card is being edited or forgotten with a reason
  let top = null; // {key, el} of the rendered top card; the cards behind it are empty ghosts
  let drag = null;
  let arriving = false; // the next top card rises into place after one flew out
  const notices = new Map(); // belief id -> why its card is back (a 412, a failure, a deep link)
  const undoStack = [];
  const stats = { keep: 0, forget: 0, edit: 0 };

  // --- loading

  const query = (after) => {
    const agent = ctx.agentFilter();
    return `/beliefs?status=pending&limit=100${agent ? `&agent_id=${agent}` : ""}${after ? `&cursor=${after}` : ""}`;
  };

  async function refresh({ pinned } = {}) {
    const { body } = await api(query());
    const queued = new Set((await db.outbox()).map((entry) => entry.belief_id));
    const fresh = body.items.filter((item) => !queued.has(item.id));
    cursor = body.next_cursor;
    // The card on top stays there (as the server has it now); the rest follow the server.
    const current = queue[0];
    const kept = current && (fresh.find((item) => item.id === current.id) || ((mode || notices.has(current.id)) && current));
    const first = pinned || kept;
    queue = first ? [first, ...fresh.filter((item) => item.id !== first.id)] : fresh;
    loaded = true;
    render();
  }

  async function loadMore() {
    const { body } = await api(query(cursor));
    const known = new Set(queue.map((item) => item.id));
    queue.push(...body.items.filter((item) => !known.has(item.id)));
    cursor = body.next_cursor;
    render();
  }

  /** Put one belief's card on top (a deep link or a notification tap). */
  async function open(id) {
    let item = null;
    try {
      ({ body: item } = await api(`/beliefs/${encodeURIComponent(id)}`));
    } catch (error) {
      toast(error.status === 404 ? "That belief does not exist, or is not yours to see." : error.message, { tone: "warn" });
    }
    if (item && item.status !== "pending") {
      const word = item.status === "active" ? "kept" : "forgotten";
      notices.set(item.id, `Already ${word} ${ago(item.decided_at)}. Undo puts it back for review.`);
    }
    mode = null;
    return refresh({ pinned: item });
  }

  // --- rendering

  function render() {
    const item = queue[0];
    const key = item && [item.id, item.version, item.status, notices.get(item.id), mode].join("|");
    if (top && top.key !== key) {
      top.el.remove();
      top = null;
    }
    if (item && !top) {
      top = { key, el: cardView(item) };
      if (arriving) top.el.classList.add("arrive");
      stack.insertBefore(top.el, stack.querySelector(".leaving")); // under a card still flying
      arriving = false;
      if (mode === "edit") {
        const area = top.el.querySelector("textarea");
        area.focus();
        area.setSelectionRange(area.value.length, area.value.length);
        autosize(area);
      }
    }
    const ghosts = [...stack.querySelectorAll(".ghost")];
    const wanted = Math.max(0, Math.min(queue.length, DEPTH) - 1);
    for (let i = ghosts.length; i < wanted; i++) stack.prepend(h("div.card.ghost", { "aria-hidden": "true" }));
    for (const ghost of ghosts.slice(wanted)) ghost.remove();
    stack.querySelectorAll(".ghost").forEach((ghost, i, all) => (ghost.className = `card ghost depth-${all.length - i}`));

    const pending = queue.filter((entry) => entry.status === "pending").length;
    const cleared = stats.keep + stats.forget + stats.edit;
    progress.textContent = !loaded
      ? "Loading…"
      : `${pending ? `${pending}${cursor ? "+" : ""} to review` : "Nothing to review"}${cleared ? ` · ${cleared} done` : ""}`;
    meter.hidden = !cleared;
    meter.firstElementChild.style.width = `${(100 * cleared) / (cleared + pending || 1)}%`;
    empty.hidden = !loaded || queue.length > 0;
    if (loaded && !queue.length) {
      const parts = [[stats.keep, "kept"], [stats.edit, "rewritten in your words"], [stats.forget, "forgotten"]];
      const said = parts.filter(([n]) => n).map(([n, word]) => `${n} ${word}`);
      emptyStats.textContent = said.length
        ? `You cleared the pile: ${said.join(", ")}. New lessons arrive as notifications.`
        : "Nothing waits for you. New lessons arrive as notifications, or run a reflection from Runs.";
      if (cursor) loadMore();
    }
    ctx.pendingChanged(pending, Boolean(cursor));
    if (item && !performance.getEntriesByName("credence:first-card").length) performance.mark("credence:first-card");
  }

  function cardView(item) {
    const pending = item.status === "pending";
    const untrusted = item.provenance === "untrusted";
    const rationale = cleanRationale(item.rationale);
    const textId = `text-${item.id}`;
    const confidence = h("span.confidence-fill");
    confidence.style.width = percent(item.confidence);
    const card = h(
      `article.card.depth-0${untrusted ? ".untrusted" : ""}`,
      { "data-belief-id": item.id, "aria-labelledby": textId },
      Object.entries(LABELS).map(([action, label]) => h(`div.stamp.stamp-${action}`, { "aria-hidden": "true" }, label)),
      h(
        "header.card-head",
        h("span.chip.chip-agent", ctx.agentName(item.agent_id)),
        item.op !== "add" && h("span.chip.chip-op", opLabel(item.op)),
        item.role && h("span.chip", item.role),
        h("span.confidence", { title: "How sure the agent is" }, h("span.confidence-bar", confidence), `${percent(item.confidence)} sure`),
      ),
      h(
        "div.card-body",
        h("p.learned", "I've learned:"),
        mode === "edit"
          ? h(
              "div.edit-box",
              h("textarea.edit-text", { id: textId, "aria-label": "Belief, in your words", maxlength: "2000", rows: "3", value: item.content, oninput: (e) => autosize(e.target) }),
              h("p.hint", "Saving makes your words active memory. Ctrl+Enter saves, Esc cancels."),
            )
          : h("p.belief-text", { id: textId }, item.content),
        targetView(item),
        reasonsView(item),
        rationale && h("p.rationale", h("b", "Why: "), rationale),
        item.source_episodes.length > 0 && evidenceDetails(item),
        h("p.card-meta", `Proposed ${ago(item.created_at)}${item.proposed_by?.job_id ? " by a reflection run" : ""}`),
      ),
      notices.has(item.id) && h("p.notice", { role: "alert" }, notices.get(item.id)),
      footer(item, pending, untrusted),
    );
    if (pending && mode !== "edit") attachSwipe(card, item);
    fitTouch(card);
    return card;
  }

  // A finger may swipe the card any way while its body fits; once the body scrolls (evidence
  // open, long text), vertical moves scroll it and only sideways swipes decide.
  function fitTouch(card) {
    const body = card.querySelector(".card-body");
    const fit = () => (body.style.touchAction = body.scrollHeight > body.clientHeight + 1 ? "pan-y" : "none");
    const observer = new ResizeObserver(fit);
    for (const el of [body, ...body.children]) observer.observe(el);
    body.addEventListener("toggle", () => requestAnimationFrame(fit), true);
  }

  function targetView(item) {
    if (!item.target_belief_id) return null;
    const box = h("div.target", h("p.label", "Loading the belief it changes…"));
    loadBelief(item.target_belief_id).then(
      (target) =>
        target
          ? replace(
              box,
              h("p.label", `${TARGET_LABELS[item.op]}${item.op === "supersede" || item.op === "forget" ? "" : ` (now ${percent(target.confidence)} sure)`}:`),
              item.op === "supersede" ? diffView(target.content, item.content) : h("p", target.content),
            )
          : replace(box, h("p.label", "The belief it changes is gone.")),
      () => replace(box, h("p.label", "Could not load the belief it changes.")),
    );
    return box;
  }

  function reasonsView(item) {
    // op:* reasons are already told by the op chip and the box above.
    const codes = item.review_reasons.filter((code) => !code.startsWith("op:"));
    if (!codes.length) return null;
    return h(
      "ul.reasons",
      { "aria-label": "Why this needs you" },
      codes.map((code) => {
        const { text, beliefId } = reasonWords(code);
        const quote = beliefId && h("q.reason-quote", "…");
        if (quote) loadBelief(beliefId).then((other) => (quote.textContent = other ? other.content : "(no longer there)"), () => quote.remove());
        return h(`li.reason.reason-${code.split(":")[0]}`, h("span", text), quote);
      }),
    );
  }

  function autosize(area) {
    area.style.height = "auto";
    area.style.height = `${area.scrollHeight + 2}px`;
  }

  function footer(item, pending, untrusted) {
    if (!pending) {
      return h("footer.card-actions", button("act", () => undoDecided(item), icon("undo"), "Undo"), button("act", () => dismiss(item), "Next"));
    }
    if (mode === "edit") {
      return h("footer.card-actions", button("act", cancelEdit, "Cancel"), button("act.act-keep", saveEdit, icon("keep"), "Save"));
    }
    const act = (action, onclick) => {
      const el = button(`act.act-${action}`, onclick, icon(action), LABELS[action]);
      el.setAttribute("aria-keyshortcuts", SHORTCUTS[action]);
      return el;
    };
    const keep = act("keep", () => decide("keep"));
    if (untrusted) {
      keep.disabled = true;
      keep.setAttribute("aria-describedby", `why-${item.id}`);
    }
    return h(
      "div.card-foot",
      h("footer.card-actions", act("forget", () => decide("forget")), act("edit", startEdit), keep),
      h(
        "div.card-extras",
        untrusted && h("p.keep-blocked", { id: `why-${item.id}` }, UNTRUSTED_KEEP),
        mode === "reason" ? reasonForm() : button("linkish", () => setMode("reason"), "Forget with a reason…"),
      ),
    );
  }

  function reasonForm() {
    const submit = (reason) => decide("forget", { reason: reason.trim() });
    const input = h("input.reason-input", {
      type: "text",
      maxlength: "1000",
      placeholder: "Why forget it? (optional)",
      "aria-label": "Reason for forgetting",
      onkeydown: (event) => (event.key === "Enter" ? submit(input.value) : event.key === "Escape" && setMode(null)),
    });
    queueMicrotask(() => input.focus());
    return h(
      "div.reason-form",
      input,
      h("div.quick-reasons", QUICK_REASONS.map((text) => button("chip.chip-button", () => submit(text), text))),
      h("div.row", button("act", () => setMode(null), "Cancel"), button("act.act-forget", () => submit(input.value), "Forget with reason")),
    );
  }

  function setMode(next) {
    mode = next;
    render();
  }

  // --- swipe

  function attachSwipe(card, item) {
    card.addEventListener("pointerdown", (event) => {
      if (event.button !== 0 || event.target.closest("button, a, summary, textarea, input, .episodes")) return;
      drag = { id: event.pointerId, x: event.clientX, y: event.clientY, t: performance.now(), dx: 0, dy: 0, active: false };
    });
    card.addEventListener("pointermove", (event) => {
      if (drag?.id !== event.pointerId) return;
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
      if (drag?.id !== event.pointerId) return;
      const { dx, dy, t, active } = drag;
      drag = null;
      if (!active) return;
      card.classList.remove("dragging");
      const sideways = Math.abs(dx) > Math.abs(dy);
      const fast = Math.abs(dx) / Math.max(1, performance.now() - t) > 0.6 && Math.abs(dx) > 60;
      let action = null;
      if (event.type === "pointercancel") action = null;
      else if (sideways && (Math.abs(dx) > card.offsetWidth * 0.3 || fast)) action = dx > 0 ? "keep" : "forget";
      else if (!sideways && dy < -Math.min(160, card.offsetHeight * 0.25)) action = "edit";
      if (action === "keep" && item.provenance === "untrusted") {
        toast(UNTRUSTED_KEEP, { tone: "warn" });
        action = null;
      }
      if (action === "keep" || action === "forget") return decide(action);
      springBack(card);
      if (action === "edit") startEdit();
    };
    card.addEventListener("pointerup", end);
    card.addEventListener("pointercancel", end);
  }

  function paintDrag(card, dx, dy) {
    const reach = (card.offsetWidth || 1) * 0.3;
    const clamp = (v) => String(Math.max(0, Math.min(1, v)));
    card.style.transform = `translate(${dx}px, ${Math.min(dy, 40)}px) rotate(${dx / 20}deg)`;
    card.querySelector(".stamp-keep").style.opacity = clamp(dx / reach);
    card.querySelector(".stamp-forget").style.opacity = clamp(-dx / reach);
    card.querySelector(".stamp-edit").style.opacity = Math.abs(dx) < -dy ? clamp(-dy / 160) : "0";
  }

  function springBack(card) {
    card.style.transform = "";
    for (const stamp of card.querySelectorAll(".stamp")) stamp.style.opacity = "";
  }

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

  // --- decisions

  const post = (item, action, idem, body) =>
    api(decisionPath(item.id, action), { method: "POST", body, headers: { "If-Match": `"${item.version}"`, "Idempotency-Key": idem } });

  const enqueue = (item, action, idem, body) =>
    db.enqueue({ id: idem, kind: "decision", belief_id: item.id, content: item.content, action, version: item.version, body });

  async function decide(action, extra = {}) {
    const item = queue[0];
    if (!item || item.status !== "pending") return;
    if (action === "keep" && item.provenance === "untrusted") return toast(UNTRUSTED_KEEP, { tone: "warn" });
    let body;
    if (action === "edit") body = { content: extra.content };
    if (action === "forget") body = extra.reason ? { reason: extra.reason } : {};
    flyOut(action);
    queue.shift();
    notices.delete(item.id);
    mode = null;
    render();
    const idem = db.randomKey();
    try {
      const { body: after } = await post(item, action, idem, body);
      forgetCachedBelief(item.id);
      stats[action] += 1;
      undoStack.push({ action, before: item, after });
      toast(DONE[action], { action: "Undo", onAction: undo, tone: action });
    } catch (error) {
      if (error instanceof OfflineError) {
        await enqueue(item, action, idem, body);
        stats[action] += 1;
        undoStack.push({ action, before: item, queued: idem });
        ctx.outboxChanged({ sync: true });
        toast(`${DONE[action]} on this device: it syncs when you are back online`, { action: "Undo", onAction: undo, tone: "offline" });
      } else if (error.status === 412) await conflict(item);
      else if (error.status === 404) toast("This belief is gone, or no longer yours to review.", { tone: "warn" });
      else putBack(item, error.detail);
    }
  }

  async function conflict(stale) {
    forgetCachedBelief(stale.id);
    let fresh;
    try {
      ({ body: fresh } = await api(`/beliefs/${stale.id}`));
    } catch (error) {
      return putBack(stale, `It changed since you loaded it, and reloading failed: ${error.message}`);
    }
    if (fresh.status === "pending") return putBack(fresh, "It changed since you loaded it. This is the current version: decide again.");
    const word = fresh.status === "active" ? "kept" : "forgotten";
    toast(`It was already ${word} elsewhere (${ago(fresh.decided_at)}). Nothing more to do.`, { tone: "warn", timeout: 9000 });
  }

  function putBack(item, notice) {
    queue = [item, ...queue.filter((other) => other.id !== item.id)];
    if (notice) notices.set(item.id, notice);
    render();
  }

  async function undo() {
    const last = undoStack.pop();
    if (!last) return toast("Nothing to undo");
    if (last.queued) {
      if ((await db.outbox()).some((entry) => entry.id === last.queued)) {
        await db.dequeue(last.queued);
        stats[last.action] -= 1;
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
    if (outcome === "done") stats[last.action] -= 1;
    if (outcome === "failed") undoStack.push(last);
  }

  /** Reopen a decided belief; resolves to "done", "stale" (it changed since) or "failed". */
  async function reopen(after) {
    const idem = db.randomKey();
    notices.delete(after.id);
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
      toast(stale ? "It changed since your decision, so undo stopped. Find it in History." : `Could not undo: ${error.detail}`, { tone: "warn", timeout: 9000 });
      return stale ? "stale" : "failed";
    }
  }

  function undoDecided(item) {
    queue = queue.filter((other) => other.id !== item.id);
    reopen(item);
  }

  function dismiss(item) {
    notices.delete(item.id);
    queue = queue.filter((other) => other.id !== item.id);
    render();
  }

  function startEdit() {
    if (queue[0]?.status === "pending") setMode("edit");
  }

  function cancelEdit() {
    setMode(null);
    top?.el.querySelector(".act-edit")?.focus();
  }

  function saveEdit() {
    const area = top?.el.querySelector("textarea");
    const content = area ? area.value.trim() : "";
    if (content) return decide("edit", { content });
    toast("A belief needs some words. Use Forget to drop it.", { tone: "warn" });
    area?.focus();
  }

  // --- keyboard

  function onKey(event) {
    if (mode === "edit") {
      if (event.key === "Escape") cancelEdit();
      else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) saveEdit();
      else return false;
      return true;
    }
    if (event.altKey || event.metaKey || event.ctrlKey || event.target.closest?.("input, textarea, select")) return false;
    const action = KEYS[event.key.length === 1 ? event.key.toLowerCase() : event.key];
    if (action === "undo") undo();
    else if (action === "edit") startEdit();
    else if (action) decide(action);
    return Boolean(action);
  }

  function removeDecided(ids) {
    queue = queue.filter((item) => !ids.includes(item.id) || (mode && item === queue[0]));
    render();
  }

  return { refresh, open, onKey, removeDecided };
}
