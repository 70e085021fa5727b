"""The rate-limit middleware: 429 with Retry-After before a limited request's body is read."""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.exceptions import TooManyRequestsException
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from credence.ratelimit import RateLimiter, is_expensive


class RateLimitMiddleware(ASGIMiddleware):
    """Answers 429 with Retry-After before a limited request's body is even read.

    Sits after the bearer-auth middleware on the /api/v1 router, so the caller's key is known.
    Expensive reads (context, search, MCP tool calls) also take one of the key's few
    concurrency slots for as long as they run.
    """

    scopes = (ScopeType.HTTP,)

    def __init__(self, limiter: RateLimiter, mount: str | None = None) -> None:
        self.limiter = limiter
        # A mount sees its scope's path cut to the part below it: name the mount instead.
        self.mount = mount

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
        path = self.mount or scope["path"]
        wait = await self.limiter.admit(store, scope["method"], path, key_id, address)
        if wait:
            raise TooManyRequestsException(
                detail=f"rate limit reached; retry after {wait} s",
                headers={"Retry-After": str(wait)},
            )
        if key_id is None or not is_expensive(path):
            await next_app(scope, receive, send)
            return
        bound = self.limiter.expensive
        if not bound.enter(key_id):
            raise TooManyRequestsException(
                detail=(
                    f"this key already has {bound.per_key} context or search requests running;"
                    " retry after 1 s"
                ),
                headers={"Retry-After": "1"},
            )
        try:
            await next_app(scope, receive, send)
        finally:
            bound.leave(key_id)
