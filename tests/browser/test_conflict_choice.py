"""Conflicts resolved on the card: Keep (or Edit) retires the old belief or keeps both, against
the real Keep/Edit-with-retire API; the gate's flags in words; the Memory view marks rivals."""

from __future__ import annotations

from harness import seed

from tests.browser.conftest import App


def open_card(app: App, belief_id: str) -> None:
    """Pair with the belief's card on top."""
    app.pair(f"/?belief={belief_id}")
    app.page.wait_for_function(
        "(id) => document.querySelector('#stack .card.depth-0')?.dataset.beliefId === id",
        arg=belief_id,
    )


def test_keep_and_retire_the_old_one_then_undo_restores_it(app: App) -> None:
    new, old = app.ids["friday_deploy"], app.ids["fridays"]
    open_card(app, new)
    page = app.page
    page.keyboard.press("k")  # a conflict is never decided by one key: the choice opens
    retire = page.get_by_role("button", name="Keep and retire the old one")
    retire.wait_for()
    assert page.evaluate("() => document.activeElement.textContent") == (
        "Keep and retire the old one"
    )
    assert page.get_by_role("button", name="Keep both").is_visible()
    assert app.status(new) == "pending"
    retire.click()
    app.wait_status(new, "active")
    retired = app.wait_status(old, "superseded")
    assert retired["superseded_by"] == new
    assert seed.audit_actions(app.admin, old)[-1] == "superseded"
    page.keyboard.press("u")
    app.wait_status(new, "pending")
    app.wait_status(old, "active")
    assert seed.audit_actions(app.admin, old)[-1] == "restored"


def test_keep_both_leaves_both_active_and_memory_marks_them(app: App) -> None:
    new, old = app.ids["friday_deploy"], app.ids["fridays"]
    open_card(app, new)
    app.top_card().get_by_role("button", name="Keep", exact=True).click()
    app.page.get_by_role("button", name="Keep both").click()
    app.wait_status(new, "active")
    assert app.status(old) == "active"
    assert seed.audit_actions(app.admin, old) == ["proposed", "kept"]
    app.page.locator("#tabs a[data-view=memory]").click()
    for one, other in ((new, "Never deploy"), (old, "Deploy the ingester on Fridays")):
        marks = app.page.locator(f'#memory-list [data-belief-id="{one}"] .contradictions')
        marks.wait_for()
        assert other in marks.inner_text()
    assert app.page.locator("#memory-list .conflicted").count() == 2


def test_edit_and_retire_the_old_one(app: App) -> None:
    new, old = app.ids["friday_deploy"], app.ids["fridays"]
    open_card(app, new)
    app.top_card().get_by_role("button", name="Edit", exact=True).click()
    app.page.locator("textarea.edit-text").fill("Deploy on Fridays only with a rollback plan.")
    app.page.keyboard.press("Control+Enter")  # focuses the choice, decides nothing yet
    assert app.page.evaluate("() => document.activeElement.textContent") == (
        "Save and retire the old one"
    )
    assert app.status(new) == "pending"
    app.page.keyboard.press("Enter")
    edited = app.wait_status(new, "active")
    assert edited["content"] == "Deploy on Fridays only with a rollback plan."
    assert app.wait_status(old, "superseded")["superseded_by"] == new


def test_a_supersede_offers_the_same_choice(app: App) -> None:
    new, old = app.ids["backoff"], app.ids["retry"]
    open_card(app, new)
    app.top_card().get_by_role("button", name="Keep", exact=True).click()
    assert "This replaces a belief in memory" in app.top_card().inner_text()
    app.page.get_by_role("button", name="Keep both").click()
    app.wait_status(new, "active")
    assert app.status(old) == "active"


def test_the_gates_flags_read_as_words(app: App) -> None:
    old = app.ids["fridays"]
    [flagged] = seed.propose(
        app.admin,
        "ingest",
        {
            "op": "add",
            "belief": "Deploy with bun on Fridays.",
            "confidence": 0.6,
            "review_reasons": [f"contradicts:{old}", f"changes:{old}:yarn→bun", "unsourced"],
        },
    )
    open_card(app, flagged)
    reasons = app.top_card().locator(".reasons")
    app.page.wait_for_function(
        "() => document.querySelector('.reason-quote')?.textContent.includes('Never deploy')"
    )
    text = reasons.inner_text()
    assert "changes yarn → bun" in text
    assert "Cites no source episodes" in text
    assert "changes:" not in text and "unsourced" not in text
