"""The delivery worker: claims due outbox rows under a lease, sends them, records every answer."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx

from credence.clock import Clock, parse_rfc3339, rfc3339
from credence.ids import new_id
from credence.notify import outbox, tokens, vapid, webpush
from credence.notify.channels import mask_channel_url, notify_channels
from credence.notify.payload import TEST_BODY, TEST_TITLE, build_test_payload
from credence.notify.webpush import Outcome, SendResult, Subscription
from credence.settings import SettingsError

if TYPE_CHECKING:
    import aiosqlite

    from credence.db.engine import Database
    from credence.services import Services

log = logging.getLogger(__name__)

EXTRAS_KEY = "push"
CONCURRENCY = 8
CHANNEL_CONCURRENCY = 4
LEASE_SECONDS = 60.0
POLL_SECONDS = 1.0
SEND_TIMEOUT_SECONDS = 10.0
CHANNEL_TIMEOUT_SECONDS = 30.0
DRAIN_SECONDS = 15.0
PRUNE_INTERVAL_SECONDS = 3600.0
STALE_SUBSCRIPTION = timedelta(days=60)
KEEP_FINISHED = timedelta(days=7)
MAX_SUBSCRIPTIONS_PER_KEY = 20


@dataclass
class PushRuntime:
    """What the push API needs at run time: VAPID keys, the token secret and the worker."""

    keys: vapid.VapidKeys
    subject: str
    secret: bytes
    worker: PushWorker | None = None


def load_runtime(settings: Any) -> PushRuntime:
    """Validate the VAPID subject, load (or create once) the keys and the token secret.

    Raises SettingsError with a message naming the setting to fix.
    """
    try:
        subject = vapid.validate_subject(settings.vapid_subject)
    except ValueError as exc:
        raise SettingsError(f"push cannot start: {exc}") from None
    try:
        keys = vapid.load_or_create(settings.data_dir, settings.vapid_private_key)
        secret = tokens.load_or_create_secret(settings.data_dir)
    except (ValueError, OSError) as exc:
        raise SettingsError(f"push cannot start: {exc}") from None
    return PushRuntime(keys=keys, subject=subject, secret=secret)


def push_http_of(services: Services) -> httpx.AsyncClient:
    """The push client that dials only vetted addresses (the app always provides one)."""
    if services.push_http is None:
        raise RuntimeError("these services have no push client")
    return services.push_http


def runtime_of(services: Services) -> PushRuntime:
    """The running push runtime, or one loaded on demand when the worker is not part of the app."""
    runtime = services.extras.get(EXTRAS_KEY)
    if runtime is None:
        runtime = services.extras[EXTRAS_KEY] = load_runtime(services.settings)
    return runtime


class _Recorder:
    """Writes delivery results in batches: one transaction for every result that is waiting.

    Each caller returns only once its own statement is committed, so "recorded" keeps meaning
    durable; batching just stops a fan-out from paying one commit (and fsync) per message.
    """

    def __init__(self, store: Database) -> None:
        self.store = store
        self._waiting: list[tuple[str, tuple[Any, ...], asyncio.Future[None]]] = []
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    async def record(self, sql: str, params: tuple[Any, ...]) -> None:
        """Execute one UPDATE/DELETE durably, together with whatever else is waiting."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((sql, params, done))
        self._wakeup.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="push-recorder")
        await done

    async def close(self) -> None:
        """Flush what is waiting and stop."""
        self._closing = True
        self._wakeup.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self._waiting:
            batch, self._waiting = self._waiting, []
            await self._flush(batch)

    async def _run(self) -> None:
        while True:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                await self._flush(batch)
            if self._closing:
                return
            await self._wakeup.wait()
            self._wakeup.clear()

    async def _flush(self, batch: list[tuple[str, tuple[Any, ...], asyncio.Future[None]]]) -> None:
        grouped: dict[str, list[tuple[Any, ...]]] = {}
        for sql, params, _ in batch:
            grouped.setdefault(sql, []).append(params)

        async def work(conn: aiosqlite.Connection) -> None:
            for sql, rows in grouped.items():
                await conn.executemany(sql, rows)

        try:
            await self.store.write(work)
        except Exception as exc:
            for _, _, done in batch:
                if not done.done():
                    done.set_exception(exc)
        else:
            for _, _, done in batch:
                if not done.done():
                    done.set_result(None)


@dataclass
class _Lane:
    name: str
    slots: int
    claim: Callable[[int], Awaitable[list[Any]]]
    deliver: Callable[[Any, Callable[[], None]], Awaitable[None]]
    next_due: Callable[[], Awaitable[str | None]]
    table: str
    event: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    # The subset of tasks still talking to the network; only these hold a send slot.
    sending: set[asyncio.Task[None]] = field(default_factory=set)
    buffer: deque[Any] = field(default_factory=deque)
    # True while a claim is awaited: its rows are leased but not yet in the buffer.
    claiming: bool = False


class PushWorker:
    """Sends the push and channel outboxes, at most ``concurrency`` web pushes at a time.

    Every row is claimed with a lease (owner + expiry) and ``attempts`` is counted at the claim.
    A result is recorded (committed) as soon as its send returns, so a crash can only re-send
    the rows whose sends were in flight; their leases expire and another worker picks them up.
    On a graceful stop the worker stops claiming, lets in-flight sends finish and be recorded,
    and hands back rows it had claimed but not started.
    """

    def __init__(
        self,
        store: Database,
        http: httpx.AsyncClient,
        clock: Clock,
        keys: vapid.VapidKeys,
        subject: str,
        *,
        concurrency: int = CONCURRENCY,
        channel_concurrency: int = CHANNEL_CONCURRENCY,
        lease_seconds: float = LEASE_SECONDS,
        poll_seconds: float = POLL_SECONDS,
        send_timeout: float = SEND_TIMEOUT_SECONDS,
        channel_timeout: float = CHANNEL_TIMEOUT_SECONDS,
        prune_interval: float = PRUNE_INTERVAL_SECONDS,
    ) -> None:
        if concurrency < 1 or channel_concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.store = store
        self.http = http
        self.clock = clock
        self.keys = keys
        self.subject = vapid.validate_subject(subject)
        self.lease = timedelta(seconds=lease_seconds)
        self.poll_seconds = poll_seconds
        self.send_timeout = send_timeout
        self.channel_timeout = channel_timeout
        self.prune_interval = prune_interval
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{new_id('w')}"
        self.stats: Counter[str] = Counter()
        self._recorder = _Recorder(store)
        self._stopping = False
        self._runners: list[asyncio.Task[None]] = []
        self._pruner: asyncio.Task[None] | None = None
        self._lanes = (
            _Lane(
                "push",
                concurrency,
                self._claim_push,
                self._deliver_push,
                self._next_push,
                "push_outbox",
            ),
            _Lane(
                "channel",
                channel_concurrency,
                self._claim_channel,
                self._deliver_channel,
                self._next_channel,
                "channel_outbox",
            ),
        )

    # --- lifecycle ----------------------------------------------------------------------

    def wake(self) -> None:
        """Look for due rows now (called after a commit that queued notifications)."""
        for lane in self._lanes:
            lane.event.set()

    async def start(self) -> None:
        """Start the lanes and the pruner."""
        self._stopping = False
        for lane in self._lanes:
            self._runners.append(asyncio.create_task(self._run(lane), name=f"push-{lane.name}"))
        self._pruner = asyncio.create_task(self._prune_forever(), name="push-prune")

    async def stop(self, drain_seconds: float = DRAIN_SECONDS) -> None:
        """Stop claiming, let in-flight sends finish and be recorded, then stop."""
        self._stopping = True
        self.wake()
        if self._pruner is not None:
            self._pruner.cancel()
            await asyncio.gather(self._pruner, return_exceptions=True)
            self._pruner = None
        await asyncio.gather(*self._runners, return_exceptions=True)
        self._runners.clear()
        in_flight = [task for lane in self._lanes for task in lane.tasks]
        if in_flight:
            _, pending = await asyncio.wait(in_flight, timeout=drain_seconds)
            for task in pending:
                task.cancel()  # unrecorded: its lease expires and the next start resends it
            if pending:
                log.warning("push: %d sends unfinished at shutdown; they go again", len(pending))
                await asyncio.gather(*pending, return_exceptions=True)
        await self._release_buffered()
        await self._recorder.close()

    async def _release_buffered(self) -> None:
        """Hand back rows claimed but never started, so the next start sends them at once."""
        for lane in self._lanes:
            ids = [row["id"] for row in lane.buffer]
            lane.buffer.clear()
            if not ids:
                continue
            sql = (
                f"UPDATE {lane.table} SET lease_owner = NULL, lease_until = NULL,"
                " attempts = attempts - 1"
                f" WHERE lease_owner = ? AND id IN ({','.join('?' * len(ids))})"
            )
            await self._recorder.record(sql, (self.owner, *ids))

    async def idle(self, timeout: float = 10.0) -> None:
        """Wait until nothing is due or in flight (for tests and the CLI)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            busy = any(lane.tasks or lane.buffer or lane.claiming for lane in self._lanes)
            due = False
            now = rfc3339(self.clock())
            for lane in self._lanes:
                moment = await lane.next_due()
                due = due or (moment is not None and moment <= now)
            if not busy and not due:
                return
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("push worker still busy")
            self.wake()
            await asyncio.sleep(0.01)

    async def _run(self, lane: _Lane) -> None:
        # Claimed rows are kept up to two slot-fulls ahead of the free slots and refilled
        # while sends run, so a finished send is followed by the next at once rather than
        # after a claim round trip. A buffered row waits at most two sends, far inside the
        # lease; one whose lease lapsed anyway is left for the next claim.
        more = False  # the last claim filled its limit: there are probably more due rows
        while not self._stopping:
            lane.event.clear()
            now_text = rfc3339(self.clock())
            while lane.buffer and len(lane.sending) < lane.slots:
                row = lane.buffer.popleft()
                if row["lease_until"] <= now_text:
                    continue
                task = asyncio.create_task(self._guarded(lane, row))
                lane.tasks.add(task)
                lane.sending.add(task)
                task.add_done_callback(lane.tasks.discard)
                task.add_done_callback(lane.sending.discard)
            wanted = 3 * lane.slots - len(lane.sending) - len(lane.buffer)
            timeout = self.poll_seconds
            if wanted > 0 and len(lane.buffer) < lane.slots:
                try:
                    wait = 0.0
                    if not more:
                        due_at = await lane.next_due()
                        wait = (
                            self.poll_seconds
                            if due_at is None
                            else (parse_rfc3339(due_at) - self.clock()).total_seconds()
                        )
                    if wait <= 0:
                        lane.claiming = True
                        try:
                            claimed = await lane.claim(wanted)
                        finally:
                            lane.claiming = False
                        lane.buffer.extend(claimed)
                        more = len(claimed) == wanted
                        if claimed:
                            continue
                    else:
                        timeout = min(timeout, wait)
                except Exception:
                    more = False
                    log.exception("push %s lane: claiming failed; retrying", lane.name)
            with suppress(TimeoutError):
                await asyncio.wait_for(lane.event.wait(), timeout=max(timeout, 0.001))

    async def _guarded(self, lane: _Lane, row: Any) -> None:
        def sent() -> None:
            # The answer is in: free the send slot while the result is being committed.
            lane.sending.discard(asyncio.current_task())
            lane.event.set()

        try:
            await lane.deliver(row, sent)
        except Exception:
            # A bug, or the store failing: the lease expires and the row goes again (its
            # attempts were counted at the claim, so this cannot loop forever).
            log.exception("push %s lane: delivering %s failed", lane.name, row["id"])
        finally:
            lane.event.set()

    # --- web push -----------------------------------------------------------------------

    async def _next_push(self) -> str | None:
        row = await self.store.fetchone(
            "SELECT MIN(MAX(next_attempt_at, COALESCE(lease_until, ''))) AS due"
            " FROM push_outbox WHERE state = 'queued'"
        )
        return row["due"] if row is not None else None

    async def _claim_push(self, limit: int) -> list[Any]:
        return await self._claim(
            "push_outbox",
            "SELECT o.*, s.endpoint, s.p256dh, s.auth, k.revoked_at,"
            " b.status AS belief_status, b.version AS current_version"
            " FROM push_outbox o JOIN push_subscriptions s ON s.id = o.subscription_id"
            " JOIN api_keys k ON k.id = s.key_id LEFT JOIN beliefs b ON b.id = o.belief_id",
            self.lease,
            limit,
        )

    async def _claim(self, table: str, select: str, lease: timedelta, limit: int) -> list[Any]:
        """Lease up to ``limit`` due rows of an outbox; finish those no longer worth sending."""
        now = self.clock()
        now_text, until = rfc3339(now), rfc3339(now + lease)

        async def work(conn: aiosqlite.Connection) -> list[Any]:
            await _sweep(conn, table, now_text)
            ids = await _lease(conn, table, self.owner, until, now_text, limit)
            if not ids:
                return []
            marks = ",".join("?" * len(ids))
            rows = await conn.execute_fetchall(
                f"{select} WHERE o.id IN ({marks}) ORDER BY o.next_attempt_at, o.id", ids
            )
            ready = []
            for row in rows:
                if row["revoked_at"] is not None:
                    await _finish(conn, table, row["id"], "failed", now_text, "key revoked")
                elif row["kind"] == outbox.KIND_BELIEF and (
                    row["belief_status"] != "pending"
                    or row["current_version"] != row["belief_version"]
                ):
                    # Decided elsewhere before this went out: a stale "I've learned" is noise.
                    await _finish(conn, table, row["id"], "obsolete", now_text, None)
                else:
                    ready.append(row)
            return ready

        return await self.store.write(work)

    async def _deliver_push(self, row: Any, sent: Callable[[], None]) -> None:
        subscription = Subscription(row["endpoint"], row["p256dh"], row["auth"])
        now = self.clock()
        age = max(0.0, (now - parse_rfc3339(row["created_at"])).total_seconds())
        try:
            result = await webpush.send(
                self.http,
                subscription,
                row["payload"],
                self.keys,
                self.subject,
                ttl=max(0, row["ttl"] - int(age)),
                urgency=row["urgency"],
                topic=row["topic"],
                now=now,
                timeout=self.send_timeout,
            )
        except ValueError as exc:
            result = SendResult(Outcome.FAILED, None, None, f"cannot send: {exc}")
        sent()
        await self._record_push(row, result)

    async def _record_push(self, row: Any, result: SendResult) -> None:
        now = self.clock()
        now_text = rfc3339(now)
        age = max(0.0, (now - parse_rfc3339(row["created_at"])).total_seconds())
        self.stats[result.outcome.value] += 1
        detail = result.detail[:300] or None
        if result.outcome is Outcome.SENT:
            sql = (
                "UPDATE push_outbox SET state = 'sent', sent_at = ?, finished_at = ?,"
                " last_status = ?, last_error = NULL, lease_owner = NULL, lease_until = NULL"
                " WHERE id = ?"
            )
            params: tuple[Any, ...] = (now_text, now_text, result.status_code, row["id"])
        elif result.outcome is Outcome.GONE:
            log.info(
                "push subscription %s is gone (HTTP %s); deleting it",
                row["subscription_id"],
                result.status_code,
            )
            sql, params = "DELETE FROM push_subscriptions WHERE id = ?", (row["subscription_id"],)
        else:
            delay = webpush.next_retry_delay(
                result, row["attempts"], age_seconds=age, ttl=row["ttl"]
            )
            if result.outcome is Outcome.AUTH_FAILED:
                log.error(
                    "PUSH REJECTED OUR VAPID CREDENTIALS for subscription %s (HTTP %s: %s); no"
                    " push reaches that device until the VAPID key / CREDENCE_VAPID_SUBJECT is"
                    " fixed or it subscribes again",
                    row["subscription_id"],
                    result.status_code,
                    detail,
                )
            if delay is None:
                sql = (
                    "UPDATE push_outbox SET state = 'failed', finished_at = ?, last_status = ?,"
                    " last_error = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?"
                )
                params = (now_text, result.status_code, f"{result.outcome}: {detail}", row["id"])
            else:
                sql = (
                    "UPDATE push_outbox SET next_attempt_at = ?, last_status = ?, last_error = ?,"
                    " lease_owner = NULL, lease_until = NULL WHERE id = ?"
                )
                params = (
                    rfc3339(now + timedelta(seconds=delay)),
                    result.status_code,
                    f"{result.outcome}: {detail}",
                    row["id"],
                )

        await self._recorder.record(sql, params)

    # --- apprise channels ---------------------------------------------------------------

    async def _next_channel(self) -> str | None:
        row = await self.store.fetchone(
            "SELECT MIN(MAX(next_attempt_at, COALESCE(lease_until, ''))) AS due"
            " FROM channel_outbox WHERE state = 'queued'"
        )
        return row["due"] if row is not None else None

    async def _claim_channel(self, limit: int) -> list[Any]:
        return await self._claim(
            "channel_outbox",
            "SELECT o.*, c.url, c.masked_url, NULL AS revoked_at, b.status AS belief_status,"
            " b.version AS current_version FROM channel_outbox o"
            " JOIN push_channels c ON c.id = o.channel_id"
            " LEFT JOIN beliefs b ON b.id = o.belief_id",
            self.lease + timedelta(seconds=60),
            limit,
        )

    async def _deliver_channel(self, row: Any, sent: Callable[[], None]) -> None:
        [result] = await notify_channels(
            [row["url"]], row["title"], row["body"], timeout=self.channel_timeout
        )
        sent()
        now = self.clock()
        now_text = rfc3339(now)
        if result.ok:
            self.stats["channel_sent"] += 1
            sql = (
                "UPDATE channel_outbox SET state = 'sent', sent_at = ?, finished_at = ?,"
                " last_error = NULL, lease_owner = NULL, lease_until = NULL WHERE id = ?"
            )
            params: tuple[Any, ...] = (now_text, now_text, row["id"])
        else:
            self.stats["channel_failed"] += 1
            created = parse_rfc3339(row["created_at"])
            ttl = int((parse_rfc3339(row["expires_at"]) - created).total_seconds())
            delay = webpush.next_retry_delay(
                SendResult(Outcome.RETRY, None, None, result.detail),
                row["attempts"],
                age_seconds=max(0.0, (now - created).total_seconds()),
                ttl=ttl,
            )
            log.warning(
                "apprise channel %s failed (attempt %d): %s%s",
                row["masked_url"],
                row["attempts"],
                result.detail,
                "" if delay is None else f"; retrying in {delay:.0f} s",
            )
            if delay is None:
                sql = (
                    "UPDATE channel_outbox SET state = 'failed', finished_at = ?, last_error = ?,"
                    " lease_owner = NULL, lease_until = NULL WHERE id = ?"
                )
                params = (now_text, result.detail[:300], row["id"])
            else:
                sql = (
                    "UPDATE channel_outbox SET next_attempt_at = ?, last_error = ?,"
                    " lease_owner = NULL, lease_until = NULL WHERE id = ?"
                )
                params = (rfc3339(now + timedelta(seconds=delay)), result.detail[:300], row["id"])

        await self._recorder.record(sql, params)

    # --- pruning ------------------------------------------------------------------------

    async def prune(self) -> dict[str, int]:
        """Drop subscriptions unseen for 60 days, expired or of revoked keys; old finished rows."""
        return await prune(self.store, self.clock())

    async def _prune_forever(self) -> None:
        while True:
            try:
                await self.prune()
            except Exception:
                log.exception("push: pruning failed")
            await asyncio.sleep(self.prune_interval)


async def prune(store: Database, now: datetime) -> dict[str, int]:
    """Delete stale subscriptions (with their queued rows) and week-old finished outbox rows."""
    stale = rfc3339(now - STALE_SUBSCRIPTION)
    finished = rfc3339(now - KEEP_FINISHED)
    now_ms = int(now.timestamp() * 1000)

    async def work(conn: aiosqlite.Connection) -> dict[str, int]:
        cur = await conn.execute(
            "DELETE FROM push_subscriptions WHERE last_seen_at < ?"
            " OR (expiration_time IS NOT NULL AND expiration_time <= ?)"
            " OR key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NOT NULL)",
            (stale, now_ms),
        )
        subscriptions = cur.rowcount
        cur = await conn.execute("DELETE FROM push_outbox WHERE finished_at < ?", (finished,))
        rows = cur.rowcount
        cur = await conn.execute("DELETE FROM channel_outbox WHERE finished_at < ?", (finished,))
        return {"subscriptions": subscriptions, "outbox_rows": rows + cur.rowcount}

    pruned = await store.write(work)
    if pruned["subscriptions"]:
        log.info("push: pruned %d stale subscriptions", pruned["subscriptions"])
    return pruned


async def _sweep(conn: aiosqlite.Connection, table: str, now_text: str) -> None:
    """Retire queued rows past their TTL, and rows whose last allowed attempt never reported."""
    await conn.execute(
        f"UPDATE {table} SET state = 'expired', finished_at = ?, lease_owner = NULL,"
        " lease_until = NULL WHERE state = 'queued' AND expires_at <= ?",
        (now_text, now_text),
    )
    await conn.execute(
        f"UPDATE {table} SET state = 'failed', finished_at = ?, last_error = ?,"
        " lease_owner = NULL, lease_until = NULL WHERE state = 'queued' AND attempts >= ?"
        " AND lease_until IS NOT NULL AND lease_until <= ?",
        (now_text, "no result recorded for the last attempt", webpush.MAX_ATTEMPTS, now_text),
    )


async def _lease(
    conn: aiosqlite.Connection, table: str, owner: str, until: str, now_text: str, limit: int
) -> list[str]:
    async with conn.execute(
        f"UPDATE {table} SET lease_owner = ?, lease_until = ?, attempts = attempts + 1"
        f" WHERE id IN (SELECT id FROM {table} WHERE state = 'queued' AND next_attempt_at <= ?"
        " AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at, id LIMIT ?)"
        " RETURNING id",
        (owner, until, now_text, now_text, limit),
    ) as cur:
        return [r[0] for r in await cur.fetchall()]


async def _finish(
    conn: aiosqlite.Connection,
    table: str,
    row_id: str,
    state: str,
    now_text: str,
    error: str | None,
) -> None:
    await conn.execute(
        f"UPDATE {table} SET state = ?, finished_at = ?, last_error = ?, lease_owner = NULL,"
        " lease_until = NULL WHERE id = ?",
        (state, now_text, error, row_id),
    )


# --- test notifications -----------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceResult:
    """One subscription's answer to a test push."""

    subscription_id: str
    outcome: str
    status_code: int | None
    detail: str


@dataclass(frozen=True)
class ChannelTestResult:
    """One channel's answer to a test message."""

    channel_id: str
    url: str
    ok: bool
    detail: str


async def send_test(
    store: Database,
    http: httpx.AsyncClient,
    runtime: PushRuntime,
    clock: Clock,
    *,
    key_id: str | None,
    agents: frozenset[str] | None,
    concurrency: int = CONCURRENCY,
    channel_timeout: float = 10.0,
) -> tuple[str, list[DeviceResult], list[ChannelTestResult]]:
    """Send a test notification now to a key's subscriptions (every key's if None) and channels.

    ``agents`` limits channels to those covering one of these agents, and the payload's pending
    count to their beliefs (None: every channel and agent).
    Gone subscriptions are deleted, as in delivery.
    """
    test_id = new_id("test")
    if key_id is None:
        subs = await store.fetchall(
            "SELECT s.* FROM push_subscriptions s JOIN api_keys k ON k.id = s.key_id"
            " WHERE k.revoked_at IS NULL ORDER BY s.id"
        )
    else:
        subs = await store.fetchall(
            "SELECT * FROM push_subscriptions WHERE key_id = ? ORDER BY id", (key_id,)
        )
    channel_rows = await store.fetchall("SELECT * FROM push_channels ORDER BY id")
    channel_rows = [
        row
        for row in channel_rows
        if agents is None or row["agents"] is None or set(_json_list(row["agents"])) & agents
    ]
    # The count is the caller's own: a reviewer of one agent learns nothing about the others.
    count = await store.read(lambda conn: outbox.pending_count(conn, agents))
    payload = build_test_payload(pending_count=count, test_id=test_id)
    gate = asyncio.Semaphore(concurrency)

    async def one(row: Any) -> DeviceResult:
        async with gate:
            subscription = Subscription(row["endpoint"], row["p256dh"], row["auth"])
            result = await webpush.send(
                http,
                subscription,
                payload,
                runtime.keys,
                runtime.subject,
                ttl=3600,
                urgency="normal",
                topic=None,
                now=clock(),
                timeout=SEND_TIMEOUT_SECONDS,
            )
        return DeviceResult(row["id"], result.outcome.value, result.status_code, result.detail)

    devices, channel_results = await asyncio.gather(
        asyncio.gather(*(one(row) for row in subs)),
        notify_channels(
            [row["url"] for row in channel_rows], TEST_TITLE, TEST_BODY, timeout=channel_timeout
        ),
    )
    gone = [d.subscription_id for d in devices if d.outcome == Outcome.GONE.value]
    if gone:

        async def work(conn: aiosqlite.Connection) -> None:
            await conn.executemany(
                "DELETE FROM push_subscriptions WHERE id = ?", [(g,) for g in gone]
            )

        await store.write(work)
    channels = [
        ChannelTestResult(row["id"], row["masked_url"], result.ok, result.detail)
        for row, result in zip(channel_rows, channel_results, strict=True)
    ]
    return test_id, list(devices), channels


def _json_list(text: str) -> list[str]:
    value = json.loads(text)
    return value if isinstance(value, list) else []


# --- the app component ------------------------------------------------------------------------


def push_component(
    *,
    concurrency: int = CONCURRENCY,
    lease_seconds: float = LEASE_SECONDS,
    poll_seconds: float = POLL_SECONDS,
    send_timeout: float = SEND_TIMEOUT_SECONDS,
    drain_seconds: float = DRAIN_SECONDS,
) -> Callable[[Services], Any]:
    """A Component: VAPID keys, the outbox hook on new pending beliefs, and the delivery worker.

    Start-up fails with a SettingsError naming CREDENCE_VAPID_SUBJECT (or the key setting)
    when push could never work, rather than failing every send later.
    """

    @asynccontextmanager
    async def component(services: Services) -> AsyncIterator[PushRuntime]:
        settings = services.settings
        runtime = load_runtime(settings)
        worker = PushWorker(
            services.store,
            push_http_of(services),
            services.clock,
            runtime.keys,
            runtime.subject,
            concurrency=concurrency,
            lease_seconds=lease_seconds,
            poll_seconds=poll_seconds,
            send_timeout=send_timeout,
        )
        runtime.worker = worker
        for url in settings.apprise_urls:
            try:
                mask_channel_url(url)
            except ValueError as exc:
                raise SettingsError(f"CREDENCE_APPRISE_URLS has an unusable URL: {exc}") from None
        await outbox.sync_env_channels(
            services.store, settings.apprise_urls, mask_channel_url, services.clock()
        )
        config = outbox.OutboxConfig(
            secret=runtime.secret,
            ttl_seconds=settings.push_ttl_s,
            base_url=settings.base_url,
            clock=services.clock,
        )
        hook = outbox.pending_hook(config, worker.wake)
        services.hooks.in_txn_pending.append(hook)
        wake_on_change = _wake_on_change(worker)
        services.hooks.after_change.append(wake_on_change)
        services.extras[EXTRAS_KEY] = runtime
        await worker.start()
        log.info("push: VAPID key %s (%s)", runtime.keys.public_key_b64url, runtime.keys.source)
        try:
            yield runtime
        finally:
            services.hooks.in_txn_pending.remove(hook)
            services.hooks.after_change.remove(wake_on_change)
            await worker.stop(drain_seconds)

    return component


def _wake_on_change(worker: PushWorker) -> Callable[[str], None]:
    def wake(_agent_id: str) -> None:
        worker.wake()

    return wake
