"""Response security headers: a strict CSP for the PWA and safe defaults for the API."""

from __future__ import annotations

import re

from litestar import Litestar
from litestar.datastructures import Headers, MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.exceptions import NotFoundException
from litestar.routes import HTTPRoute
from litestar.types import ASGIApp, HTTPResponseStartEvent, Message, Receive, Scope, Send

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


# What the PWA folder may serve: the app's own files, never scripts or notes kept beside them.
PWA_ASSET_SUFFIXES = frozenset(
    {".html", ".js", ".css", ".webmanifest", ".png", ".svg", ".ico", ".webp", ".woff2"}
)


def is_pwa_asset(path: str) -> bool:
    """True for the app shell ("/") and files with an asset suffix outside hidden folders."""
    if path in ("", "/"):
        return True
    segments = path.split("/")
    if any(segment.startswith(".") for segment in segments if segment):
        return False
    name = segments[-1]
    return "." in name and name[name.rindex(".") :].lower() in PWA_ASSET_SUFFIXES


def pwa_assets_only(app: ASGIApp) -> ASGIApp:
    """404 for anything in the PWA folder that is not one of the app's own assets."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not is_pwa_asset(scope["path"]):
            raise NotFoundException("not found")
        await app(scope, receive, send)

    return middleware


def _options_answer(scope: Scope) -> HTTPResponseStartEvent | None:
    allowed = allowed_methods(scope["litestar_app"], scope["path"])
    if allowed is None:
        return None
    return {
        "type": "http.response.start",
        "status": 204,
        "headers": [(b"allow", ", ".join(allowed).encode())],
    }


_RAW_HEADERS = tuple((name.lower().encode(), value.encode()) for name, value in HEADERS.items())
_NO_STORE = (b"cache-control", b"no-store")


async def add_security_headers(message: Message, scope: Scope) -> None:
    """before_send hook: every HTTP response, error responses included, gets the headers.

    Works on the raw header list (one pass to see which names are set), not through
    MutableScopeHeaders, whose every lookup decodes and lower-cases the whole list.
    """
    if scope["type"] != "http" or message["type"] != "http.response.start":
        return
    headers = list(message.get("headers") or ())
    present = {name.lower() for name, _ in headers}
    headers += [header for header in _RAW_HEADERS if header[0] not in present]
    if scope["path"].startswith("/api/"):
        if _NO_STORE[0] in present:
            headers = [header for header in headers if header[0].lower() != _NO_STORE[0]]
        headers.append(_NO_STORE)
    message["headers"] = headers


def options_middleware(app: ASGIApp) -> ASGIApp:
    """Answer OPTIONS on API paths from the running app's documented routes, before auth runs."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP and scope["method"] == "OPTIONS":
            start = _options_answer(scope)
            if start is not None and scope["path"].startswith("/api/"):
                await send(start)
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
        await app(scope, receive, send)

    return middleware


RoutePatterns = list[tuple[re.Pattern[str], tuple[str, ...]]]
# The route table never changes once the app is built, so the patterns are kept in its state.
_STATE_KEY = "documented_route_patterns"


def route_patterns(app: Litestar) -> RoutePatterns:
    """(path regex, methods) of each documented route in the app's route table, built once."""
    if _STATE_KEY in app.state:
        return app.state[_STATE_KEY]
    patterns = []
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        documented = {
            method
            for handler in route.route_handlers
            if handler.resolve_include_in_schema()
            for method in handler.http_methods
        }
        if documented and not route.path_format.startswith("/schema"):
            regex = "^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(route.path_format)) + "$"
            patterns.append((re.compile(regex), tuple(sorted(documented | {"OPTIONS"}))))
    app.state[_STATE_KEY] = patterns
    return patterns


def allowed_methods(app: Litestar, path: str) -> tuple[str, ...] | None:
    """The methods the app documents for ``path``, or None for an unknown path."""
    for pattern, methods in route_patterns(app):
        if pattern.match(path):
            return methods
    return None


def _etags(value: str) -> set[str]:
    return {tag.strip().removeprefix("W/") for tag in value.split(",") if tag.strip()}


def conditional_get_middleware(app: ASGIApp) -> ASGIApp:
    """Answer 304 Not Modified when a GET's If-None-Match names the response's current ETag.

    The PWA's files are served with ``Cache-Control: no-cache``, so a browser revalidates them
    on every load; this turns those revalidations into empty 304s instead of full downloads.
    """

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        wanted = None
        if scope["type"] == ScopeType.HTTP and scope["method"] in ("GET", "HEAD"):
            wanted = Headers.from_scope(scope).get("if-none-match")
        if not wanted:
            await app(scope, receive, send)
            return
        not_modified = False

        async def send_or_304(message: Message) -> None:
            nonlocal not_modified
            if message["type"] == "http.response.start" and message["status"] == 200:
                etag = MutableScopeHeaders.from_message(message).get("etag")
                if etag and ("*" in _etags(wanted) or etag.removeprefix("W/") in _etags(wanted)):
                    not_modified = True
                    keep = {b"etag", b"cache-control", b"last-modified", b"vary"}
                    headers = [(k, v) for k, v in message["headers"] if k.lower() in keep]
                    await send({"type": "http.response.start", "status": 304, "headers": headers})
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
            if not not_modified:
                await send(message)

        await app(scope, receive, send_or_304)

    return middleware
