"""Rate limits: a token bucket per API key on write routes, and per client address on pairing."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from litestar.enums import ScopeType
from litestar.exceptions import TooManyRequestsException
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from credence.settings import Settings

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PAIR_PATH = "/api/v1/pair"
MAX_TRACKED = 10_000


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
    ) -> None:
        self.keys = TokenBuckets(per_minute, monotonic=monotonic)
        self.pairing = TokenBuckets(pair_per_minute, monotonic=monotonic)
        self.anonymous = TokenBuckets(per_minute, monotonic=monotonic)

    @classmethod
    def from_settings(cls, settings: Settings) -> RateLimiter:
        """The limiter configured by CREDENCE_RATE_LIMIT_PER_MINUTE and …_PAIR_…_PER_MINUTE."""
        return cls(settings.rate_limit_per_minute, settings.pair_rate_limit_per_minute)

    def check(self, method: str, path: str, key_id: str | None, client: str) -> int:
        """Seconds to wait before this request may run; 0 means go ahead."""
        if method not in WRITE_METHODS:
            return 0
        if path.rstrip("/") == PAIR_PATH:
            return self.pairing.take(client)
        if key_id is not None:
            return self.keys.take(key_id)
        return self.anonymous.take(client)


class RateLimitMiddleware(ASGIMiddleware):
    """Answers 429 with Retry-After before a limited request's body is even read.

    Sits after the bearer-auth middleware on the /api/v1 router, so the caller's key is known.
    """

    scopes = (ScopeType.HTTP,)

    def __init__(self, limiter: RateLimiter) -> None:
        self.limiter = limiter

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        """Check the caller's bucket, then pass the request on or refuse it."""
        if scope["type"] != ScopeType.HTTP:  # ``scopes`` lets only HTTP through
            await next_app(scope, receive, send)
            return
        user = scope.get("user")
        key_id = getattr(user, "key_id", None)
        client = scope.get("client")
        address = client[0] if client else "unknown"
        wait = self.limiter.check(scope["method"], scope["path"], key_id, address)
        if wait:
            raise TooManyRequestsException(
                detail=f"rate limit reached; retry after {wait} s",
                headers={"Retry-After": str(wait)},
            )
        await next_app(scope, receive, send)
