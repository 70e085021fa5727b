"""The delivery worker against a loopback push service: outcomes, retry timing, leases, pruning."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from harness.fakes.push import FakePushService, Reply
from harness.fakes.webhook import Webhook

from credence.access.principal import Principal
from credence.clock import rfc3339
from credence.db.engine import Database
from credence.ids import new_id
from credence.memory.lifecycle.beliefs import BeliefHooks, BeliefService
from credence.memory.lifecycle.decisions import Forget
from credence.memory.semantics.embedders import make_embedder
from credence.notify import tokens
from credence.notify.outbox import OutboxConfig, pending_hook
from credence.notify.vapid import VapidKeys
from credence.notify.webpush import backoff_seconds
from credence.notify.worker import PushWorker, prune
from tests.notify.rows import insert_agent, insert_key, insert_pending_belief

BASE_URL = "https://credence.reviewers-example.org"
TEXTS = [
    "PDFs over 10MB reliably exhaust the ingester",
    "The staging database resets every Sunday night",
    "Ask before force-pushing to a shared branch",
    "Invoices from Acme arrive as scanned TIFF images",
    "The nightly build needs the ARM runner, not x86",
]


class ManualClock:
    """A clock the test moves by hand; the worker reads nothing else."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Env:
    store: Database
    clock: ManualClock
    beliefs: BeliefService
    fake: FakePushService
    http: httpx.AsyncClient
    keys: VapidKeys
    subject: str
    secret: bytes
    workers: list[PushWorker]

    def worker(self, **options: Any) -> PushWorker:
        options.setdefault("poll_seconds", 0.05)
        worker = PushWorker(self.store, self.http, self.clock, self.keys, self.subject, **options)
        self.workers.append(worker)
        return worker

    async def key(self, scope: str = "reviewer", agents: list[str] | None = None) -> str:
        now = rfc3339(self.clock())
        return await self.store.write(lambda conn: insert_key(conn, scope, agents, now))

    async def subscribe(self, name: str, key_id: str, **options: Any) -> str:
        raw = self.fake.subscription(name, **options)
        subscription_id = new_id("sub")
        now = rfc3339(self.clock())

        async def work(conn):
            await conn.run(
                "INSERT INTO push_subscriptions(id, key_id, endpoint, p256dh, auth,"
                " created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    subscription_id,
                    key_id,
                    raw["endpoint"],
                    raw["keys"]["p256dh"],
                    raw["keys"]["auth"],
                    now,
                    now,
                ),
            )

        await self.store.write(work)
        return subscription_id

    async def propose(self, *texts: str, agent: str = "coder") -> list[str]:
        """Pending beliefs, queued by the hooks in the same transaction (as proposing does)."""
        now = rfc3339(self.clock())

        async def work(conn):
            ids = []
            for text in texts:
                belief = await insert_pending_belief(conn, agent, text, now)
                for hook in self.beliefs.hooks.in_txn_pending:
                    await hook(conn, belief)
                ids.append(belief.id)
            return ids

        return await self.store.write(work)

    async def rows(self, table: str = "push_outbox") -> list[Any]:
        return await self.store.fetchall(f"SELECT * FROM {table} ORDER BY created_at, id")


@pytest.fixture
async def env(
    store: Database,
    fake_push: FakePushService,
    http_client: httpx.AsyncClient,
    vapid_keys: VapidKeys,
    subject: str,
) -> AsyncIterator[Env]:
    clock = ManualClock()
    hooks = BeliefHooks()
    beliefs = BeliefService(store, make_embedder(None, None, None), clock, hooks)
    secret = store.secret(tokens.SECRET_NAME)
    config = OutboxConfig(secret=secret, ttl_seconds=3600, base_url=BASE_URL, clock=clock)
    hooks.in_txn_pending.append(pending_hook(config))
    now = rfc3339(clock())

    async def agents(conn):
        for agent_id in ("coder", "writer"):
            await insert_agent(conn, agent_id, agent_id.title(), now)

    await store.write(agents)
    env = Env(store, clock, beliefs, fake_push, http_client, vapid_keys, subject, secret, [])
    try:
        yield env
    finally:
        for worker in env.workers:
            await worker.stop(drain_seconds=0)


async def _run(worker: PushWorker, timeout: float = 10.0) -> None:
    """Let the worker send whatever is due now, then return."""
    worker.wake()
    await worker.idle(timeout)


async def test_a_due_row_is_sent_recorded_and_decrypts(env: Env):
    key_id = await env.key()
    await env.subscribe("alice", key_id)
    [belief_id] = await env.propose(TEXTS[0])
    worker = env.worker()
    await worker.start()

    [delivery] = await env.fake.wait_for(1, name="alice")
    await _run(worker)

    assert delivery.payload["belief_id"] == belief_id
    assert delivery.payload["body"] == TEXTS[0]
    [row] = await env.rows()
    assert (row["state"], row["attempts"], row["last_status"]) == ("sent", 1, 201)
    assert row["lease_owner"] is None and row["sent_at"] is not None
    assert delivery.headers["ttl"] == "3600" and delivery.headers["urgency"] == "normal"


@pytest.mark.parametrize("status", [404, 410])
async def test_gone_subscription_is_deleted_after_one_attempt(env: Env, status: int):
    key_id = await env.key()
    gone = await env.subscribe("gone", key_id)
    await env.subscribe("kept", key_id)
    env.fake.script("gone", Reply(status))
    await env.propose(TEXTS[0])
    worker = env.worker()
    await worker.start()
    await _run(worker)

    assert [a.status for a in env.fake.attempts("gone")] == [status]
    subs = await env.store.fetchall("SELECT id FROM push_subscriptions")
    assert gone not in {r["id"] for r in subs} and len(subs) == 1
    await env.propose(TEXTS[1])
    await env.fake.wait_for(2, name="kept")
    await _run(worker)
    assert len(env.fake.attempts("gone")) == 1


async def test_idle_waits_for_a_send_claimed_while_it_read_what_was_due(env: Env):
    # idle() judged "busy" before reading what was due: a claim committed during that read
    # left the row leased (so not due) and the stale "not busy" ended the wait mid-send.
    await env.subscribe("alice", await env.key())
    env.fake.script("alice", Reply(201, delay=0.3))
    await env.propose(TEXTS[0])
    worker = env.worker()
    lane = worker._lanes[0]
    real_claim, real_next_due = lane.claim, lane.next_due
    claimed = asyncio.Event()

    async def claim(limit: int) -> list[Any]:
        rows = await real_claim(limit)
        if rows:
            claimed.set()
        return rows

    async def next_due() -> str | None:
        task = asyncio.current_task()
        if task is None or not task.get_name().startswith("push-"):  # idle() asking
            await claimed.wait()
        return await real_next_due()

    lane.claim, lane.next_due = claim, next_due
    await worker.start()
    await _run(worker)
    [row] = await env.rows()
    assert row["state"] == "sent" and len(env.fake.attempts("alice")) == 1


async def test_429_is_retried_no_sooner_than_retry_after(env: Env):
    await env.subscribe("alice", await env.key())
    env.fake.script("alice", Reply(429, retry_after="120"))
    await env.propose(TEXTS[0])
    worker = env.worker()
    await worker.start()
    await _run(worker)
    started = env.clock()
    [row] = await env.rows()
    assert row["state"] == "queued" and row["last_status"] == 429
    assert row["next_attempt_at"] == rfc3339(started + timedelta(seconds=120))

    env.clock.advance(119.9)
    await _run(worker)
    await asyncio.sleep(0.2)
    assert env.fake.received("alice") == []

    env.clock.advance(0.1)
    await env.fake.wait_for(1, name="alice")
    await _run(worker)
    [row] = await env.rows()
    assert (row["state"], row["attempts"]) == ("sent", 2)


async def test_5xx_backs_off_and_gives_up_after_five_attempts(env: Env):
    await env.subscribe("alice", await env.key())
    env.fake.script("alice", *[Reply(500)] * 6)
    await env.propose(TEXTS[0])
    worker = env.worker()
    await worker.start()
    waits = []
    for attempt in range(1, 6):
        await _run(worker)
        assert len(env.fake.attempts("alice")) == attempt
        [row] = await env.rows()
        if attempt < 5:
            assert row["state"] == "queued"
            wait = (
                datetime.fromisoformat(row["next_attempt_at"].replace("Z", "+00:00")) - env.clock()
            ).total_seconds()
            waits.append(round(wait, 3))
            env.clock.advance(wait)
    assert waits == [backoff_seconds(n) for n in range(1, 5)] == [2, 4, 8, 16]
    [row] = await env.rows()
    assert (row["state"], row["attempts"], row["last_status"]) == ("failed", 5, 500)
    env.clock.advance(3600)
    await _run(worker)
    assert len(env.fake.attempts("alice")) == 5


async def test_no_retry_is_scheduled_past_the_ttl(env: Env):
    await env.subscribe("alice", await env.key())
    env.fake.script("alice", *[Reply(503)] * 5)
    config = OutboxConfig(secret=env.secret, ttl_seconds=5, base_url=BASE_URL, clock=env.clock)
    env.beliefs.hooks.in_txn_pending[:] = [pending_hook(config)]
    await env.propose(TEXTS[0])
    worker = env.worker()
    await worker.start()
    await _run(worker)
    env.clock.advance(2)  # attempt 2 at age 2 s; the next backoff (4 s) would end past TTL 5 s
    await _run(worker)
    env.clock.advance(60)
    await _run(worker)
    [row] = await env.rows()
    assert (row["state"], row["attempts"]) == ("failed", 2)
    assert len(env.fake.attempts("alice")) == 2
    assert env.fake.attempts("alice")[1].status == 503


async def test_a_timed_out_send_is_retried(env: Env):
    await env.subscribe("alice", await env.key())
    env.fake.script("alice", Reply(201, delay=1.0))
    await env.propose(TEXTS[0])
    worker = env.worker(send_timeout=0.2)
    await worker.start()
    await _run(worker)
    [row] = await env.rows()
    assert row["state"] == "queued" and row["last_status"] is None
    assert "timed out" in row["last_error"]
    env.clock.advance(2)
    await _run(worker)
    [row] = await env.rows()
    assert (row["state"], row["attempts"], row["last_status"]) == ("sent", 2, 201)


async def test_vapid_rejection_is_logged_loudly_and_not_retried(
    env: Env, caplog: pytest.LogCaptureFixture
):
    other_server_key = "BAAA" + env.keys.public_key_b64url[4:]
    await env.subscribe("alice", await env.key(), application_server_key=other_server_key)
    await env.propose(TEXTS[0])
    worker = env.worker()
    with caplog.at_level(logging.ERROR, logger="credence.notify.worker"):
        await worker.start()
        await _run(worker)
    [row] = await env.rows()
    assert (row["state"], row["last_status"]) == ("failed", 403)
    assert any("VAPID" in r.getMessage() and r.levelno == logging.ERROR for r in caplog.records)
    env.clock.advance(3600)
    await _run(worker)
    assert len(env.fake.attempts("alice")) == 1


async def test_at_most_eight_sends_are_in_flight(env: Env):
    key_id = await env.key()
    names = [f"dev{n}" for n in range(20)]
    for name in names:
        await env.subscribe(name, key_id)
        env.fake.script(name, Reply(201, delay=0.15))
    await env.propose(TEXTS[0])
    worker = env.worker()
    await worker.start()
    await env.fake.wait_for(20, timeout=20)
    await _run(worker)
    spans = []
    for name in names:
        [attempt] = env.fake.attempts(name)
        [delivery] = env.fake.received(name)
        spans.append((attempt.received_at, delivery.received_at))
    overlap = max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)
    assert 2 <= overlap <= 8
    assert {r["state"] for r in await env.rows()} == {"sent"}


async def test_decided_expired_and_revoked_rows_are_not_sent(env: Env):
    reviewer = await env.key()
    revoked = await env.key()
    await env.subscribe("alice", reviewer)
    mallory = await env.subscribe("mallory", revoked)
    decided, expiring = await env.propose(TEXTS[0], TEXTS[1])

    async def revoke(conn):
        await conn.run("UPDATE api_keys SET revoked_at = ? WHERE id = ?", ("x", revoked))
        await conn.run(
            "UPDATE push_outbox SET expires_at = ? WHERE belief_id = ?",
            (rfc3339(env.clock()), expiring),
        )

    await env.store.write(revoke)
    principal = Principal(key_id=reviewer, scope="reviewer", agents=None, label="")
    outcome = await env.beliefs.decide(decided, Forget(), principal, if_match='"1"')
    assert outcome.status == "forgotten"
    worker = env.worker()
    await worker.start()
    await _run(worker)

    rows = await env.rows()
    alice = {r["belief_id"]: r["state"] for r in rows if r["subscription_id"] != mallory}
    assert alice == {decided: "obsolete", expiring: "expired"}
    # The revoked key's subscription is pruned when the worker starts, its rows with it.
    assert [r for r in rows if r["subscription_id"] == mallory] == []
    assert (
        await env.store.fetchone("SELECT 1 FROM push_subscriptions WHERE id = ?", (mallory,))
        is None
    )
    assert env.fake.attempts() == []


async def test_only_reviewers_who_can_see_the_agent_are_notified(env: Env):
    admin = await env.key("admin")
    everyone = await env.key("reviewer", None)
    coder = await env.key("reviewer", ["coder"])
    writer = await env.key("reviewer", ["writer"])
    for name, key_id in [("admin", admin), ("all", everyone), ("coder", coder), ("w", writer)]:
        await env.subscribe(name, key_id)
    [belief_id] = await env.propose(TEXTS[0], agent="coder")
    worker = env.worker()
    await worker.start()
    await env.fake.wait_for(3)
    await _run(worker)
    assert sorted(d.name for d in env.fake.received()) == ["admin", "all", "coder"]
    assert {d.payload["belief_id"] for d in env.fake.received()} == {belief_id}


async def test_graceful_stop_lets_in_flight_sends_finish_and_nothing_is_resent(env: Env):
    await env.subscribe("alice", await env.key())
    env.fake.script("alice", Reply(201, delay=0.5), Reply(201, delay=0.5), Reply(201, delay=0.5))
    ids = await env.propose(*TEXTS[:3])
    first = env.worker()
    await first.start()
    while len(env.fake.attempts("alice")) == 0 and first.stats["sent"] == 0:
        await asyncio.sleep(0.01)
        if sum(len(lane.tasks) for lane in first._lanes) == 3:
            break
    await first.stop(drain_seconds=5)
    assert {r["state"] for r in await env.rows()} == {"sent"}

    second = env.worker()
    await second.start()
    env.clock.advance(3600)
    await _run(second)
    assert sorted(d.payload["belief_id"] for d in env.fake.received("alice")) == sorted(ids)


async def test_a_crash_mid_delivery_resends_only_what_was_not_recorded(env: Env):
    await env.subscribe("alice", await env.key())
    # The third send hangs: the push service never answers it before the "crash".
    env.fake.script("alice", Reply(201), Reply(201), Reply(201, delay=60))
    ids = await env.propose(*TEXTS[:3])
    crashed = env.worker(lease_seconds=30, concurrency=1)
    await crashed.start()
    while sorted((r["state"], r["lease_owner"] or "") for r in await env.rows()) != [
        ("queued", crashed.owner),
        ("sent", ""),
        ("sent", ""),
    ]:
        await asyncio.sleep(0.01)
    # A crash: in-flight work is dropped and nothing more is recorded.
    await crashed.stop(drain_seconds=0)
    rows = await env.rows()
    assert sorted(r["state"] for r in rows) == ["queued", "sent", "sent"]
    [hung] = [r for r in rows if r["state"] == "queued"]
    assert hung["lease_owner"] == crashed.owner and hung["attempts"] == 1

    restarted = env.worker(lease_seconds=30)
    await restarted.start()
    await _run(restarted)
    assert len(env.fake.received("alice")) == 2  # the lease still holds: no early resend
    env.clock.advance(30)
    await env.fake.wait_for(3, name="alice")
    await _run(restarted)

    delivered = [d.payload["belief_id"] for d in env.fake.received("alice")]
    assert sorted(delivered) == sorted(ids)  # none lost, none twice
    [again] = [r for r in await env.rows() if r["id"] == hung["id"]]
    assert (again["state"], again["attempts"]) == ("sent", 2)
    assert again["lease_owner"] is None


async def test_prune_drops_stale_expired_and_revoked_subscriptions_and_old_rows(env: Env):
    key_id = await env.key()
    revoked = await env.key()
    fresh = await env.subscribe("fresh", key_id)
    old = await env.subscribe("old", key_id)
    expired = await env.subscribe("expired", key_id)
    await env.subscribe("revoked", revoked)
    now = env.clock()

    async def age(conn):
        await conn.run(
            "UPDATE push_subscriptions SET last_seen_at = ? WHERE id = ?",
            (rfc3339(now - timedelta(days=61)), old),
        )
        await conn.run(
            "UPDATE push_subscriptions SET last_seen_at = ? WHERE id = ?",
            (rfc3339(now - timedelta(days=59)), fresh),
        )
        await conn.run(
            "UPDATE push_subscriptions SET expiration_time = ? WHERE id = ?",
            (int(now.timestamp() * 1000) - 1, expired),
        )
        await conn.run("UPDATE api_keys SET revoked_at = 'x' WHERE id = ?", (revoked,))

    await env.store.write(age)
    pruned = await prune(env.store, env.clock())
    assert pruned["subscriptions"] == 3
    left = await env.store.fetchall("SELECT id FROM push_subscriptions")
    assert [r["id"] for r in left] == [fresh]
    await env.propose(TEXTS[0])
    worker = env.worker()
    await worker.start()
    await env.fake.wait_for(1, name="fresh")
    await _run(worker)
    assert [d.name for d in env.fake.received()] == ["fresh"]
    assert len(await env.rows()) == 1

    async def seen_now(conn):
        await conn.run("UPDATE push_subscriptions SET last_seen_at = ?", (rfc3339(now),))

    await env.store.write(seen_now)
    assert await prune(env.store, env.clock() + timedelta(days=6)) == {
        "subscriptions": 0,
        "outbox_rows": 0,
    }
    assert (await prune(env.store, env.clock() + timedelta(days=8)))["outbox_rows"] == 1
    assert await env.rows() == []


async def test_a_failing_channel_is_retried_and_never_holds_up_web_push(env: Env):
    await env.subscribe("alice", await env.key())
    with Webhook() as hook:
        hook.status = 500
        now = rfc3339(env.clock())

        async def channel(conn):
            await conn.run(
                "INSERT INTO push_channels(id, source, url, url_hash, masked_url, created_at)"
                " VALUES (?, 'admin', ?, 'h', 'json://…', ?)",
                (new_id("chn"), hook.url, now),
            )

        await env.store.write(channel)
        [belief_id] = await env.propose(TEXTS[0])
        worker = env.worker()
        await worker.start()
        await env.fake.wait_for(1, name="alice")
        await _run(worker)
        [row] = await env.rows("channel_outbox")
        assert (row["state"], row["attempts"]) == ("queued", 1)
        assert row["next_attempt_at"] == rfc3339(env.clock() + timedelta(seconds=2))

        hook.status = 200
        env.clock.advance(2)
        await _run(worker)
        [message] = await asyncio.to_thread(hook.wait_for, 1)
        [row] = await env.rows("channel_outbox")
        assert (row["state"], row["attempts"]) == ("sent", 2)
    assert message["title"] == "I've learned:"
    assert message["message"].startswith(TEXTS[0])
    assert message["message"].endswith(f"{BASE_URL}/?belief={belief_id}")


async def test_a_graceful_stop_hands_back_claimed_rows_it_never_started(env: Env):
    await env.subscribe("alice", await env.key())
    env.fake.script("alice", *[Reply(201, delay=0.3)] * 3)
    ids = await env.propose(*TEXTS[:3])
    first = env.worker(concurrency=1, lease_seconds=600)
    await first.start()
    while not (first._lanes[0].tasks and first._lanes[0].buffer):
        await asyncio.sleep(0.005)
    await first.stop(drain_seconds=5)
    rows = await env.rows()
    assert sorted((r["state"], r["lease_owner"], r["attempts"]) for r in rows) == [
        ("queued", None, 0),
        ("queued", None, 0),
        ("sent", None, 1),
    ]

    second = env.worker()  # same clock: nothing waits for a lease to lapse
    await second.start()
    await env.fake.wait_for(3, name="alice")
    await _run(second)
    assert sorted(d.payload["belief_id"] for d in env.fake.received("alice")) == sorted(ids)
    assert sorted(r["attempts"] for r in await env.rows()) == [1, 1, 1]
