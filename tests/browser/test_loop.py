"""The decision loop: counts from the server's answers, focus on the next card, a revoked key
sends to re-pairing, single-key shortcuts can be switched off, ArrowUp scrolls when scrolled."""

from __future__ import annotations

from typing import Any

from tests.browser.conftest import App, open_app
from tests.browser.test_layout import VIEWPORTS

PROGRESS = "() => document.querySelector('#review-progress').textContent"
FOCUSED = """() => {
  const el = document.activeElement;
  const card = el.closest('#stack .card.depth-0');
  if (!card || !el.closest('.card-actions')) return el.tagName;
  return [card.dataset.beliefId, el.textContent.trim()];
}"""


def wait_progress(app: App, text: str) -> None:
    """Wait until the review header says exactly ``text``."""
    app.page.wait_for_function(f"(t) => ({PROGRESS})() === t", arg=text)


def test_counts_follow_each_answer_and_focus_moves_to_the_next_card(app: App) -> None:
    app.pair()
    page = app.page
    wait_progress(app, "5 to review")
    first = app.top_id()
    app.top_card().get_by_role("button", name="Keep", exact=True).click()
    app.wait_status(first, "active")
    wait_progress(app, "4 to review · 1 done")
    assert page.locator("#review-meter").is_visible()
    # The next card is the untrusted one (Keep is off), so focus lands on its first action.
    second = app.top_id()
    assert page.evaluate(FOCUSED) == [second, "Forget"]
    page.keyboard.press("Enter")  # the focused Forget: no Tab needed
    app.wait_status(second, "forgotten")
    wait_progress(app, "3 to review · 2 done")
    third = app.top_id()
    assert page.evaluate(FOCUSED) == [third, "Forget"]
    page.keyboard.press("u")
    app.wait_status(second, "pending")
    wait_progress(app, "4 to review · 1 done")
    assert page.evaluate(FOCUSED)[0] == second


def test_a_revoked_key_sends_to_pairing_with_an_explanation(app: App) -> None:
    app.watch.expect_network("401")
    app.pair()
    key_id = app.page.evaluate("() => self.CredenceDB.get('auth')")["info"]["id"]
    assert app.admin.post(f"/api/v1/keys/{key_id}/revoke").status_code == 200
    belief_id = app.top_id()
    app.page.keyboard.press("f")
    message = app.page.locator("#pair-message")
    message.wait_for()
    assert "no longer accepted" in message.inner_text()
    assert "Pair it again" in message.inner_text()
    assert "unknown or revoked key" not in app.page.locator("body").inner_text()
    assert app.status(belief_id) == "pending"


def test_single_key_shortcuts_can_be_switched_off(app: App) -> None:
    app.pair("/?view=settings")
    box = app.page.get_by_label("Single-key shortcuts in Review", exact=False)
    box.wait_for()
    assert box.is_checked()
    box.uncheck()
    app.page.locator("#tabs a[data-view=review]").click()
    belief_id = app.top_id()
    app.page.wait_for_function(
        "() => document.querySelector('#stack .card.depth-0 .act-keep')"
        "?.getAttribute('aria-keyshortcuts') === null"
    )
    assert app.page.locator("#review-hints").is_hidden()
    for key in ("f", "k", "ArrowLeft", "e"):
        app.page.keyboard.press(key)
    app.page.wait_for_timeout(300)
    assert app.top_id() == belief_id
    assert app.status(belief_id) == "pending"
    assert app.page.locator("textarea.edit-text").count() == 0
    app.page.reload()
    app.top_card()
    app.page.keyboard.press("f")
    app.page.wait_for_timeout(300)
    assert app.status(belief_id) == "pending"


def test_arrow_up_scrolls_instead_of_editing_when_scrolled(chromium: Any, server, admin, seeded):
    app = open_app(chromium, server, admin, seeded, viewport=VIEWPORTS["small-phone"])
    try:
        app.pair()
        card = app.top_card()
        card.locator(".evidence summary").click()
        card.locator(".episode").nth(1).wait_for()
        app.page.evaluate("() => window.scrollTo(0, 200)")
        app.page.locator("body").focus()
        app.page.keyboard.press("ArrowUp")
        app.page.wait_for_timeout(200)
        assert app.page.locator("textarea.edit-text").count() == 0
        # Focus in the card body (the evidence): arrows belong to it, not to the shortcuts.
        app.page.evaluate("() => window.scrollTo(0, 0)")
        card.locator(".evidence summary").focus()
        app.page.keyboard.press("ArrowUp")
        app.page.keyboard.press("ArrowRight")
        app.page.wait_for_timeout(200)
        assert app.page.locator("textarea.edit-text").count() == 0
        assert app.status(app.ids["split_pdfs"]) == "pending"
        # At the very top, with focus outside the card body, ArrowUp edits as before.
        app.page.evaluate(
            "() => { window.scrollTo(0, 0);"
            " document.querySelector('.card.depth-0 .card-body').scrollTop = 0; }"
        )
        app.page.locator("#review-title").click()
        app.page.keyboard.press("ArrowUp")
        app.page.locator("textarea.edit-text").wait_for()
        app.watch.check()
    finally:
        app.context.close()


def test_the_edit_hint_names_keys_only_where_there_is_a_keyboard(chromium, server, admin, seeded):
    hints = {}
    for name, options in {"phone": {"has_touch": True, "is_mobile": True}, "desktop": {}}.items():
        app = open_app(chromium, server, admin, seeded, viewport=VIEWPORTS[name], **options)
        try:
            app.pair()
            app.top_card().get_by_role("button", name="Edit", exact=True).click()
            hints[name] = app.top_card().locator(".edit-box .hint").inner_text()
        finally:
            app.context.close()
    assert "Ctrl+Enter" not in hints["phone"]
    assert "Ctrl+Enter saves, Esc cancels." in hints["desktop"]
