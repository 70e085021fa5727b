"""The card in every viewport: the belief is on screen unclipped, the actions are reachable and
uncut, the toast never covers them, and a swipe never widens the page."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import App, open_app
from tests.browser.test_review import touch_swipe

VIEWPORTS = {
    "small-phone": {"width": 320, "height": 480},
    "phone": {"width": 390, "height": 844},
    "phone-sideways": {"width": 844, "height": 390},
    "desktop": {"width": 1280, "height": 800},
}
# Where el really shows: its box cut by every clipping ancestor and by the viewport, and whether
# the chrome above it (sticky bar, fixed tabs, toast) leaves its corners and centre uncovered.
VISIBLE_BOX = """(el) => {
  el.scrollIntoView({ block: "center", inline: "nearest" });
  const full = el.getBoundingClientRect();
  let [l, t, r, b] = [full.left, full.top, full.right, full.bottom];
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    const style = getComputedStyle(p);
    if (style.overflowX === "visible" && style.overflowY === "visible") continue;
    const box = p.getBoundingClientRect();
    [l, t] = [Math.max(l, box.left), Math.max(t, box.top)];
    [r, b] = [Math.min(r, box.right), Math.min(b, box.bottom)];
  }
  [l, t] = [Math.max(l, 0), Math.max(t, 0)];
  [r, b] = [Math.min(r, innerWidth), Math.min(b, innerHeight)];
  const [x, y] = [full.left + full.width / 2, full.top + full.height / 2];
  const points = [[full.left + 0.1 * full.width, y], [full.right - 0.1 * full.width, y], [x, y],
                  [x, full.top + 3], [x, full.bottom - 3]];
  const covered = points.map(([x, y]) => document.elementFromPoint(x, y))
    .filter((hit) => !el.contains(hit)).map((hit) => `${hit?.tagName}.${hit?.className}`);
  return { full: [full.left, full.top, full.right, full.bottom], visible: [l, t, r, b],
           covered, cut: el.scrollWidth > el.clientWidth + 1 };
}"""


def set_text_zoom(app: App, percent: int) -> None:
    """The browser's own text size setting (Chrome's font size), as a low-vision reader sets it."""
    cdp = app.context.new_cdp_session(app.page)
    cdp.send("Page.enable")
    cdp.send(
        "Page.setFontSizes",
        {"fontSizes": {"standard": 16 * percent // 100, "fixed": 13 * percent // 100}},
    )


def assert_fully_visible(app: App, locator: Any, what: str) -> None:
    """The element's clipped visible box is its whole box, nothing covers it, no text is cut."""
    seen = locator.evaluate(VISIBLE_BOX)
    full, visible = seen["full"], seen["visible"]
    assert all(abs(a - b) < 1 for a, b in zip(full, visible, strict=True)), (what, seen)
    assert seen["covered"] == [], (what, seen)
    assert not seen["cut"], (what, seen)


def check_card(app: App) -> None:
    """Belief text and every action of the top card can be seen whole; the page is not wider."""
    card = app.top_card()
    app.page.evaluate("() => (document.getElementById('toast').hidden = true)")  # tested below
    text = card.locator(".belief-text")
    assert text.inner_text().startswith("Split PDFs over 10 MB")
    assert_fully_visible(app, text, "belief text")
    for name in ("Forget", "Edit", "Keep"):
        assert_fully_visible(app, card.get_by_role("button", name=name, exact=True), name)
    assert_fully_visible(app, card.get_by_role("button", name="Forget with a reason…"), "reason")
    assert app.page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")


@pytest.mark.parametrize("zoom", [100, 200])
@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_the_belief_and_the_actions_are_always_readable(
    chromium, server, admin, seeded, size, zoom
):
    app = open_app(chromium, server, admin, seeded, viewport=VIEWPORTS[size])
    try:
        set_text_zoom(app, zoom)
        app.pair()
        if zoom == 200:
            base = app.page.evaluate("() => parseFloat(getComputedStyle(document.body).fontSize)")
            assert base == 32
        check_card(app)
        # Evidence open: the details scroll inside the card, the belief stays unclipped.
        app.top_card().locator(".evidence summary").click()
        app.top_card().locator(".episode").nth(1).wait_for()
        check_card(app)
        app.watch.check()
    finally:
        app.context.close()


_TOAST_AND_BUTTONS = """(buttons) => buttons.map((button) => {
  button.scrollIntoView({ block: "nearest" });
  const toast = document.querySelector("#toast .toast-body");
  const box = (el) => {
    if (!el || el.closest("[hidden]")) return null;
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, width: r.width, height: r.height };
  };
  return [box(toast), box(button)];
})"""


@pytest.mark.parametrize("size", ["small-phone", "phone", "phone-sideways"])
def test_the_toast_never_covers_the_actions(chromium, server, admin, seeded, size) -> None:
    app = open_app(
        chromium, server, admin, seeded, viewport=VIEWPORTS[size], has_touch=True, is_mobile=True
    )
    try:
        app.pair()
        first = app.top_id()
        app.top_card().get_by_role("button", name="Keep", exact=True).click()
        app.wait_top_not(first)
        toast = app.page.locator("#toast .toast-body")
        toast.wait_for()
        card = app.top_card()
        names = ["Forget", "Edit", "Keep", "Forget with a reason…"]
        buttons = [
            card.get_by_role("button", name=name, exact=True).element_handle() for name in names
        ]
        # Scrolled to and measured in one script: the toast lives 6 s, and on loaded cores four
        # round trips to the browser could outlast it.
        boxes = app.page.evaluate(_TOAST_AND_BUTTONS, buttons)
        for name, (a, b) in zip(names, boxes, strict=True):
            assert a is not None, f"the toast was gone before {name!r} was measured"
            apart = (
                a["x"] + a["width"] <= b["x"]
                or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"]
                or b["y"] + b["height"] <= a["y"]
            )
            assert apart, (name, a, b)
        app.watch.check()
    finally:
        app.context.close()


def test_a_swipe_never_widens_the_page(chromium, server, admin, seeded) -> None:
    app = open_app(
        chromium, server, admin, seeded, viewport=VIEWPORTS["phone"], has_touch=True, is_mobile=True
    )
    try:
        app.pair()
        card = app.top_card()
        box = card.locator(".belief-text").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        cdp = app.context.new_cdp_session(app.page)
        cdp.send(
            "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]}
        )
        widths = []
        for step in range(1, 11):
            point = {"x": x + 30 * step, "y": y}
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
            widths.append(
                app.page.evaluate("() => [innerWidth, document.documentElement.scrollWidth]")
            )
        cdp.send("Input.dispatchTouchEvent", {"type": "touchCancel", "touchPoints": []})
        assert all(w == [390, 390] for w in widths), widths
        app.watch.check()
    finally:
        app.context.close()


def test_swipe_up_edits_even_when_the_card_body_scrolls(chromium, server, admin, seeded) -> None:
    app = open_app(
        chromium,
        server,
        admin,
        seeded,
        viewport=VIEWPORTS["small-phone"],
        has_touch=True,
        is_mobile=True,
    )
    try:
        app.pair()
        card = app.top_card()
        card.locator(".evidence summary").click()
        card.locator(".episode").nth(1).wait_for()
        app.page.wait_for_function(
            "() => { const b = document.querySelector('.card.depth-0 .card-body');"
            " return b.scrollHeight > b.clientHeight + 1 && b.style.touchAction === 'pan-y'; }"
        )
        card.locator(".belief-text").scroll_into_view_if_needed()
        touch_swipe(app, card, 0, -200)
        app.page.locator("#stack .card.depth-0 textarea.edit-text").wait_for()
        app.watch.check()
    finally:
        app.context.close()
