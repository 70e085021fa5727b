"""Settings for the person behind the device: their name (shown in History) and when they are
notified; a bad setting is refused by name and nothing is saved."""

from __future__ import annotations

from tests.browser.conftest import App


def test_name_and_notification_settings_round_trip_and_history_names_the_reviewer(
    app: App,
) -> None:
    app.watch.expect_network("422")
    app.pair("/?view=settings")
    page = app.page
    page.get_by_label("Your name").fill("Ana Lima")
    page.get_by_role("button", name="Save name").click()
    page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('as Ana Lima')"
    )
    page.get_by_label("Quiet hours").check()
    page.get_by_label("Time zone").fill("Mars/Olympus")
    page.get_by_role("button", name="Save notification settings").click()
    page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('quiet_hours.time_zone')"
    )
    key = page.evaluate("async () => (await self.CredenceDB.get('auth')).key")
    with app.server.client(key) as phone:
        assert phone.get("/api/v1/me/notifications").json()["quiet_hours"] is None
        page.get_by_label("Time zone").fill("Europe/Berlin")
        page.get_by_label("Notifications", exact=True).select_option("each")
        page.get_by_label("Remind me after (hours)").fill("6")
        page.get_by_label("Digests at most every (hours)").fill("1.5")
        page.get_by_label("Weekly report", exact=True).select_option("friday")
        page.get_by_label("Hour of the weekly report").fill("16")
        page.get_by_role("button", name="Save notification settings").click()
        page.wait_for_function(
            "() => document.querySelector('#toast')?.textContent.includes('settings saved')"
        )
        saved = phone.get("/api/v1/me/notifications").json()
        assert saved["mode"] == "each" and saved["remind_after_hours"] == 6
        assert saved["digest_spacing_minutes"] == 90
        assert saved["quiet_hours"]["time_zone"] == "Europe/Berlin"
        assert saved["weekly_report"] == {"enabled": True, "weekday": "friday", "hour": 16}
        page.get_by_role("button", name="Snooze 1 hour").click()
        page.locator("#snooze-state").filter(has_text="Snoozed until").wait_for()
        assert phone.get("/api/v1/me/notifications").json()["snooze_until"] is not None
        belief = app.ids["split_pdfs"]
        current = phone.get(f"/api/v1/beliefs/{belief}").json()
        phone.post(
            f"/api/v1/beliefs/{belief}/forget",
            json={},
            headers={"If-Match": f'"{current["version"]}"'},
        ).raise_for_status()
    page.goto(f"{app.url}/?view=history")
    page.get_by_text("Ana Lima (").first.wait_for()


def test_an_admin_assigns_and_unassigns_reviewers_per_agent(app: App) -> None:
    page = app.page
    page.goto(app.url)
    page.wait_for_function("() => self.CredenceDB !== undefined")
    admin_key = app.admin.headers["Authorization"].removeprefix("Bearer ")
    # The admin's own device: its key kept where pairing keeps one.
    page.evaluate("(key) => self.CredenceDB.set('auth', { key })", admin_key)
    code = app.admin.post("/api/v1/pairing-codes", json={"agents": ["ingest"]}).json()["code"]
    with app.server.client() as anonymous:
        phone = anonymous.post("/api/v1/pair", json={"code": code}).json()["key"]
    with app.server.client(phone) as client:
        client.patch("/api/v1/me", json={"name": "Bo"}).raise_for_status()
        reviewer_id = client.get("/api/v1/me").json()["reviewer_id"]
    page.goto(f"{app.url}/?view=settings")
    page.get_by_role("heading", name="Who reviews which agent").wait_for()
    box = page.locator(f"#route-ingest-{reviewer_id}")
    assert box.is_checked()
    box.uncheck()
    page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('no longer reviews')"
    )
    items = app.admin.get("/api/v1/agents/ingest/reviewers").json()["items"]
    assert {r["id"]: r["assignment"] for r in items}[reviewer_id] == "unassigned"
    box.check()
    page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('now reviews')"
    )
    items = app.admin.get("/api/v1/agents/ingest/reviewers").json()["items"]
    assert {r["id"]: r["reviews"] for r in items}[reviewer_id] is True
    assert page.locator(f"#route-support-{reviewer_id}").count() == 0  # cannot see it
