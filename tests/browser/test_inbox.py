"""The inbox: every pending belief as a list, keyboard multi-select, batch Keep / Forget with
each decision audited and partial failures told on their rows."""

from __future__ import annotations

import pytest
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
    # The header's count follows from its own refresh, which may land just after the list's.
    app.page.wait_for_function("() => document.querySelector('#pending-count').textContent === '3'")
    assert app.page.locator("#tabs a[data-view=review]").get_attribute("aria-current") == "page"


# Every chip of every inbox row, measured: its box cut by each clipping ancestor and the viewport
# must be its whole box, and no chip's text may be wider than the chip (a nowrap label overflows).
CHIPS_CLIPPED = """() => [...document.querySelectorAll('#inbox-list .inbox-item .chip')]
.map((el) => {
  const full = el.getBoundingClientRect();
  let [l, r] = [full.left, full.right];
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    const box = p.getBoundingClientRect();
    [l, r] = [Math.max(l, box.left), Math.min(r, box.right)];
  }
  [l, r] = [Math.max(l, 0), Math.min(r, innerWidth)];
  return { text: el.textContent, full: [full.left, full.right], visible: [l, r],
           cut: el.scrollWidth > el.clientWidth + 1 };
})"""


@pytest.mark.parametrize("width", [320, 360, 390])
def test_inbox_labels_stay_inside_their_row_on_a_phone(app: App, width: int) -> None:
    app.page.set_viewport_size({"width": width, "height": 800})
    app.pair("/?view=inbox")
    app.page.locator("#inbox-list .inbox-item").nth(4).wait_for()
    chips = app.page.evaluate(CHIPS_CLIPPED)
    labels = [chip["text"] for chip in chips]
    assert any(text.startswith("Learned from third-party content") for text in labels), labels
    for chip in chips:
        full, visible = chip["full"], chip["visible"]
        assert abs(full[0] - visible[0]) < 1 and abs(full[1] - visible[1]) < 1, chip
        assert not chip["cut"], chip
    assert app.page.evaluate("() => document.documentElement.scrollWidth") <= width
