"""The review policy applied to the store, on an injected clock: ledger, digests, quiet hours,
reminders and escalation; exactly once across two planners and across a restart."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from credence.access.keys import create_key
from credence.access.principal import principal_from_row
from credence.clock import rfc3339
from credence.db import keys as db_keys
from credence.db import make_store
from credence.db.engine import Database
from credence.memory.lifecycle.beliefs import BeliefHooks, BeliefService
from credence.memory.semantics.embedders import make_embedder
from credence.models import ProposalIn, ProposedBy
from credence.notify import preferences, review, tokens
from credence.notify.outbox import OutboxConfig
from tests.notify.rows import insert_agent

NIGHT = datetime(2026, 3, 10, 23, 0, tzinfo=UTC)  # midnight in Berlin
MORNING = datetime(2026, 3, 11, 6, 0, tzinfo=UTC)  # 07:00 in Berlin
QUIET = {"start": "22:00", "end": "07:00", "time_zone": "Europe/Berlin"}


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class Team:
    """An agent, one reviewer with one subscribed device, the real belief service."""

    def __init__(self, store: Database, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        hooks = BeliefHooks()
        hooks.in_txn_pending.append(review.pending_hook(clock))
        self.beliefs = BeliefService(store, make_embedder(None, None, None), clock, hooks)
        self.config = OutboxConfig(
            secret=store.secret(tokens.SECRET_NAME),
            ttl_seconds=86400,
            base_url="https://credence.reviewers-example.org",
            clock=clock,
        )
        self.principal: Any = None

    async def setup(self, policy: dict[str, Any]) -> None:
        async def work(conn):
            await insert_agent(conn, "coder", "Coder", rfc3339(self.clock()))
            _, info = await create_key(
                conn, scope="reviewer", agents=None, label="phone", clock=self.clock
            )
            self.principal = principal_from_row(
                next(k for k in await db_keys.all_keys(conn) if k.id == info["id"])
            )
            await conn.run(
                "INSERT INTO push_subscriptions(id, key_id, endpoint, p256dh, auth, created_at,"
                " last_seen_at) VALUES ('sub_phone', ?, 'https://push.example-push.org/p',"
                " 'p', 'a', ?, ?)",
                (info["id"], rfc3339(self.clock()), rfc3339(self.clock())),
            )
            await preferences.save_settings(conn, self.principal, policy, self.clock)

        await self.store.write(work)

    async def propose(self, *texts: str) -> list[str]:
        results = await self.beliefs.propose(
            "coder",
            [ProposalIn(op="add", belief=t, confidence=0.7) for t in texts],
            ProposedBy(key_id="key_x"),
            "key:x",
        )
        return [r.belief_id for r in results if r.accepted]

    async def settings(self, policy: dict[str, Any]) -> None:
        await self.store.write(
            lambda conn: preferences.save_settings(conn, self.principal, policy, self.clock)
        )

    async def pushes(self) -> list[dict[str, Any]]:
        rows = await self.store.fetchall(
            "SELECT payload, urgency, topic, created_at FROM push_outbox ORDER BY created_at, id"
        )
        return [{**json.loads(r["payload"]), "at": r["created_at"]} for r in rows]


async def test_quiet_hours_hold_a_night_run_and_deliver_one_digest_at_their_end(store) -> None:
    clock = Clock(NIGHT)
    team = Team(store, clock)
    await team.setup({"mode": "digest", "quiet_hours": QUIET})
    ids = await team.propose("Split PDFs over 10MB", "Staging resets on Sundays", "Ask first")
    await team.propose("Retry uploads after a 503 with a longer wait")
    for hour in range(1, 7):
        clock.now = NIGHT + timedelta(hours=hour, minutes=59)
        assert await review.run_due(store, team.config) == []
    assert await team.pushes() == []
    clock.now = MORNING
    [planned] = await review.run_due(store, team.config)
    assert planned.sends[0][0] == "digest" and len(planned.sends[0][1]) == 4
    [digest] = await team.pushes()
    assert digest["type"] == "digest" and digest["body"] == "4 new beliefs from Coder"
    assert set(ids) <= set(digest["belief_ids"]) and digest["at"] == rfc3339(MORNING)
    assert await review.run_due(store, team.config) == []  # told once


async def test_removing_quiet_hours_delivers_what_they_held_at_once(store) -> None:
    clock = Clock(NIGHT)
    team = Team(store, clock)
    await team.setup({"mode": "digest", "quiet_hours": QUIET})
    await team.propose("Split PDFs over 10MB", "Staging resets on Sundays")
    await review.run_due(store, team.config)
    clock.now = NIGHT + timedelta(hours=1)
    await team.settings({"mode": "digest", "quiet_hours": None})
    await review.run_due(store, team.config)
    [digest] = await team.pushes()
    assert digest["body"] == "2 new beliefs from Coder"


async def test_each_mode_and_a_reminder_the_next_day(store) -> None:
    clock = Clock(datetime(2026, 3, 10, 10, 0, tzinfo=UTC))
    team = Team(store, clock)
    await team.setup({"mode": "each", "remind_after_hours": 24})
    ids = await team.propose("Split PDFs over 10MB", "Staging resets on Sundays")
    await review.run_due(store, team.config)
    pushes = await team.pushes()
    # Both pushes share one created_at; ids made in one millisecond do not sort by time.
    assert sorted(p["belief_id"] for p in pushes) == sorted(ids)
    assert all(p["token"] for p in pushes)
    clock.now += timedelta(hours=24)
    await review.run_due(store, team.config)
    reminder = (await team.pushes())[-1]
    assert reminder["body"] == "2 beliefs from Coder waiting since yesterday"
    clock.now += timedelta(hours=2)
    assert await review.run_due(store, team.config) == []


async def test_two_planners_and_a_restart_never_send_twice_nor_lose_a_held_digest(
    store, tmp_path: Path, database_url: str | None
) -> None:
    clock = Clock(NIGHT)
    team = Team(store, clock)
    await team.setup({"mode": "digest", "quiet_hours": QUIET})
    await team.propose("Split PDFs over 10MB", "Staging resets on Sundays")
    await review.run_due(store, team.config)
    await store.close()  # the process stops during the night
    reopened = make_store(database_url, tmp_path / "data" / "credence.sqlite3")
    await reopened.open()
    other = make_store(database_url, tmp_path / "data" / "credence.sqlite3")
    await other.open()
    try:
        clock.now = MORNING
        results = await asyncio.gather(
            review.run_due(reopened, team.config), review.run_due(other, team.config)
        )
        assert sum(len(r) for r in results) == 1
        rows = await reopened.fetchall("SELECT payload FROM push_outbox")
        assert len(rows) == 1 and json.loads(rows[0]["payload"])["type"] == "digest"
    finally:
        await other.close()
        await reopened.close()
        await store.open()  # the fixture closes it
