// Swipes on the top card: right keeps, left forgets, up edits; the card follows the finger.

/** Follow pointer drags on ``card``; ``onSwipe(action)`` gets "keep", "forget" or "edit". */
export function attachSwipe(card, onSwipe) {
  let drag = null;
  card.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || event.target.closest("button, a, summary, textarea, input, .episodes, .audit")) return;
    drag = {
      id: event.pointerId,
      x: event.clientX,
      y: event.clientY,
      t: performance.now(),
      dx: 0,
      dy: 0,
      active: false,
    };
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
    springBack(card);
    if (action) onSwipe(action);
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

export function springBack(card) {
  card.style.transform = "";
  for (const stamp of card.querySelectorAll(".stamp")) stamp.style.opacity = "";
}

// A finger may swipe the card any way while its body fits; once the body scrolls (evidence
// open, long text), vertical moves there scroll it, and the belief above it still swipes up.
export function fitTouch(card) {
  const body = card.querySelector(".card-body");
  const fit = () => (body.style.touchAction = body.scrollHeight > body.clientHeight + 1 ? "pan-y" : "none");
  const observer = new ResizeObserver(fit);
  for (const el of [body, ...body.children]) observer.observe(el);
  body.addEventListener("toggle", () => requestAnimationFrame(fit), true);
}
