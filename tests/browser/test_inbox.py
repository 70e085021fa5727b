"""The inbox: every pending belief as a list, keyboard multi-select, batch Keep / Forget with
each decision audited and partial failures told on their rows."""

from __future__ import annotations

from harness import seed

from tests.browser.conftest import App


def test_batch_keep_reports_each_failure_and_applies_the_rest(app: App) -> None:
    app.pair()
    app.top_card()
    app.page.get_by_role("link", name="List all").click()
    rows = app.page.locator("#inbox-list .inbox-item")
    rows.nth(4).wait_for()
    assert app.page.locator("#inbox-count").inner_text() == "5 beliefs to review"
    assert "third-party" in rows.nth(1).inner_text()
    assert (
        "Contradicts a belief in memory"
        in app.page.locator(f'[data-belief-id="{app.ids["friday_deploy"]}"]').inner_text()
    )
    # Keyboard only: Select all with Space, then Tab to "Keep selected" and press Enter.
    app.page.get_by_label("Select all").focus()
    app.page.keyboard.press("Space")
    assert app.page.locator("#inbox-count").inner_text() == "5 beliefs to review · 5 selected"
    app.page.keyboard.press("Tab")
    assert app.page.evaluate("() => document.activeElement.id") == "inbox-keep"
    seed.decide(app.admin, app.ids["apology"], "keep")  # decided elsewhere: a stale version
    app.watch.expect_network("412")
    app.page.keyboard.press("Enter")
    toast = app.page.locator("#toast")
    app.page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('not kept')"
    )
    assert "1 kept" in toast.inner_text() and "4 not kept" in toast.inner_text()
    assert app.wait_status(app.ids["split_pdfs"], "active")
    for name in ("mail_exports", "friday_deploy", "backoff"):
        assert app.status(app.ids[name]) == "pending", name
    assert seed.audit_actions(app.admin, app.ids["split_pdfs"]) == ["proposed", "kept"]
    notices = app.page.locator("#inbox-list .notice")
    assert notices.count() == 4
    text = app.page.locator("#inbox-list").inner_text()
    assert "third-party content" in text and "Choose on its card" in text
    assert "It changed since the list loaded" in text


def test_batch_forget_of_a_selection(app: App) -> None:
    app.pair("/?view=inbox")
    rows = app.page.locator("#inbox-list .inbox-item")
    rows.nth(4).wait_for()
    for name in ("mail_exports", "backoff"):
        app.page.locator(f'[data-belief-id="{app.ids[name]}"] input[type=checkbox]').check()
    assert app.page.locator("#inbox-count").inner_text() == "5 beliefs to review · 2 selected"
    app.page.get_by_role("button", name="Forget selected").click()
    app.wait_status(app.ids["mail_exports"], "forgotten")
    app.wait_status(app.ids["backoff"], "forgotten")
    app.page.wait_for_function(
        "() => document.querySelector('#inbox-count').textContent === '3 beliefs to review'"
    )
    assert app.page.locator("#pending-count").inner_text() == "3"
    assert app.page.locator("#tabs a[data-view=review]").get_attribute("aria-current") == "page"
