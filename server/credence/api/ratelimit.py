"""The rate-limit middleware: 429 with Retry-After before a limited request's body is read."""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.exceptions import TooManyRequestsException
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from credence.ratelimit import RateLimiter


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
        services = getattr(scope["app"].state, "services", None)
        store = services.store if services is not None else None
        wait = await self.limiter.admit(store, scope["method"], scope["path"], key_id, address)
        if wait:
            raise TooManyRequestsException(
                detail=f"rate limit reached; retry after {wait} s",
                headers={"Retry-After": str(wait)},
            )
        await next_app(scope, receive, send)
