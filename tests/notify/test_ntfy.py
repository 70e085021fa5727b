"""ntfy channels end to end: the real server publishes to a loopback ntfy server over HTTP, and
the fake taps the actions back over HTTP as the ntfy app does (exactly once, version-bound)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from harness.fakes.ntfy import FakeNtfy, tap

from credence.clock import system_clock
from credence.db.notices import NoticeItem
from credence.notify import ntfy
from credence.settings import Settings
from tests.livesrv import LiveServer, cli_key, running

TOKEN = "tk_loopbacksecret"
TOPIC = "credence-a1b2c3d4e5f6"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """A fixed port, so the action URLs in the messages (CREDENCE_PUBLIC_URL) reach the server."""
    port = _free_port()
    return Settings(
        data_dir=tmp_path / "data", scheduler=False, public_url=f"http://127.0.0.1:{port}"
    )


_OPEN: list[httpx.Client] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


@pytest.fixture
def fake() -> Iterator[FakeNtfy]:
    with FakeNtfy(token=TOKEN) as server:
        yield server


class _Serving:
    """A LiveServer on the settings' public port (restartable on the same port)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.server: LiveServer | None = None
        self.clients: list[httpx.Client] = []

    def __enter__(self) -> LiveServer:
        self.server = LiveServer(self.settings)
        assert self.settings.public_url is not None
        self.server._server.config.port = int(self.settings.public_url.rsplit(":", 1)[1])
        return self.server.start()

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.stop()


def _setup(server: LiveServer, fake: FakeNtfy) -> tuple[httpx.Client, dict]:
    admin = server.client(cli_key(server.settings, "admin"))
    _OPEN.append(admin)
    assert admin.post("/api/v1/agents", json={"id": "coder", "name": "Coder"}).status_code == 201
    created = admin.post(
        "/api/v1/push/channels",
        json={"kind": "ntfy", "url": fake.topic_url(TOPIC), "token": TOKEN, "label": "phone"},
    )
    assert created.status_code == 201, created.text
    return admin, created.json()


def _propose(client: httpx.Client, *texts: str, sourced: bool = True) -> list[str]:
    """Propose additions; ``sourced`` ones learned from an episode (clean provenance)."""
    fields = {}
    if sourced:
        stored = client.post(
            "/api/v1/agents/coder/episodes",
            json={"session_id": "s1", "summary": "A 40MB PDF ran the ingester out of memory"},
        )
        assert stored.status_code == 201, stored.text
        fields = {"source_episodes": [stored.json()["episode"]["id"]]}
    response = client.post(
        "/api/v1/agents/coder/memory/beliefs/proposals",
        json={
            "proposals": [{"op": "add", "belief": t, "confidence": 0.7, **fields} for t in texts]
        },
    )
    assert response.status_code == 200, response.text
    return [r["belief_id"] for r in response.json()["results"]]


def test_a_belief_arrives_with_one_tap_actions_that_apply_exactly_once(settings, fake):
    with _Serving(settings) as server:
        admin, channel = _setup(server, fake)
        assert channel["kind"] == "ntfy" and channel["url"] == fake.root.rsplit(":", 1)[0]
        listed = json.dumps(admin.get("/api/v1/push/channels").json())
        assert TOPIC not in listed and TOKEN not in listed
        [belief_id] = _propose(admin, "The staging database resets every Sunday night")
        [message] = fake.wait_for(1)
        assert message["topic"] == TOPIC
        assert message["message"] == "The staging database resets every Sunday night"
        assert message["title"] == "Coder: I've learned" and message["priority"] == 3
        assert message["click"] == f"{settings.public_url}/?belief={belief_id}"
        assert ntfy.labels(message) == ["Keep", "Forget"]
        for action in message["actions"]:
            assert action["action"] == "http" and action["method"] == "POST"
            assert action["clear"] is True
            assert action["url"] == f"{settings.public_url}/api/v1/push/ntfy-actions"

        kept = tap(message, "Keep")
        assert kept.status_code == 200, kept.text
        assert kept.json()["status"] == "active" and kept.json()["version"] == 2
        again = tap(message, "Keep")
        assert again.status_code == 409 and "already used" in again.json()["detail"]
        other = tap(message, "Forget")
        assert other.status_code == 409
        belief = admin.get(f"/api/v1/beliefs/{belief_id}").json()
        assert (belief["status"], belief["version"]) == ("active", 2)
        audit = admin.get(f"/api/v1/beliefs/{belief_id}/audit").json()["items"]
        assert [entry["action"] for entry in audit].count("kept") == 1


def test_a_tap_after_the_belief_changed_is_refused_and_nothing_applies(settings, fake):
    with _Serving(settings) as server:
        admin, _ = _setup(server, fake)
        [belief_id] = _propose(admin, "Ask before force-pushing to a shared branch")
        [message] = fake.wait_for(1)
        keep = admin.post(f"/api/v1/beliefs/{belief_id}/keep", headers={"If-Match": '"1"'})
        assert keep.status_code == 200, keep.text
        reopen = admin.post(
            f"/api/v1/beliefs/{belief_id}/reopen", json={}, headers={"If-Match": '"2"'}
        )
        assert reopen.status_code == 200, reopen.text
        stale = tap(message, "Forget")
        assert stale.status_code == 412, stale.text
        assert "changed since the notification" in stale.json()["detail"]
        belief = admin.get(f"/api/v1/beliefs/{belief_id}").json()
        assert (belief["status"], belief["version"]) == ("pending", 3)


def test_unsourced_content_gets_no_keep_and_a_digest_opens_the_pile(settings, fake):
    with _Serving(settings) as server:
        admin, _ = _setup(server, fake)
        [unsourced] = _propose(admin, "Always trust the mirror", sourced=False)
        [first] = fake.wait_for(1)
        assert ntfy.labels(first) == ["Forget"] and first["message"] == "Always trust the mirror"
        _propose(admin, "Use the retry helper", "Pin the lint version")
        digest = fake.wait_for(2)[1]
        assert digest["message"] == "2 new beliefs from Coder"
        assert digest["actions"] == [
            {"action": "view", "label": "Review", "url": f"{settings.public_url}/", "clear": True}
        ]
        forged = httpx.post(
            f"{settings.public_url}/api/v1/push/ntfy-actions",
            json={"token": json.loads(first["actions"][0]["body"])["token"], "action": "keep"},
        )
        assert forged.status_code == 409  # no Keep from a notification, even a forged tap
        assert admin.get(f"/api/v1/beliefs/{unsourced}").json()["status"] == "pending"


def test_a_429_is_retried_after_retry_after_and_delivered_once(settings, fake):
    fake.replies.append((429, "1"))
    with _Serving(settings) as server:
        admin, _ = _setup(server, fake)
        _propose(admin, "Compress logs before upload")
        [message] = fake.wait_for(1, timeout=15)
        time.sleep(1.2)
        assert fake.refused == [429] and len(fake.received()) == 1
        assert ntfy.labels(message) == ["Keep", "Forget"]


def test_a_held_message_survives_a_restart_and_its_tap_works_on_the_new_server(settings, fake):
    with _Serving(settings) as server:
        admin, channel = _setup(server, fake)
        # Counted from here, not from before the start: on a loaded machine starting the
        # server alone can outlast a short snooze, and the message would go out too early.
        until = system_clock() + timedelta(seconds=6)
        held = admin.put(
            f"/api/v1/push/channels/{channel['id']}/notifications",
            json={"mode": "each", "snooze_until": until.isoformat().replace("+00:00", "Z")},
        )
        assert held.status_code == 200, held.text
        [belief_id] = _propose(admin, "Rotate the deploy key every quarter")
        time.sleep(0.5)
        assert fake.received() == []
    time.sleep(max(0.0, (until - system_clock()).total_seconds()) + 0.2)
    with _Serving(settings) as server:
        [message] = fake.wait_for(1)
        time.sleep(1.5)  # room for a second copy that must not come
        assert len(fake.received()) == 1
        forgot = tap(message, "Forget")
        assert forgot.status_code == 200, forgot.text
        admin = server.client(cli_key(settings, "admin"))
        _OPEN.append(admin)
        assert admin.get(f"/api/v1/beliefs/{belief_id}").json()["status"] == "forgotten"


def test_a_test_send_reaches_the_ntfy_topic(settings, fake):
    with _Serving(settings) as server:
        admin, channel = _setup(server, fake)
        result = admin.post("/api/v1/push/test").json()
        [answered] = result["channels"]
        assert answered == {
            "channel_id": channel["id"],
            "url": fake.root.rsplit(":", 1)[0],
            "ok": True,
            "detail": "delivered",
        }
        [message] = fake.wait_for(1)
        assert message["topic"] == TOPIC and message["title"] == "Credence"


def test_the_fake_takes_the_header_form_too(fake):
    actions = [{"action": "view", "label": "Open", "url": "https://x.example-corp.org/"}]
    answer = httpx.post(
        fake.topic_url(TOPIC),
        content="hello",
        headers={
            "Authorization": f"Bearer {TOKEN}",
            "X-Title": "Hi",
            "X-Priority": "4",
            "X-Tags": "warning,brain",
            "X-Actions": json.dumps(actions),
        },
    )
    assert answer.status_code == 200
    [message] = fake.received()
    assert message == {
        "topic": TOPIC,
        "message": "hello",
        "title": "Hi",
        "priority": 4,
        "tags": ["warning", "brain"],
        "actions": actions,
    }
    assert httpx.post(fake.topic_url(TOPIC), content="x").status_code == 401


@pytest.mark.parametrize(
    "url",
    ["ftp://ntfy.example-corp.org/topic", "https://ntfy.example-corp.org/", "https://h/a b"],
)
def test_a_bad_topic_url_is_refused_naming_url(settings, url):
    with _Serving(settings) as server:
        admin = server.client(cli_key(server.settings, "admin"))
        _OPEN.append(admin)
        answer = admin.post("/api/v1/push/channels", json={"kind": "ntfy", "url": url})
        assert answer.status_code == 422 and answer.json()["detail"].startswith("url:")
        assert admin.get("/api/v1/push/channels").json()["items"] == []


def _row(**extra: Any) -> NoticeItem:
    """A ledger row as the store reads it (review reasons stored as JSON text)."""
    return NoticeItem.from_row(
        {
            "belief_id": "b_01m8tq6hxs6vv99hbm2rt6qz95",
            "agent_id": "coder",
            "urgency": "normal",
            "escalation": 0,
            "escalate_at": None,
            "created_at": "2026-01-01T00:00:00Z",
            "told_at": None,
            "reminded_at": None,
            "content": "Keep **PDFs** small, see https://wiki.example-corp.org/x",
            "provenance": "clean",
            "op": "add",
            "review_reasons": "[]",
            "target_belief_id": None,
            "version": 1,
            "agent_name": "Coder",
            **extra,
        }
    )


def test_a_belief_that_changes_another_only_opens_its_card_at_high_priority() -> None:
    message = ntfy.belief_message(
        row=_row(op="weaken"),
        urgency="high",
        base_url="https://credence.example-corp.org/",
        token="t",
        changes="Weakens: PDFs are fine",
    )
    assert ntfy.labels(message) == ["Open"] and message["priority"] == 5
    assert message["actions"][0]["url"] == message["click"]
    assert message["message"] == "Keep PDFs small, see\nWeakens: PDFs are fine"


def test_a_stored_contradiction_only_opens_the_card() -> None:
    row = _row(review_reasons=json.dumps(["contradicts:b_old"]))
    message = ntfy.belief_message(
        row=row, urgency="high", base_url="https://c", token="t", changes=None
    )
    assert ntfy.labels(message) == ["Open"]


def test_untrusted_content_never_reaches_the_lock_screen_nor_gets_keep() -> None:
    message = ntfy.belief_message(
        row=_row(provenance="untrusted"),
        urgency="normal",
        base_url="https://c",
        token="t",
        changes=None,
    )
    assert "PDFs" not in json.dumps(message) and ntfy.labels(message) == ["Forget"]
    assert json.loads(message["actions"][0]["body"]) == {"token": "t", "action": "forget"}


def test_two_replicas_on_postgres_publish_once_and_a_tap_applies_once(pg_url, tmp_path, fake):
    port = _free_port()
    public = f"http://127.0.0.1:{port}"
    first = Settings(
        data_dir=tmp_path / "a", database_url=pg_url, scheduler=False, public_url=public
    )
    second = Settings(
        data_dir=tmp_path / "b", database_url=pg_url, scheduler=False, public_url=public
    )
    with _Serving(first) as server, running(second):
        admin, _ = _setup(server, fake)
        # The first alone, so it has its own message (proposals landing together share a digest).
        ids = [_propose(admin, "Lesson 0 about the deploy pipeline")[0]]
        fake.wait_for(1)
        ids += [_propose(admin, f"Lesson {n} about the deploy pipeline")[0] for n in (1, 2)]
        time.sleep(1.5)  # room for copies from the other replica that must not come
        messages = fake.received()
        told = [m for m in messages if m["click"].endswith(ids[0])]
        assert len(told) == 1 and len(messages) <= 3
        assert tap(told[0], "Keep").status_code == 200
        assert tap(told[0], "Keep").status_code == 409
        assert admin.get(f"/api/v1/beliefs/{ids[0]}").json()["status"] == "active"
