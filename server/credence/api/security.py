"""Response security headers: a strict CSP for the PWA and safe defaults for the API."""

from __future__ import annotations

import functools
import re

from litestar.datastructures import MutableScopeHeaders
from litestar.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; worker-src 'self'; manifest-src 'self'; base-uri 'none';"
    " form-action 'self'; frame-ancestors 'none'; object-src 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def _options_answer(scope: Scope, allow_for) -> Message | None:
    allowed = allow_for(scope["path"])
    if allowed is None:
        return None
    return {
        "type": "http.response.start",
        "status": 204,
        "headers": [(b"allow", ", ".join(allowed).encode())],
    }


def security_headers_middleware(app: ASGIApp) -> ASGIApp:
    """Wrap ``app`` so every HTTP response carries the security headers."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableScopeHeaders.from_message(message)
                for name, value in HEADERS.items():
                    if name not in headers:
                        headers[name] = value
                if scope["path"].startswith("/api/"):
                    headers["Cache-Control"] = "no-store"
            await send(message)

        if scope["method"] == "OPTIONS" and scope["path"].startswith("/api/"):
            # Answer OPTIONS from the documented routes, before auth and guards run.
            start = _options_answer(scope, allowed_methods)
            if start is not None:
                await send_with_headers(start)
                await send({"type": "http.response.body", "body": b""})
                return
        await app(scope, receive, send_with_headers)

    return middleware


@functools.cache
def _route_patterns() -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
    from credence.openapi_doc import cached_openapi_dict

    patterns = []
    for path, operations in cached_openapi_dict()["paths"].items():
        regex = "^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(path)) + "$"
        methods = sorted({m.upper() for m in operations if m != "parameters"} | {"OPTIONS"})
        patterns.append((re.compile(regex), tuple(methods)))
    return patterns


def allowed_methods(path: str) -> tuple[str, ...] | None:
    """The methods the OpenAPI document lists for ``path``, or None for an unknown path."""
    for pattern, methods in _route_patterns():
        if pattern.match(path):
            return methods
    return None
