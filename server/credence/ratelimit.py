"""Rate limits: a token bucket per API key on write routes, and per client address on pairing.

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
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.keys = TokenBuckets(per_minute, monotonic=monotonic)
        self.pairing = TokenBuckets(pair_per_minute, monotonic=monotonic)
        self.anonymous = TokenBuckets(per_minute, monotonic=monotonic)
        self._wall = wall
        self._swept_at = float("-inf")

    @classmethod
    def from_settings(cls, settings: Settings) -> RateLimiter:
        """The limiter configured by CREDENCE_RATE_LIMIT_PER_MINUTE and …_PAIR_…_PER_MINUTE."""
        return cls(settings.rate_limit_per_minute, settings.pair_rate_limit_per_minute)

    def _bucket(
        self, method: str, path: str, key_id: str | None, client: str
    ) -> tuple[TokenBuckets, str, str] | None:
        """The buckets, their name in the database and the caller, or None when unlimited."""
        if method not in WRITE_METHODS:
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
