"""The delivery worker: claims due outbox rows under a lease, sends them, records every answer."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx

from credence.clock import Clock, parse_rfc3339, rfc3339
from credence.db import outbox as outbox_db
from credence.db import push as push_db
from credence.db.outbox import Result, Table
from credence.ids import new_id
from credence.notify import ntfy, vapid, webpush
from credence.notify.channels import ChannelResult, notify_channels
from credence.notify.webpush import Outcome, SendResult, Subscription
from credence.observe import metrics, tracing
from credence.tasks import cancel_and_wait, wait_or_timeout
from credence.tls import tls_context

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database

log = logging.getLogger(__name__)

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


class _Recorder:
    """Writes delivery results in batches: one transaction for every result that is waiting.

    Each caller returns only once its own statement is committed, so "recorded" keeps meaning
    durable; batching just stops a fan-out from paying one commit (and fsync) per message.
    """

    def __init__(self, store: Database) -> None:
        self.store = store
        self._waiting: list[tuple[Result, asyncio.Future[None]]] = []
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    async def record(self, *results: Result) -> None:
        """Record these answers durably, together with whatever else is waiting."""
        if not results:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.extend((result, done) for result in results)
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

    async def _flush(self, batch: list[tuple[Result, asyncio.Future[None]]]) -> None:
        results = [result for result, _ in batch]
        try:
            await self.store.write(lambda conn: outbox_db.record(conn, results))
        except Exception as exc:
            for _, done in batch:
                if not done.done():
                    done.set_exception(exc)
        else:
            for _, done in batch:
                if not done.done():
                    done.set_result(None)


@dataclass
class _Lane:
    name: str
    slots: int
    claim: Callable[[int], Awaitable[list[Any]]]
    deliver: Callable[[Any, Callable[[], None]], Awaitable[None]]
    next_due: Callable[[], Awaitable[str | None]]
    table: Table
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
            await cancel_and_wait(self._pruner)
            self._pruner = None
        await asyncio.gather(*self._runners, return_exceptions=True)
        self._runners.clear()
        in_flight = [task for lane in self._lanes for task in lane.tasks]
        if in_flight:
            _, pending = await asyncio.wait(in_flight, timeout=drain_seconds)
            if pending:
                log.warning("push: %d sends unfinished at shutdown; they go again", len(pending))
            for task in pending:
                await cancel_and_wait(task)  # unrecorded: its lease lapses, a later start resends
        await self._release_buffered()
        await self._recorder.close()

    async def _release_buffered(self) -> None:
        """Hand back rows claimed but never started, so the next start sends them at once."""
        for lane in self._lanes:
            ids = [row["id"] for row in lane.buffer]
            lane.buffer.clear()
            await self._recorder.record(
                *(Result(lane.table, "release", row_id, owner=self.owner) for row_id in ids)
            )

    async def idle(self, timeout: float = 10.0) -> None:
        """Wait until nothing is due or in flight (for tests and the CLI)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            due = False
            now = rfc3339(self.clock())
            for lane in self._lanes:
                moment = await lane.next_due()
                due = due or (moment is not None and moment <= now)
            # Judged after the reads: a claim that committed while they ran leased its rows
            # (so they read as not due), and its lane shows them as claiming, buffered or sent.
            busy = any(lane.tasks or lane.buffer or lane.claiming for lane in self._lanes)
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
            await wait_or_timeout(lane.event, max(timeout, 0.001))

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
        return await self.store.read(lambda conn: outbox_db.next_due(conn, "push_outbox"))

    async def _claim_push(self, limit: int) -> list[Any]:
        return await self._claim("push_outbox", self.lease, limit)

    async def _claim(self, table: Table, lease: timedelta, limit: int) -> list[Any]:
        """Lease up to ``limit`` due rows of an outbox; finish those no longer worth sending."""
        now = self.clock()
        now_text, until = rfc3339(now), rfc3339(now + lease)

        async def work(conn: Connection) -> list[Any]:
            return await outbox_db.claim(
                conn,
                table,
                owner=self.owner,
                until=until,
                now=now_text,
                limit=limit,
                max_attempts=webpush.MAX_ATTEMPTS,
            )

        return await self.store.write(work)

    async def _deliver_push(self, row: Any, sent: Callable[[], None]) -> None:
        subscription = Subscription(row["endpoint"], row["p256dh"], row["auth"])
        now = self.clock()
        age = max(0.0, (now - parse_rfc3339(row["created_at"])).total_seconds())
        span = tracing.start_client_span("push send", {"credence.outbox.id": row["id"]})
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
        tracing.end_client_span(span, {"credence.push.outcome": result.outcome.value})
        sent()
        await self._record_push(row, result)

    async def _record_push(self, row: Any, result: SendResult) -> None:
        now = self.clock()
        now_text = rfc3339(now)
        age = max(0.0, (now - parse_rfc3339(row["created_at"])).total_seconds())
        self.stats[result.outcome.value] += 1
        metrics.observe_push(result.outcome.value)
        detail = result.detail[:300] or None
        if result.outcome is Outcome.SENT:
            record = Result("push_outbox", "sent", row["id"], now_text, result.status_code)
        elif result.outcome is Outcome.GONE:
            log.info(
                "push subscription %s is gone (HTTP %s); deleting it",
                row["subscription_id"],
                result.status_code,
            )
            record = Result("push_outbox", "gone", row["subscription_id"])
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
            error = f"{result.outcome}: {detail}"
            if delay is None:
                record = Result(
                    "push_outbox", "failed", row["id"], now_text, result.status_code, error
                )
            else:
                retry_at = rfc3339(now + timedelta(seconds=delay))
                record = Result(
                    "push_outbox", "retry", row["id"], retry_at, result.status_code, error
                )
        await self._recorder.record(record)

    # --- apprise channels ---------------------------------------------------------------

    async def _next_channel(self) -> str | None:
        return await self.store.read(lambda conn: outbox_db.next_due(conn, "channel_outbox"))

    async def _claim_channel(self, limit: int) -> list[Any]:
        # apprise can take its whole timeout; the lease outlasts it.
        return await self._claim("channel_outbox", self.lease + timedelta(seconds=60), limit)

    async def _deliver_channel(self, row: Any, sent: Callable[[], None]) -> None:
        answer = None
        if row["channel_kind"] == ntfy.KIND:
            async with httpx.AsyncClient(
                timeout=self.channel_timeout, verify=tls_context()
            ) as client:
                answer = await ntfy.publish(
                    client, row["url"], row["access_token"], row["body"], self.clock()
                )
            result = ChannelResult(row["masked_url"], answer.outcome is Outcome.SENT, answer.detail)
        else:
            [result] = await notify_channels(
                [row["url"]], row["title"], row["body"], timeout=self.channel_timeout
            )
        sent()
        metrics.observe_channel(result.ok)
        now = self.clock()
        now_text = rfc3339(now)
        if result.ok:
            self.stats["channel_sent"] += 1
            record = Result("channel_outbox", "sent", row["id"], now_text)
        else:
            self.stats["channel_failed"] += 1
            created = parse_rfc3339(row["created_at"])
            ttl = int((parse_rfc3339(row["expires_at"]) - created).total_seconds())
            delay = webpush.next_retry_delay(
                answer or SendResult(Outcome.RETRY, None, None, result.detail),
                row["attempts"],
                age_seconds=max(0.0, (now - created).total_seconds()),
                ttl=ttl,
            )
            log.warning(
                "channel %s failed (attempt %d): %s%s",
                row["masked_url"],
                row["attempts"],
                result.detail,
                "" if delay is None else f"; retrying in {delay:.0f} s",
            )
            error = result.detail[:300]
            if delay is None:
                record = Result("channel_outbox", "failed", row["id"], now_text, error=error)
            else:
                retry_at = rfc3339(now + timedelta(seconds=delay))
                record = Result("channel_outbox", "retry", row["id"], retry_at, error=error)
        await self._recorder.record(record)

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

    async def work(conn: Connection) -> dict[str, int]:
        subscriptions = await push_db.prune_subscriptions(conn, unseen_since=stale, now_ms=now_ms)
        rows = await outbox_db.prune_finished(conn, finished)
        return {"subscriptions": subscriptions, "outbox_rows": rows}

    pruned = await store.write(work)
    if pruned["subscriptions"]:
        log.info("push: pruned %d stale subscriptions", pruned["subscriptions"])
    return pruned
