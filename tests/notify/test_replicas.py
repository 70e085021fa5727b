"""Several replicas on one PostgreSQL: one VAPID key, one token secret, every push sent once."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from harness.fakes.push import FakePushService, Reply

from credence.clock import rfc3339
from credence.db.pgstore import PostgresStore
from credence.notify import tokens
from credence.notify.outbox import OutboxConfig, enqueue_pending
from credence.notify.runtime import PushRuntime, load_runtime
from credence.notify.worker import PushWorker
from credence.settings import Settings
from tests.notify.rows import insert_agent, insert_key, insert_pending_belief, insert_subscription

SUBJECT = "mailto:reviewer@credence-push.org"


class ManualClock:
    """A clock the test moves by hand, shared by every replica."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
async def replicas(pg_migrated_url: str) -> AsyncIterator[list[PostgresStore]]:
    """Two stores on one database, opened at the same moment (as two replicas starting)."""
    stores = [PostgresStore(pg_migrated_url) for _ in range(2)]
    await asyncio.gather(*(store.open() for store in stores))
    try:
        yield stores
    finally:
        for store in stores:
            await store.close()


async def _runtimes(stores: list[PostgresStore], tmp_path: Path, url: str) -> list[PushRuntime]:
    settings = [
        Settings(data_dir=tmp_path / f"replica{n}", database_url=url, vapid_subject=SUBJECT)
        for n in range(len(stores))
    ]
    return list(
        await asyncio.gather(
            *(load_runtime(s, store) for s, store in zip(settings, stores, strict=True))
        )
    )


async def test_replicas_with_empty_data_dirs_share_the_vapid_key_and_accept_each_others_tokens(
    replicas: list[PostgresStore], tmp_path: Path, pg_migrated_url: str
):
    first, second = await _runtimes(replicas, tmp_path, pg_migrated_url)
    assert first.keys.public_key_b64url == second.keys.public_key_b64url
    assert sorted([first.keys.source, second.keys.source]) == ["database", "generated"]
    now = datetime.now(UTC)
    token = tokens.issue(
        first.secret,
        belief_id="b_01jq3z7k9m2n4p6r8s0t1v3w5x",
        version=3,
        key_id="key_01jq3z7k9m2n4p6r8s0t1v3w5y",
        expires_at=now + timedelta(hours=1),
    )
    claims = tokens.verify(second.secret, token, now)
    assert (claims.belief_id, claims.version) == ("b_01jq3z7k9m2n4p6r8s0t1v3w5x", 3)
    # A replica started later, on yet another empty data dir, presents the same key.
    late = PostgresStore(pg_migrated_url)
    await late.open()
    try:
        [third] = await _runtimes([late], tmp_path / "late", pg_migrated_url)
    finally:
        await late.close()
    assert third.keys.public_key_b64url == first.keys.public_key_b64url
    assert third.secret == first.secret
    assert not any(path.is_file() for path in tmp_path.rglob("*"))


async def _queue(
    store: PostgresStore, fake: FakePushService, runtime: PushRuntime, clock: ManualClock, n: int
) -> tuple[list[str], list[str]]:
    """Two devices of one reviewer and ``n`` pending beliefs queued for both."""
    now = rfc3339(clock())
    config = OutboxConfig(
        secret=runtime.secret,
        ttl_seconds=3600,
        base_url="https://credence.example-r.org",
        clock=clock,
    )

    async def work(conn):
        await insert_agent(conn, "coder", "Coder", now)
        key_id = await insert_key(conn, "reviewer", None, now)
        devices = []
        for name in ("alice", "bob"):
            raw = fake.subscription(name)
            keys = raw["keys"]
            await insert_subscription(
                conn, key_id, raw["endpoint"], keys["p256dh"], keys["auth"], now
            )
            devices.append(name)
        beliefs = []
        for number in range(n):
            belief = await insert_pending_belief(conn, "coder", f"Fact number {number}", now)
            assert await enqueue_pending(conn, belief, config) == (2, 0)
            beliefs.append(belief.id)
        return devices, beliefs

    return await store.write(work)


def _worker(store, http, clock, runtime, **options) -> PushWorker:
    return PushWorker(
        store, http, clock, runtime.keys, runtime.subject, poll_seconds=0.05, **options
    )


async def test_two_workers_on_two_replicas_push_every_pending_belief_exactly_once(
    replicas: list[PostgresStore],
    tmp_path: Path,
    pg_migrated_url: str,
    http_client: httpx.AsyncClient,
):
    runtimes = await _runtimes(replicas, tmp_path, pg_migrated_url)
    clock = ManualClock()
    with FakePushService(expected_server_key=runtimes[0].keys.public_key_b64url) as fake:
        devices, beliefs = await _queue(replicas[0], fake, runtimes[0], clock, 40)
        for name in devices:
            fake.script(name, *[Reply(201, delay=0.01)] * 40)
        workers = [
            _worker(store, http_client, clock, runtime, concurrency=4)
            for store, runtime in zip(replicas, runtimes, strict=True)
        ]
        for worker in workers:
            await worker.start()
        try:
            await fake.wait_for(80, timeout=30)
            for worker in workers:
                await worker.idle(10)
        finally:
            for worker in workers:
                await worker.stop(drain_seconds=5)
        delivered = Counter((d.name, d.payload["belief_id"]) for d in fake.received())
    assert sum(delivered.values()) == 80
    assert set(delivered.values()) == {1}
    assert set(delivered) == {(name, b) for name in devices for b in beliefs}
    # Both replicas took part: the claims interleaved instead of one worker taking everything.
    assert all(worker.stats["sent"] > 0 for worker in workers), [w.stats for w in workers]
    rows = await replicas[1].fetchall("SELECT state, attempts, lease_owner FROM push_outbox")
    assert {(r["state"], r["attempts"], r["lease_owner"]) for r in rows} == {("sent", 1, None)}


async def test_a_replica_dying_mid_delivery_leaves_its_rows_to_another_after_the_lease(
    replicas: list[PostgresStore],
    tmp_path: Path,
    pg_migrated_url: str,
    http_client: httpx.AsyncClient,
):
    runtimes = await _runtimes(replicas, tmp_path, pg_migrated_url)
    clock = ManualClock()
    with FakePushService(expected_server_key=runtimes[0].keys.public_key_b64url) as fake:
        devices, beliefs = await _queue(replicas[0], fake, runtimes[0], clock, 3)
        # alice's third push hangs on the replica that dies.
        fake.script("alice", Reply(201), Reply(201), Reply(201, delay=60))
        dying = _worker(replicas[0], http_client, clock, runtimes[0], lease_seconds=30)
        await dying.start()
        while len(fake.received()) < 5:
            await asyncio.sleep(0.01)
        await dying.stop(drain_seconds=0)  # the hung send is dropped, nothing recorded for it
        [hung] = await replicas[1].fetchall(
            "SELECT id, lease_owner, attempts FROM push_outbox WHERE state = 'queued'"
        )
        assert (hung["lease_owner"], hung["attempts"]) == (dying.owner, 1)

        other = _worker(replicas[1], http_client, clock, runtimes[1], lease_seconds=30)
        await other.start()
        try:
            await other.idle(10)
            assert len(fake.received()) == 5  # the lease still holds: no early resend
            clock.advance(30)
            await fake.wait_for(6, timeout=10)
            await other.idle(10)
        finally:
            await other.stop(drain_seconds=5)
        delivered = Counter((d.name, d.payload["belief_id"]) for d in fake.received())
    assert set(delivered) == {(name, b) for name in devices for b in beliefs}
    assert set(delivered.values()) == {1}
    row = await replicas[0].fetchone(
        "SELECT state, attempts, lease_owner FROM push_outbox WHERE id = ?", (hung["id"],)
    )
    assert (row["state"], row["attempts"], row["lease_owner"]) == ("sent", 2, None)
