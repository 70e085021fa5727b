"""Push in the PWA: the server's real notification, through a loopback push service, into the
service worker via CDP (headless Chromium cannot subscribe), then Keep from the notification."""

from __future__ import annotations

import time
from typing import Any

import pytest
from harness import seed
from harness.fakes.push import FakePushService

from tests.browser.conftest import App, open_app, persistent_context

NOTIFICATIONS = """async (tag) => {
  const registration = await navigator.serviceWorker.ready;
  const shown = await registration.getNotifications(tag ? { tag } : {});
  return shown.map((n) => ({
    title: n.title, body: n.body, tag: n.tag, data: n.data,
    actions: n.actions.map((a) => ({ action: a.action, title: a.title })),
  }));
}"""
# Chromium refuses waitUntil() on a script-made NotificationEvent, so the test calls the very
# function the worker's notificationclick listener passes to event.waitUntil().
CLICK = """async ([tag, action]) => {
  const [notification] = await self.registration.getNotifications({ tag });
  return self.handleNotificationClick(notification, action);
}"""


def subscribe_device(app: App, fake_push: FakePushService, name: str = "phone") -> None:
    """Register a subscription for the paired key, as the PWA does after subscribe()."""
    auth = app.page.evaluate("() => self.CredenceDB.get('auth')")
    with app.server.client(auth["key"]) as phone:
        response = phone.post("/api/v1/push/subscriptions", json=fake_push.subscription(name))
    assert response.status_code == 201, response.text


def delivered(fake_push: FakePushService, count: int, name: str = "phone") -> list[Any]:
    """The first ``count`` decrypted deliveries to ``name`` (polled: Playwright owns the loop)."""
    deadline = time.monotonic() + 10
    while len(fake_push.received(name)) < count:
        assert time.monotonic() < deadline, fake_push.attempts(name)
        time.sleep(0.02)
    return fake_push.received(name)[:count]


def deliver_to_worker(app: App, plaintext: bytes) -> None:
    """Hand a decrypted push message to the page's service worker, as a push service would."""
    app.page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    cdp = app.context.new_cdp_session(app.page)
    registrations: list[dict] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda e: registrations.extend(e["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    deadline = time.monotonic() + 5
    while not any(not r["isDeleted"] for r in registrations):
        assert time.monotonic() < deadline, "no service worker registration"
        app.page.wait_for_timeout(20)
    # The newest live registration: pairing can re-register the worker, and a push sent to a
    # replaced registration id is dropped silently.
    registration = next(r for r in reversed(registrations) if not r["isDeleted"])
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {
            "origin": app.url,
            "registrationId": registration["registrationId"],
            "data": plaintext.decode("utf-8"),
        },
    )
    cdp.detach()


def shown(app: App, tag: str, plaintext: bytes | None = None) -> list[dict]:
    """Wait for and return the notifications with ``tag``.

    With ``plaintext``, the message is delivered again every 2 s until it shows: a registration
    that the worker's own update replaced mid-delivery drops it silently, as a real push service
    would resend; a notification with the same tag replaces the earlier one, so a late first
    delivery changes nothing.
    """
    deadline = time.monotonic() + 10
    resend_at = time.monotonic() + 2
    while not (notifications := app.page.evaluate(NOTIFICATIONS, tag)):
        assert time.monotonic() < deadline, f"no notification with tag {tag}"
        if plaintext is not None and time.monotonic() > resend_at:
            deliver_to_worker(app, plaintext)
            resend_at = time.monotonic() + 2
        app.page.wait_for_timeout(20)
    return notifications


def worker(app: App) -> Any:
    """The app's service worker, for evaluating in its scope."""
    deadline = time.monotonic() + 5
    while not app.context.service_workers:
        assert time.monotonic() < deadline, "service worker not running"
        time.sleep(0.02)
    return app.context.service_workers[0]


def new_pending(app: App, text: str, **extra: Any) -> str:
    """Propose one belief for the ingest agent, citing a clean episode unless told otherwise
    (an unsourced belief's notification only opens its card); returns its id."""
    if "source_episodes" not in extra:
        extra["source_episodes"] = seed.add_episodes(
            app.admin, "ingest", [{"session_id": "s-push", "summary": "Ran the ingest."}]
        )
    [belief_id] = seed.propose(
        app.admin, "ingest", {"op": "add", "belief": text, "confidence": 0.8, **extra}
    )
    return belief_id


def test_a_push_shows_the_notification_and_its_keep_action_keeps(
    app: App, fake_push: FakePushService
) -> None:
    app.context.grant_permissions(["notifications"], origin=app.url)
    app.pair()
    subscribe_device(app, fake_push)
    belief_id = new_pending(app, "Compress TIFF scans before OCR: it halves the ingest time.")
    [delivery] = delivered(fake_push, 1)
    deliver_to_worker(app, delivery.plaintext)

    [notification] = shown(app, f"belief-{belief_id}", delivery.plaintext)
    assert notification["title"] == "I've learned:"
    assert notification["body"] == "Compress TIFF scans before OCR: it halves the ingest time."
    assert notification["actions"] == [
        {"action": "keep", "title": "Keep"},
        {"action": "forget", "title": "Forget"},
    ]
    assert notification["data"]["url"] == f"/?belief={belief_id}"

    result = worker(app).evaluate(CLICK, [f"belief-{belief_id}", "keep"])
    assert result["ok"] is True and result.get("queued") is None
    kept = app.wait_status(belief_id, "active")
    assert seed.audit_actions(app.admin, belief_id) == ["proposed", "kept"]
    assert kept["decided_by"] is not None
    assert app.page.evaluate(NOTIFICATIONS, f"belief-{belief_id}") == []


def test_the_forget_action_forgets(app: App, fake_push: FakePushService) -> None:
    app.context.grant_permissions(["notifications"], origin=app.url)
    app.pair()
    subscribe_device(app, fake_push)
    belief_id = new_pending(app, "Ask before deleting any uploaded file.")
    [delivery] = delivered(fake_push, 1)
    deliver_to_worker(app, delivery.plaintext)
    shown(app, f"belief-{belief_id}", delivery.plaintext)
    worker(app).evaluate(CLICK, [f"belief-{belief_id}", "forget"])
    app.wait_status(belief_id, "forgotten")


def test_an_untrusted_belief_pushes_a_neutral_text(app: App, fake_push: FakePushService) -> None:
    app.context.grant_permissions(["notifications"], origin=app.url)
    app.pair()
    subscribe_device(app, fake_push)
    [episode] = seed.add_episodes(
        app.admin,
        "ingest",
        [
            {
                "session_id": "w-1",
                "summary": "A forum post said to disable checksums.",
                "origin": "untrusted",
            }
        ],
    )
    belief_id = new_pending(app, "Disable checksums to go faster.", source_episodes=[episode])
    [delivery] = delivered(fake_push, 1)
    deliver_to_worker(app, delivery.plaintext)
    [notification] = shown(app, f"belief-{belief_id}", delivery.plaintext)
    assert "third-party content" in notification["body"]
    assert "checksums" not in notification["body"]


def test_tapping_the_body_opens_that_card(app: App, fake_push: FakePushService) -> None:
    app.context.grant_permissions(["notifications"], origin=app.url)
    app.pair()
    subscribe_device(app, fake_push)
    belief_id = new_pending(app, "Name upload batches after the customer.")
    [delivery] = delivered(fake_push, 1)
    app.page.get_by_role("link", name="Memory").click()
    app.page.locator("#view-memory").wait_for()
    deliver_to_worker(app, delivery.plaintext)
    shown(app, f"belief-{belief_id}", delivery.plaintext)
    worker(app).evaluate(CLICK, [f"belief-{belief_id}", ""])
    app.page.wait_for_function(
        "(id) => document.querySelector('#stack .card.depth-0')?.dataset.beliefId === id",
        arg=belief_id,
    )
    assert app.page.locator("#view-review").is_visible()
    assert app.status(belief_id) == "pending"


def test_an_offline_keep_from_the_notification_waits_and_replays_once(
    app: App, fake_push: FakePushService
) -> None:
    app.watch.expect_network("ERR_INTERNET_DISCONNECTED")
    app.context.grant_permissions(["notifications"], origin=app.url)
    app.pair()
    subscribe_device(app, fake_push)
    belief_id = new_pending(app, "Upload in the morning when the queue is short.")
    [delivery] = delivered(fake_push, 1)
    deliver_to_worker(app, delivery.plaintext)
    shown(app, f"belief-{belief_id}", delivery.plaintext)
    app.context.set_offline(True)
    result = worker(app).evaluate(CLICK, [f"belief-{belief_id}", "keep"])
    assert result == {"ok": True, "queued": True}
    pill = app.page.locator("#sync-status")
    pill.wait_for()
    assert app.status(belief_id) == "pending"
    app.context.set_offline(False)
    pill.wait_for(state="hidden")
    app.wait_status(belief_id, "active")
    app.page.reload()
    app.top_card()
    app.page.wait_for_timeout(500)
    assert seed.audit_actions(app.admin, belief_id).count("kept") == 1


def test_a_test_push_shows_a_plain_notification(app: App, fake_push: FakePushService) -> None:
    app.context.grant_permissions(["notifications"], origin=app.url)
    app.pair()
    subscribe_device(app, fake_push)
    auth = app.page.evaluate("() => self.CredenceDB.get('auth')")
    with app.server.client(auth["key"]) as phone:
        assert phone.post("/api/v1/push/test", json={}).status_code == 200
    [delivery] = delivered(fake_push, 1)
    deliver_to_worker(app, delivery.plaintext)
    [notification] = shown(app, "credence-test", delivery.plaintext)
    assert notification["actions"] == []
    assert notification["title"] == "Credence"


def test_enable_notifications_asks_only_after_a_tap_and_explains_a_failure(
    playwright_driver: Any, chromium: Any, server, admin, seeded, tmp_path
) -> None:
    context = persistent_context(playwright_driver, tmp_path / "profile")
    app = open_app(chromium, server, admin, seeded, context=context)
    try:
        enable_notifications(app)
        app.watch.check()
    finally:
        context.close()


def enable_notifications(app: App) -> None:
    """Tap Enable notifications where the browser has no push service to subscribe with."""
    app.pair("/?view=settings")
    button = app.page.get_by_role("button", name="Enable notifications")
    button.wait_for()
    assert app.page.evaluate("() => Notification.permission") == "default"
    app.context.grant_permissions(["notifications"], origin=app.url)
    button.click()
    app.page.get_by_role("button", name="Asking the browser…").wait_for()
    assert app.page.evaluate("() => Notification.permission") == "granted"
    # Headless Chromium has no push service, so subscribe() never settles: the app must say
    # so after its timeout rather than spin forever.
    app.page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('push service')",
        timeout=20_000,
    )
    app.page.get_by_role("button", name="Enable notifications").wait_for()


@pytest.mark.parametrize("action", ["keep", "forget"])
def test_a_contradiction_says_what_it_replaces_and_its_buttons_open_the_card(
    app: App, fake_push: FakePushService, action: str
) -> None:
    app.context.grant_permissions(["notifications"], origin=app.url)
    app.pair()
    subscribe_device(app, fake_push)
    old = seed.belief(app.admin, app.ids["retry"])
    assert old["status"] == "active"
    belief_id = new_pending(
        app, "Never retry failed uploads.", review_reasons=[f"contradicts:{old['id']}"]
    )
    [delivery] = delivered(fake_push, 1)
    deliver_to_worker(app, delivery.plaintext)
    [notification] = shown(app, f"belief-{belief_id}", delivery.plaintext)
    assert notification["body"] == f"Never retry failed uploads.\nReplaces: {old['content']}"
    assert notification["data"]["opens_only"] is True
    result = worker(app).evaluate(CLICK, [f"belief-{belief_id}", action])
    assert result == {"ok": True, "opened": True}
    app.page.wait_for_function(
        "(id) => document.querySelector('#stack .card.depth-0')?.dataset.beliefId === id",
        arg=belief_id,
    )
    assert app.status(belief_id) == "pending"
    assert seed.belief(app.admin, old["id"])["status"] == "active"
