"""The review view in real Chromium: pairing, swipes, buttons, keys, undo, conflicts, offline."""

from __future__ import annotations

from typing import Any

from harness import seed
from harness.browser import PHONE

from tests.browser.conftest import App, open_app


def drag(page: Any, card: Any, dx: float, dy: float, steps: int = 12) -> None:
    """Drag the card with the mouse (Pointer Events) from its belief text by (dx, dy)."""
    box = card.locator(".belief-text").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, steps + 1):
        page.mouse.move(x + dx * step / steps, y + dy * step / steps)
    page.mouse.up()


def touch_swipe(app: App, card: Any, dx: float, dy: float, steps: int = 10) -> None:
    """Swipe the card with a finger: real touch events through the DevTools protocol."""
    box = card.locator(".belief-text").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    cdp = app.context.new_cdp_session(app.page)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for step in range(1, steps + 1):
        point = {"x": x + dx * step / steps, "y": y + dy * step / steps}
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


def stored_auth(app: App) -> dict | None:
    """The paired key the PWA keeps in IndexedDB."""
    return app.page.evaluate("() => self.CredenceDB.get('auth')")


# --- pairing -------------------------------------------------------------------------------


def test_pairing_by_url_stores_a_working_reviewer_key(app: App) -> None:
    code = seed.pairing_code(app.admin)
    app.page.goto(f"{app.url}/?pair={code}")
    app.top_card()
    assert "pair=" not in app.page.url
    auth = stored_auth(app)
    assert auth["info"]["scope"] == "reviewer"
    with app.server.client(auth["key"]) as phone:
        me = phone.get("/api/v1/me")
    assert me.status_code == 200 and me.json()["key_id"] == auth["info"]["id"]
    assert app.page.locator("#pending-count").inner_text() == "5"


def test_a_used_pairing_code_says_so_instead_of_a_blank_page(app: App) -> None:
    code = seed.pairing_code(app.admin)
    app.page.goto(f"{app.url}/?pair={code}")
    app.top_card()
    other = open_app(app.context.browser, app.server, app.admin, app.ids)
    try:
        other.watch.expect_network("410")
        other.page.goto(f"{app.url}/?pair={code}")
        error = other.page.locator("#pair-error")
        error.wait_for()
        assert "already used" in error.inner_text()
        assert other.page.locator("#view-pair").is_visible()
        assert other.page.locator("#view-review").is_hidden()
        other.page.fill("#pair-code", "not a code!")
        other.page.click("#pair-form button[type=submit]")
        other.page.wait_for_function(
            "() => document.querySelector('#pair-error').textContent.includes('not a pairing')"
        )
        fresh = seed.pairing_code(app.admin)
        other.page.fill("#pair-code", f"{app.url}/?pair={fresh}")
        other.page.click("#pair-form button[type=submit]")
        other.top_card()
        other.watch.check()
    finally:
        other.context.close()


def test_an_invalid_code_is_refused_in_words(app: App) -> None:
    app.watch.expect_network("410")
    app.page.goto(f"{app.url}/?pair=nonsense-code")
    error = app.page.locator("#pair-error")
    error.wait_for()
    assert "not valid" in error.inner_text()
    assert stored_auth(app) is None


def test_unpair_forgets_the_key(app: App) -> None:
    app.pair("/?view=settings")
    app.page.get_by_role("button", name="Unpair this device").click()
    app.page.get_by_role("button", name="Tap again to unpair").click()
    app.page.locator("#view-pair").wait_for()
    assert stored_auth(app) is None


# --- deciding ------------------------------------------------------------------------------


def test_buttons_have_exactly_the_names_keep_forget_edit(app: App) -> None:
    app.pair()
    app.top_card()
    for name in ("Keep", "Forget", "Edit"):
        assert app.page.get_by_role("button", name=name, exact=True).count() == 1, name


def test_swipe_right_keeps(app: App) -> None:
    app.pair()
    card = app.top_card()
    belief_id = app.top_id()
    assert belief_id == app.ids["split_pdfs"]  # newest first
    drag(app.page, card, 320, 10)
    kept = app.wait_status(belief_id, "active")
    assert kept["decided_by"] is not None
    assert seed.audit_actions(app.admin, belief_id) == ["proposed", "kept"]
    app.wait_top_not(belief_id)
    assert app.page.locator("#pending-count").inner_text() == "4"


def test_a_short_drag_springs_back_and_decides_nothing(app: App) -> None:
    app.pair()
    card = app.top_card()
    belief_id = app.top_id()
    drag(app.page, card, 60, 0)
    app.page.wait_for_timeout(300)
    assert app.top_id() == belief_id
    assert app.status(belief_id) == "pending"


def test_swipe_left_forgets_with_a_finger(chromium: Any, server, admin, seeded) -> None:
    app = open_app(chromium, server, admin, seeded, viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        app.pair()
        card = app.top_card()
        belief_id = app.top_id()
        touch_swipe(app, card, -300, 0)
        forgotten = app.wait_status(belief_id, "forgotten")
        assert forgotten["forgotten_reason"] is None
        assert seed.audit_actions(admin, belief_id) == ["proposed", "forgotten"]
        app.watch.check()
    finally:
        app.context.close()


def test_swipe_up_opens_edit_and_save_activates_the_new_words(app: App) -> None:
    app.pair()
    card = app.top_card()
    belief_id = app.top_id()
    drag(app.page, card, 0, -260)
    area = app.page.locator("#stack .card.depth-0 textarea.edit-text")
    area.wait_for()
    area.fill("Split PDFs over 8 MB before uploading them.")
    app.page.get_by_role("button", name="Save", exact=True).click()
    edited = app.wait_status(belief_id, "active")
    assert edited["content"] == "Split PDFs over 8 MB before uploading them."
    assert edited["provenance"] == "owner"
    assert seed.audit_actions(app.admin, belief_id) == ["proposed", "edited"]


def test_edit_button_saves_in_place(app: App) -> None:
    app.pair()
    belief_id = app.top_id()
    app.page.get_by_role("button", name="Edit", exact=True).click()
    area = app.page.locator("#stack .card.depth-0 textarea.edit-text")
    assert area.input_value().startswith("Split PDFs over 10 MB")
    area.fill("Always split PDFs larger than 10 MB.")
    app.page.get_by_role("button", name="Save", exact=True).click()
    edited = app.wait_status(belief_id, "active")
    assert edited["content"] == "Always split PDFs larger than 10 MB."


def test_forget_with_a_reason(app: App) -> None:
    app.pair()
    belief_id = app.top_id()
    app.page.get_by_role("button", name="Forget with a reason…").click()
    app.page.get_by_label("Reason for forgetting").fill("Only true for scanned PDFs")
    app.page.get_by_role("button", name="Forget with reason").click()
    forgotten = app.wait_status(belief_id, "forgotten")
    assert forgotten["forgotten_reason"] == "Only true for scanned PDFs"


def test_keyboard_shortcuts_and_undo(app: App) -> None:
    app.pair()
    page = app.page
    first = app.top_id()
    page.keyboard.press("k")
    app.wait_status(first, "active")
    app.wait_top_not(first)
    page.keyboard.press("u")
    app.wait_status(first, "pending")
    page.wait_for_function(
        "(id) => document.querySelector('#stack .card.depth-0')?.dataset.beliefId === id", arg=first
    )
    assert seed.audit_actions(app.admin, first) == ["proposed", "kept", "reopened"]
    page.keyboard.press("ArrowRight")
    app.wait_status(first, "active")
    app.wait_top_not(first)

    second = app.top_id()  # the untrusted one: skip it with ← after checking K does nothing
    assert second == app.ids["mail_exports"]
    page.keyboard.press("K")
    page.wait_for_timeout(200)
    assert app.status(second) == "pending"
    page.keyboard.press("ArrowLeft")
    app.wait_status(second, "forgotten")
    app.wait_top_not(second)

    third = app.top_id()
    page.keyboard.press("f")
    app.wait_status(third, "forgotten")
    app.wait_top_not(third)
    page.keyboard.press("u")
    app.wait_status(third, "pending")

    page.keyboard.press("e")
    area = page.locator("#stack .card.depth-0 textarea.edit-text")
    area.wait_for()
    page.keyboard.press("Escape")
    area.wait_for(state="detached")
    assert app.status(third) == "pending"
    page.keyboard.press("ArrowUp")
    area.wait_for()
    area.fill("Retry failed uploads with backoff, five times at most.")
    page.keyboard.press("Control+Enter")  # it replaces a belief: focus goes to the choice
    page.keyboard.press("Enter")
    edited = app.wait_status(third, "active")
    assert edited["content"] == "Retry failed uploads with backoff, five times at most."


def test_untrusted_belief_cannot_be_kept_but_can_be_edited(app: App) -> None:
    belief_id = app.ids["mail_exports"]
    app.pair(f"/?belief={belief_id}")
    app.page.wait_for_function(
        "(id) => document.querySelector('#stack .card.depth-0')?.dataset.beliefId === id",
        arg=belief_id,
    )
    keep = app.page.get_by_role("button", name="Keep", exact=True)
    assert keep.is_disabled()
    described = keep.get_attribute("aria-describedby")
    reason = app.page.locator(f"#{described}")
    assert "third-party content" in reason.inner_text()
    assert reason.is_visible()
    assert "third-party content" in app.top_card().locator(".reasons").inner_text()
    drag(app.page, app.top_card(), 320, 0)
    app.page.wait_for_timeout(300)
    assert app.status(belief_id) == "pending"
    assert app.top_id() == belief_id
    app.page.get_by_role("button", name="Edit", exact=True).click()
    app.page.locator("textarea.edit-text").fill("Keep exports on our own backup server.")
    app.page.get_by_role("button", name="Save", exact=True).click()
    edited = app.wait_status(belief_id, "active")
    assert edited["provenance"] == "owner"


def test_a_deep_link_opens_its_card(app: App) -> None:
    oldest = app.ids["apology"]
    app.pair(f"/?belief={oldest}")
    card = app.top_card()
    app.page.wait_for_function(
        "(id) => document.querySelector('#stack .card.depth-0')?.dataset.beliefId === id",
        arg=oldest,
    )
    assert "Open refund replies with an apology" in card.locator(".belief-text").inner_text()
    assert "Support bot" in card.inner_text()
    assert app.page.url == f"{app.url}/"


def test_a_deep_link_to_a_decided_belief_says_so_and_offers_undo(app: App) -> None:
    seed.decide(app.admin, app.ids["apology"], "keep")
    app.pair(f"/?belief={app.ids['apology']}")
    notice = app.top_card().locator(".notice")
    notice.wait_for()
    assert "Already kept" in notice.inner_text()
    app.page.get_by_role("button", name="Undo", exact=True).click()
    app.wait_status(app.ids["apology"], "pending")


def test_supersede_shows_the_belief_it_replaces_as_a_diff(app: App) -> None:
    app.pair(f"/?belief={app.ids['backoff']}")
    target = app.top_card().locator(".target")
    target.locator(".diff").wait_for()
    assert target.locator(".diff-del").first.inner_text().strip() == "three"
    assert "exponential backoff" in target.locator(".diff-ins").first.inner_text()


def test_contradiction_quotes_the_belief_it_contradicts(app: App) -> None:
    app.pair(f"/?belief={app.ids['friday_deploy']}")
    quote = app.top_card().locator(".reason-quote")
    app.page.wait_for_function(
        "() => document.querySelector('.reason-quote')?.textContent.includes('Fridays')"
    )
    assert quote.inner_text() == "Never deploy the ingester on Fridays."


def test_evidence_shows_the_source_episodes_on_demand(app: App) -> None:
    app.pair()
    card = app.top_card()
    assert card.locator(".episode").count() == 0
    card.locator(".evidence summary").click()
    card.locator(".episode").nth(1).wait_for()
    text = card.locator(".episodes").inner_text()
    assert "14 MB scanned PDF" in text
    assert "Split anything over 10 MB first, please." in text


def test_agent_filter_narrows_the_queue(app: App) -> None:
    app.pair()
    app.top_card()
    app.page.select_option("#agent-filter", "support")
    app.page.wait_for_function(
        "(id) => document.querySelector('#stack .card.depth-0')?.dataset.beliefId === id",
        arg=app.ids["apology"],
    )
    assert app.page.locator("#stack .card").count() == 1
    # The filter never hides work: the others are counted, and the tab badge keeps the total.
    progress = app.page.locator("#review-progress")
    assert progress.inner_text() == "1 to review · 4 waiting for other agents"
    assert app.page.locator("#pending-count").inner_text() == "5"
    app.page.keyboard.press("f")
    app.wait_status(app.ids["apology"], "forgotten")
    app.page.wait_for_function(
        "() => document.querySelector('#review-progress').textContent"
        " === 'Nothing to review · 4 waiting for other agents · 1 done'"
    )
    assert app.page.locator("#pending-count").inner_text() == "4"
    assert "choose “All agents”" in app.page.locator("#review-stats").inner_text()


# --- conflicts and offline -----------------------------------------------------------------


def test_a_412_reloads_the_card_and_says_why(app: App) -> None:
    app.watch.expect_network("412")
    app.pair()
    belief_id = app.top_id()
    seed.decide(app.admin, belief_id, "keep")  # behind the page's back: v2 active ...
    seed.decide(app.admin, belief_id, "reopen")  # ... and v3 pending again
    app.page.keyboard.press("k")
    notice = app.page.locator("#stack .card.depth-0 .notice")
    notice.wait_for()
    assert "changed since you loaded it" in notice.inner_text()
    assert app.top_id() == belief_id
    assert app.status(belief_id) == "pending"
    app.page.keyboard.press("k")
    app.wait_status(belief_id, "active")
    assert seed.audit_actions(app.admin, belief_id) == ["proposed", "kept", "reopened", "kept"]


def test_a_412_on_a_belief_decided_elsewhere_drops_the_card(app: App) -> None:
    app.watch.expect_network("412")
    app.pair()
    belief_id = app.top_id()
    seed.decide(app.admin, belief_id, "forget", {"reason": "decided on the desktop"})
    app.page.keyboard.press("k")
    app.page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('already forgotten')"
    )
    app.wait_top_not(belief_id)
    assert app.status(belief_id) == "forgotten"


def test_an_offline_decision_replays_exactly_once(app: App) -> None:
    app.watch.expect_network("ERR_INTERNET_DISCONNECTED")
    app.pair()
    app.page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    belief_id = app.top_id()
    app.context.set_offline(True)
    app.page.locator("#offline-badge").wait_for()
    app.page.keyboard.press("k")
    pill = app.page.locator("#sync-status")
    pill.wait_for()
    assert pill.inner_text() == "1 waiting to sync"
    app.wait_top_not(belief_id)
    assert app.status(belief_id) == "pending"
    app.context.set_offline(False)
    pill.wait_for(state="hidden")
    app.wait_status(belief_id, "active")
    # A restart of the app (and of its service worker) must not send it again.
    app.page.reload()
    app.top_card()
    app.page.wait_for_timeout(500)
    assert seed.audit_actions(app.admin, belief_id).count("kept") == 1
    assert app.page.evaluate("() => self.CredenceDB.outbox()") == []


def test_settings_lists_what_waits_to_sync(app: App) -> None:
    app.watch.expect_network("ERR_INTERNET_DISCONNECTED")
    app.pair()
    belief_id = app.top_id()
    # Settings loads its module when first opened: offline, only the worker's cache has it.
    app.page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    app.context.set_offline(True)
    app.page.keyboard.press("f")
    app.page.locator("#sync-status").wait_for()
    app.page.get_by_role("link", name="Settings").click()
    waiting = app.page.locator("#settings-body .waiting li")
    waiting.wait_for()
    assert waiting.inner_text().startswith("Forget: Split PDFs over 10 MB")
    app.context.set_offline(False)
    app.wait_status(belief_id, "forgotten")
    app.page.locator("#sync-status").wait_for(state="hidden")


def test_undo_of_an_offline_decision_never_reaches_the_server(app: App) -> None:
    app.watch.expect_network("ERR_INTERNET_DISCONNECTED")
    app.pair()
    belief_id = app.top_id()
    app.context.set_offline(True)
    app.page.keyboard.press("f")
    app.page.locator("#sync-status").wait_for()
    app.page.keyboard.press("u")
    app.page.locator("#sync-status").wait_for(state="hidden")
    assert app.top_id() == belief_id
    app.context.set_offline(False)
    app.page.wait_for_timeout(500)
    assert seed.audit_actions(app.admin, belief_id) == ["proposed"]


def test_the_shell_loads_offline_from_the_service_worker_cache(app: App) -> None:
    app.watch.expect_network("ERR_INTERNET_DISCONNECTED")
    app.pair()
    app.page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    app.page.wait_for_function(
        "async () => (await (await caches.open('credence-shell-v1')).keys()).length >= 10"
    )
    app.context.set_offline(True)
    app.page.reload()
    app.page.locator("#view-review").wait_for()
    error = app.page.locator("#review-error")
    error.wait_for()
    assert error.inner_text().startswith("You are offline. Showing the cards as they were")
    # The last pending list (kept in IndexedDB) still shows the cards.
    assert app.top_id() == app.ids["split_pdfs"]
    assert app.page.locator("#offline-badge").inner_text() == "Offline"


def test_csp_probe_catches_a_violation(app: App) -> None:
    """The zero-violation checks are only worth something if the probe sees violations."""
    app.pair()
    app.page.evaluate(
        "() => { const s = document.createElement('script'); s.textContent = '1';"
        " document.body.append(s); }"
    )
    app.page.wait_for_function("() => true")
    app.page.wait_for_timeout(200)
    assert any(v["directive"].startswith("script-src") for v in app.watch.csp_violations)
    assert any("Content Security Policy" in text for text in app.watch.console_errors)
    app.watch.csp_violations.clear()
    app.watch.console_errors.clear()


def test_undo_pressed_while_the_keep_is_in_flight_waits_for_it_and_reopens(app: App) -> None:
    held: list = []
    app.page.route("**/api/v1/beliefs/*/keep", lambda route: held.append(route))
    app.pair()
    page = app.page
    first = app.top_id()
    page.keyboard.press("k")
    while not held:
        page.wait_for_timeout(20)
    page.keyboard.press("u")  # the Keep has not reached the server yet
    page.wait_for_timeout(200)
    assert app.status(first) == "pending"
    held[0].continue_()
    # Keep then reopen can both land between two polls of the status: watch the audit trail.
    expected = ["proposed", "kept", "reopened"]
    for _ in range(200):
        if seed.audit_actions(app.admin, first) == expected:
            break
        page.wait_for_timeout(50)
    assert seed.audit_actions(app.admin, first) == expected
    assert app.status(first) == "pending"
