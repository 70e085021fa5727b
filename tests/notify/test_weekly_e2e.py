"""The weekly report digest end to end on either engine: the week's decisions in the store, two
replicas planning at the same moment, the real worker, and a loopback push service that verifies
the VAPID signature and decrypts what it receives."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from harness.fakes.push import FakePushService

from credence.access.keys import create_key
from credence.access.principal import principal_from_row
from credence.clock import rfc3339
from credence.db import keys as db_keys
from credence.db import make_store
from credence.db.engine import Database
from credence.ids import new_id
from credence.memory.lifecycle.report import week_report
from credence.notify import preferences, tokens, weekly
from credence.notify.outbox import OutboxConfig
from credence.notify.vapid import VapidKeys
from credence.notify.worker import PushWorker
from tests.notify.rows import insert_agent

SLOT = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)  # Monday 09:00 UTC: the default weekly moment
SUBJECT = "mailto:reviewer@credence-push.org"


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def replica(store: Database, tmp_path: Path, database_url: str | None):
    """A second store on the same database, as a second replica sees it."""
    second = make_store(database_url, tmp_path / "data" / "credence.sqlite3")
    await second.open()
    try:
        yield second
    finally:
        await second.close()


def _config(store: Database, clock: Clock) -> OutboxConfig:
    return OutboxConfig(
        secret=store.secret(tokens.SECRET_NAME),
        ttl_seconds=86400,
        base_url="https://credence.reviewers-example.org",
        clock=clock,
    )


async def _history(store: Database, clock: Clock) -> None:
    """Coder's week: 3 kept and 1 edited (an hour to decide), 2 forgotten (two hours), 1 still
    pending; one kept belief was served to the agent, three never were."""
    proposed = SLOT - timedelta(days=3)
    rows = [
        ("active", None, 1, True),
        ("active", None, 1, False),
        ("active", None, 1, False),
        ("active", "The first draft", 1, False),
        ("forgotten", None, 2, False),
        ("forgotten", None, 2, False),
        ("pending", None, None, False),
    ]

    async def work(conn):
        await insert_agent(conn, "coder", "Coder", rfc3339(clock()))
        for n, (status, proposed_content, hours, served) in enumerate(rows):
            belief_id = new_id("b")
            await conn.run(
                "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
                " provenance, review_reasons, created_at, updated_at, version, proposed_content,"
                " last_injected_at) VALUES (?, 'coder', ?, ?, ?, 0.8, 'add', 'clean', '[]', ?, ?,"
                " 1, ?, ?)",
                (
                    belief_id,
                    f"Lesson {n}",
                    f"lesson {n}",
                    status,
                    rfc3339(proposed),
                    rfc3339(proposed),
                    proposed_content,
                    rfc3339(SLOT - timedelta(days=1)) if served else None,
                ),
            )
            if hours is not None:  # decided afterwards, as a review does
                decided = rfc3339(proposed + timedelta(hours=hours))
                await conn.run(
                    "UPDATE beliefs SET decided_at = ?, decided_by = 'key:ana', updated_at = ?"
                    " WHERE id = ?",
                    (decided, decided, belief_id),
                )

    await store.write(work)


async def _reviewer(
    store: Database, clock: Clock, fake: FakePushService, settings: dict[str, Any]
) -> str:
    """A reviewer with one phone subscribed at the fake push service; its id."""
    raw = fake.subscription("phone")

    async def work(conn):
        _, info = await create_key(conn, scope="reviewer", agents=None, label="phone", clock=clock)
        principal = principal_from_row(await db_keys.get_key(conn, info["id"]))
        now = rfc3339(clock())
        await conn.run(
            "INSERT INTO push_subscriptions(id, key_id, endpoint, p256dh, auth, created_at,"
            " last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                new_id("sub"),
                info["id"],
                raw["endpoint"],
                raw["keys"]["p256dh"],
                raw["keys"]["auth"],
                now,
                now,
            ),
        )
        await preferences.save_settings(conn, principal, settings, clock)
        row = await conn.one("SELECT reviewer_id FROM api_keys WHERE id = ?", (info["id"],))
        return row["reviewer_id"]

    return await store.write(work)


@pytest.fixture
def clock() -> Clock:
    """The one clock of the test, the worker and both replicas."""
    return Clock(SLOT - timedelta(days=3))


@pytest.fixture
def fake_push(vapid_keys: VapidKeys, clock: Clock) -> Iterator[FakePushService]:
    """The loopback push service, checking VAPID expiry on the test's clock."""
    with FakePushService(expected_server_key=vapid_keys.public_key_b64url, clock=clock) as fake:
        yield fake


@pytest.fixture
async def worker(
    store: Database, http_client: httpx.AsyncClient, vapid_keys: VapidKeys, clock: Clock
) -> AsyncIterator[PushWorker]:
    running = PushWorker(store, http_client, clock, vapid_keys, SUBJECT, poll_seconds=0.05)
    await running.start()
    try:
        yield running
    finally:
        await running.stop(0.5)


async def test_two_replicas_send_the_week_once_and_the_phone_decrypts_it(
    store: Database,
    replica: Database,
    fake_push: FakePushService,
    worker: PushWorker,
    clock: Clock,
) -> None:
    await _history(store, clock)
    reviewer_id = await _reviewer(store, clock, fake_push, {})
    clock.now = SLOT - timedelta(minutes=1)
    assert await weekly.run_weekly(store, _config(store, clock), week_report) == []
    clock.now = SLOT + timedelta(seconds=5)
    first, second = await asyncio.gather(
        weekly.run_weekly(store, _config(store, clock), week_report),
        weekly.run_weekly(replica, _config(replica, clock), week_report),
    )
    assert sorted(first + second) == [reviewer_id]
    worker.wake()
    [delivery] = await fake_push.wait_for(1, name="phone")
    message = json.loads(delivery.plaintext)
    assert message["type"] == "report.weekly"
    assert message["body"] == (
        "Coder: 3 kept, 1 edited, 2 forgotten, 1 pending; median decision 1.0 h;"
        " 3 kept never served"
    )
    assert message["url"] == "/?view=report&agent=coder&days=7"
    assert message["pending_count"] == 1
    # A restart, later that week: the week is taken.
    clock.now = SLOT + timedelta(days=2)
    await replica.close()
    await replica.open()
    assert await weekly.run_weekly(replica, _config(replica, clock), week_report) == []
    await asyncio.sleep(0.2)
    assert len(fake_push.received("phone")) == 1
    # The next week's moment brings the next week's claim.
    clock.now = SLOT + timedelta(days=7)
    assert await weekly.run_weekly(store, _config(store, clock), week_report) == [reviewer_id]


async def test_quiet_hours_hold_it_and_turned_off_it_never_goes(
    store: Database, fake_push: FakePushService, worker: PushWorker, clock: Clock
) -> None:
    await _history(store, clock)
    quiet = {"start": "06:00", "end": "11:00", "time_zone": "UTC"}
    reviewer_id = await _reviewer(store, clock, fake_push, {"quiet_hours": quiet})
    clock.now = SLOT + timedelta(minutes=1)
    assert await weekly.run_weekly(store, _config(store, clock), week_report) == []
    clock.now = SLOT + timedelta(hours=2)
    assert await weekly.run_weekly(store, _config(store, clock), week_report) == [reviewer_id]
    worker.wake()
    [delivery] = await fake_push.wait_for(1, name="phone")
    assert json.loads(delivery.plaintext)["body"].startswith("Coder: 3 kept")

    async def off(conn):
        await conn.run(
            "UPDATE reviewers SET notifications = ? WHERE id = ?",
            (json.dumps({"weekly_report": {"enabled": False}}), reviewer_id),
        )

    await store.write(off)
    clock.now = SLOT + timedelta(days=7, hours=2)
    assert await weekly.run_weekly(store, _config(store, clock), week_report) == []
