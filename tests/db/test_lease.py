"""The lease queue on both engines: claims, renewals, releases, recovery and concurrent claimers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from credence.clock import rfc3339
from credence.db import lease, make_store
from credence.db.engine import Connection, Database

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
NOW = rfc3339(T0)
SOON = rfc3339(T0 + timedelta(seconds=30))
LATER = rfc3339(T0 + timedelta(seconds=60))
EARLIER = rfc3339(T0 - timedelta(seconds=60))
QUEUES = ("jobs", "channel_outbox")


@pytest.fixture
async def store(tmp_path: Path, database_url: str | None) -> AsyncIterator[Database]:
    """A migrated store of the test's engine with one notification channel."""
    opened = make_store(database_url, tmp_path / "credence.sqlite3")
    await opened.open()
    await opened.write(
        lambda conn: conn.run(
            "INSERT INTO push_channels(id, source, url, url_hash, masked_url, created_at)"
            " VALUES ('ch', 'admin', 'json://127.0.0.1/', 'h', 'json://…', ?)",
            (NOW,),
        )
    )
    try:
        yield opened
    finally:
        await opened.close()


async def _waiting(conn: Connection, table: str, key: str, created: str = EARLIER) -> None:
    if table == "jobs":
        await conn.run(
            "INSERT INTO jobs(id, workflow_id, agent_id, trigger, status, created_at, updated_at)"
            " VALUES (?, 'agent-reflection', ?, 'manual', 'queued', ?, ?)",
            (key, f"agent-{key}", created, created),
        )
    else:
        await conn.run(
            "INSERT INTO channel_outbox(id, channel_id, kind, title, body, created_at,"
            " expires_at, next_attempt_at) VALUES (?, 'ch', 'test', 't', 'b', ?, ?, ?)",
            (key, created, LATER, created),
        )


async def _add(store: Database, table: str, *keys: str) -> None:
    async def work(conn: Connection) -> None:
        for position, key in enumerate(keys):
            await _waiting(conn, table, key, rfc3339(T0 - timedelta(seconds=60 - position)))

    await store.write(work)


async def _row(store: Database, table: str, key: str) -> Any:
    return await store.fetchone(
        f"SELECT lease_owner, lease_until, attempts FROM {table} WHERE id = ?", (key,)
    )


async def _claim(store: Database, table: str, owner: str, now: str = NOW, limit: int = 10) -> Any:
    until = rfc3339(datetime.fromisoformat(now) + timedelta(seconds=30))
    return await store.write(
        lambda conn: lease.claim(conn, table, owner=owner, now=now, until=until, limit=limit)
    )


def test_only_allow_listed_tables_are_queues() -> None:
    with pytest.raises(ValueError, match="not a lease queue"):
        lease.queue("beliefs; DROP TABLE jobs")
    assert set(lease.QUEUES) == {"jobs", "push_outbox", "channel_outbox", "backfill_leases"}


@pytest.mark.parametrize("table", QUEUES)
async def test_a_claim_leases_the_oldest_and_skips_a_leased_row(
    store: Database, table: str
) -> None:
    await _add(store, table, "r1", "r2", "r3")
    assert await _claim(store, table, "wrk_a", limit=1) == ["r1"]
    assert sorted(await _claim(store, table, "wrk_b")) == ["r2", "r3"]
    assert await _claim(store, table, "wrk_c") == []
    first = await _row(store, table, "r1")
    assert (first["lease_owner"], first["lease_until"], first["attempts"]) == ("wrk_a", SOON, 1)


@pytest.mark.parametrize("table", QUEUES)
async def test_an_expired_lease_is_reclaimed_and_counts_another_attempt(
    store: Database, table: str
) -> None:
    await _add(store, table, "r1")
    assert await _claim(store, table, "wrk_a") == ["r1"]
    assert await _claim(store, table, "wrk_b", now=rfc3339(T0 + timedelta(seconds=29))) == []
    if table == "jobs":  # a job is taken back by recovery, an outbox row by the next claim
        held = await store.read(lambda conn: lease.held_leases(conn, "jobs"))
        assert [(row["id"], row["lease_owner"], row["lease_until"]) for row in held] == [
            ("r1", "wrk_a", SOON)
        ]
        assert not lease.lapsed(held[0]["lease_until"], NOW)
        assert lease.lapsed(held[0]["lease_until"], SOON)

        async def recover(conn: Connection) -> None:
            row = await lease.lock_held(conn, "jobs", "r1", "wrk_a")
            assert row is not None and row["attempts"] == 1 and row["max_attempts"] == 3
            await lease.reclaim(conn, "jobs", "r1", now=SOON)

        await store.write(recover)
    assert await _claim(store, table, "wrk_b", now=SOON) == ["r1"]
    row = await _row(store, table, "r1")
    assert (row["lease_owner"], row["attempts"]) == ("wrk_b", 2)


@pytest.mark.parametrize("table", QUEUES)
async def test_a_heartbeat_extends_only_the_owners_lease(store: Database, table: str) -> None:
    await _add(store, table, "r1")
    await _claim(store, table, "wrk_a")

    def renew(owner: str) -> Any:
        return store.write(
            lambda conn: lease.renew(conn, table, "r1", owner=owner, now=SOON, until=LATER)
        )

    assert not await renew("wrk_b")
    assert (await _row(store, table, "r1"))["lease_until"] == SOON
    assert await renew("wrk_a")
    assert (await _row(store, table, "r1"))["lease_until"] == LATER
    assert await store.read(lambda conn: lease.holds(conn, table, "r1", "wrk_a", now=SOON))
    assert not await store.read(lambda conn: lease.holds(conn, table, "r1", "wrk_b"))
    assert not await store.read(lambda conn: lease.holds(conn, table, "r1", "wrk_a", now=LATER))


@pytest.mark.parametrize("table", QUEUES)
async def test_a_release_by_a_non_owner_does_nothing(store: Database, table: str) -> None:
    await _add(store, table, "r1")
    await _claim(store, table, "wrk_a")

    def release(owner: str) -> Any:
        return store.write(lambda conn: lease.release(conn, table, "r1", owner=owner, now=SOON))

    assert not await release("wrk_b")
    row = await _row(store, table, "r1")
    assert (row["lease_owner"], row["lease_until"], row["attempts"]) == ("wrk_a", SOON, 1)
    assert await release("wrk_a")
    row = await _row(store, table, "r1")
    # Handed back unstarted: the claim's attempt is forgiven and anyone may claim it again.
    assert (row["lease_owner"], row["lease_until"], row["attempts"]) == (None, None, 0)
    assert await _claim(store, table, "wrk_b") == ["r1"]


async def test_a_finished_row_drops_its_lease_and_is_never_claimed_again(store: Database) -> None:
    await _add(store, "channel_outbox", "r1")
    await _claim(store, "channel_outbox", "wrk_a")
    sql = lease.finish_statement("channel_outbox", "state = 'sent', finished_at = ?")
    await store.write(lambda conn: conn.run(sql, (SOON, "r1")))
    row = await _row(store, "channel_outbox", "r1")
    assert (row["lease_owner"], row["lease_until"]) == (None, None)
    assert await _claim(store, "channel_outbox", "wrk_b", now=LATER) == []


async def test_rows_whose_last_attempt_lapsed_are_retired(store: Database) -> None:
    await _add(store, "channel_outbox", "r1", "r2")
    await _claim(store, "channel_outbox", "wrk_a")

    async def retire(conn: Connection) -> int:
        return await lease.retire_exhausted(
            conn, "channel_outbox", now=SOON, max_attempts=1, error="never reported"
        )

    assert await store.write(retire) == 2
    rows = await store.fetchall("SELECT state, last_error, lease_owner FROM channel_outbox")
    assert [tuple(row) for row in rows] == [("failed", "never reported", None)] * 2


async def test_a_named_lease_is_taken_renewed_fenced_and_given_up(store: Database) -> None:
    def acquire(owner: str, now: str) -> Any:
        until = rfc3339(datetime.fromisoformat(now) + timedelta(seconds=30))
        return store.write(
            lambda conn: lease.acquire(
                conn, "backfill_leases", "embeddings", owner=owner, now=now, until=until
            )
        )

    assert await acquire("rep_a", NOW)
    assert not await acquire("rep_b", NOW)
    assert await acquire("rep_a", rfc3339(T0 + timedelta(seconds=20)))  # renewed to +50 s
    assert not await acquire("rep_b", SOON)
    assert not await store.write(
        lambda conn: lease.release(conn, "backfill_leases", "embeddings", owner="rep_b", now=SOON)
    )
    assert await acquire("rep_b", rfc3339(T0 + timedelta(seconds=50)))  # lapsed: taken over
    assert not await store.read(
        lambda conn: lease.holds(conn, "backfill_leases", "embeddings", "rep_a", now=SOON)
    )
    assert await store.write(
        lambda conn: lease.release(conn, "backfill_leases", "embeddings", owner="rep_b", now=SOON)
    )
    assert await store.fetchall("SELECT * FROM backfill_leases") == []
    with pytest.raises(ValueError, match="named"):
        await _claim(store, "backfill_leases", "rep_a")


async def test_concurrent_claimers_never_get_the_same_row(store: Database, engine: str) -> None:
    if engine != "postgresql":
        pytest.skip("SQLite has one writer: claims cannot overlap")
    keys = [f"r{n:02d}" for n in range(24)]
    await _add(store, "channel_outbox", *keys)
    first_holds = asyncio.Event()
    second_done = asyncio.Event()

    async def held_open(conn: Connection) -> list[Any]:
        # This claim's transaction stays open (its rows locked) while the other claims.
        claimed = await lease.claim(
            conn, "channel_outbox", owner="wrk_a", now=NOW, until=SOON, limit=5
        )
        first_holds.set()
        await asyncio.wait_for(second_done.wait(), 10)
        return claimed

    async def meanwhile() -> list[Any]:
        await first_holds.wait()
        try:
            return await _claim(store, "channel_outbox", "wrk_b", limit=5)
        finally:
            second_done.set()

    first, second = await asyncio.gather(store.write(held_open), meanwhile())
    assert len(first) == 5 and len(second) == 5 and not set(first) & set(second)

    many = await asyncio.gather(
        *(_claim(store, "channel_outbox", f"w{n}", limit=3) for n in range(8))
    )
    taken = [key for claimed in many for key in claimed]
    assert len(taken) == len(set(taken)) == 14
    assert set(taken) | set(first) | set(second) == set(keys)
