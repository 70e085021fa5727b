"""Rate limits: token buckets per API key for writes and (a larger one) for reads, per client
address on pairing, and a bound on each key's concurrent expensive reads.

One SQLite process keeps its buckets in memory; replicas on one PostgreSQL database spend from
buckets in the database (``db/ratelimits``), so the limit holds for the service as a whole.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from credence.db import ratelimits
from credence.db.engine import Connection, Database
from credence.settings import Settings

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PAIR_PATH = "/api/v1/pair"
MCP_PATH = "/mcp"
# Reads that rank, embed or build a block: each costs far more than a row lookup.
EXPENSIVE_SUFFIXES = ("/memory/context", "/memory/search")
MAX_TRACKED = 10_000
# How often (wall seconds) one process deletes idle shared buckets.
SWEEP_SECONDS = 60.0


class TokenBuckets:
    """One token bucket per caller: ``per_minute`` tokens, refilled continuously.

    A bucket holds at most a minute's allowance, so a caller idle for a minute may burst that
    much at once. ``per_minute`` ≤ 0 switches the limit off. Memory is bounded: past
    ``max_tracked`` callers, buckets that have refilled (idle callers) are dropped first.
    """

    def __init__(
        self,
        per_minute: int,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        max_tracked: int = MAX_TRACKED,
    ) -> None:
        self.per_minute = per_minute
        self.capacity = float(max(per_minute, 0))
        self.rate = self.capacity / 60.0
        self._monotonic = monotonic
        self._max_tracked = max_tracked
        self._buckets: dict[str, tuple[float, float]] = {}  # caller -> (tokens, at)

    @property
    def enabled(self) -> bool:
        """False when the limit is switched off."""
        return self.per_minute > 0

    def take(self, caller: str) -> int:
        """Spend one token for ``caller``: 0 when allowed, else whole seconds until one is free."""
        if not self.enabled:
            return 0
        now = self._monotonic()
        tokens, at = self._buckets.pop(caller, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - at) * self.rate)
        if tokens >= 1.0:
            tokens -= 1.0
            wait = 0
        else:
            wait = max(1, math.ceil((1.0 - tokens) / self.rate))
        self._buckets[caller] = (tokens, now)  # re-inserted last: dict order is recency order
        if len(self._buckets) > self._max_tracked:
            self._evict(now)
        return wait

    def _evict(self, now: float) -> None:
        full = [
            caller
            for caller, (tokens, at) in self._buckets.items()
            if tokens + (now - at) * self.rate >= self.capacity
        ]
        for caller in full:
            del self._buckets[caller]
        while len(self._buckets) > self._max_tracked:  # all busy: drop the least recent
            del self._buckets[next(iter(self._buckets))]

    def __len__(self) -> int:
        return len(self._buckets)


class RateLimiter:
    """Decides whether a write request may proceed: per key, or per address for pairing."""

    def __init__(
        self,
        per_minute: int,
        pair_per_minute: int,
        *,
        read_per_minute: int = 0,
        read_concurrency: int = 0,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.keys = TokenBuckets(per_minute, monotonic=monotonic)
        self.reads = TokenBuckets(read_per_minute, monotonic=monotonic)
        self.pairing = TokenBuckets(pair_per_minute, monotonic=monotonic)
        self.anonymous = TokenBuckets(per_minute, monotonic=monotonic)
        self.expensive = ConcurrencyBound(read_concurrency)
        self._wall = wall
        self._swept_at = float("-inf")

    @classmethod
    def from_settings(cls, settings: Settings) -> RateLimiter:
        """The limiter configured by CREDENCE_RATE_LIMIT_PER_MINUTE, …_READ_…, …_PAIR_….

        CREDENCE_RATE_LIMIT_PER_MINUTE=0 switches every limit off (reads and the concurrency
        bound included): benchmarks and load tests rely on that one switch.
        """
        on = settings.rate_limit_per_minute > 0
        return cls(
            settings.rate_limit_per_minute,
            settings.pair_rate_limit_per_minute,
            read_per_minute=settings.read_rate_limit_per_minute if on else 0,
            read_concurrency=settings.read_concurrency_per_key if on else 0,
        )

    def _bucket(
        self, method: str, path: str, key_id: str | None, client: str
    ) -> tuple[TokenBuckets, str, str] | None:
        """The buckets, their name in the database and the caller, or None when unlimited."""
        mcp = path == MCP_PATH or path.startswith(MCP_PATH + "/")
        if method not in WRITE_METHODS and not mcp:
            if key_id is not None and self.reads.enabled:
                return self.reads, "read", key_id
            return None
        if path.rstrip("/") == PAIR_PATH:
            return self.pairing, "pair", client
        if key_id is not None:
            return self.keys, "key", key_id
        return self.anonymous, "anon", client

    def check(self, method: str, path: str, key_id: str | None, client: str) -> int:
        """Seconds to wait before this request may run (in-process buckets); 0: go ahead."""
        chosen = self._bucket(method, path, key_id, client)
        if chosen is None:
            return 0
        buckets, _, caller = chosen
        return buckets.take(caller)

    async def admit(
        self, store: Database | None, method: str, path: str, key_id: str | None, client: str
    ) -> int:
        """Like ``check``, but on PostgreSQL from the buckets every replica shares."""
        if store is None or store.dialect != "postgresql":
            return self.check(method, path, key_id, client)
        chosen = self._bucket(method, path, key_id, client)
        if chosen is None or not chosen[0].enabled:
            return 0
        buckets, family, caller = chosen
        now = self._wall()
        sweep = now - self._swept_at >= SWEEP_SECONDS
        if sweep:
            self._swept_at = now

        async def work(conn: Connection) -> tuple[bool, float]:
            if sweep:  # a full bucket needs no row: drop the ones idle for over a minute
                await ratelimits.forget_idle(conn, before=now - 2 * 60.0)
            return await ratelimits.take(
                conn,
                f"{family}:{caller}",
                capacity=buckets.capacity,
                per_second=buckets.rate,
                now=now,
            )

        # Autocommit, not a write transaction: each statement is atomic on its own, and this
        # saves BEGIN/COMMIT round trips on every limited request (0.7 ms instead of 2.2 ms).
        allowed, tokens = await store.read(work)
        if allowed:
            return 0
        return max(1, math.ceil((1.0 - tokens) / buckets.rate))


def is_expensive(path: str) -> bool:
    """Whether ``path`` is a read that ranks or embeds (context, search, any MCP tool call)."""
    path = path.rstrip("/")
    return path == MCP_PATH or path.endswith(EXPENSIVE_SUFFIXES)


class ConcurrencyBound:
    """At most ``per_key`` expensive requests in flight per key; ``per_key`` ≤ 0: no bound.

    A key over its bound is refused at once (429) rather than queued, so a flood from one key
    holds no sockets or tasks waiting and the other keys' requests meet at most ``per_key``
    of its requests in the event loop and the embedder: the bound is what keeps them fair.
    """

    def __init__(self, per_key: int) -> None:
        self.per_key = per_key
        self._in_flight: dict[str, int] = {}

    def enter(self, key_id: str) -> bool:
        """Take a slot for ``key_id``: False when it already has ``per_key`` in flight."""
        if self.per_key <= 0:
            return True
        held = self._in_flight.get(key_id, 0)
        if held >= self.per_key:
            return False
        self._in_flight[key_id] = held + 1
        return True

    def leave(self, key_id: str) -> None:
        """Give back the slot ``enter`` took."""
        if self.per_key <= 0:
            return
        held = self._in_flight.get(key_id, 0) - 1
        if held > 0:
            self._in_flight[key_id] = held
        else:
            self._in_flight.pop(key_id, None)

    def in_flight(self, key_id: str) -> int:
        """How many expensive requests ``key_id`` has running now."""
        return self._in_flight.get(key_id, 0)
