"""ASGI guards in front of every route: control characters in paths, and slow request bodies."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

import anyio
from litestar.exceptions import ClientException
from litestar.types import ASGIApp, Receive, ReceiveMessage, Scope, Send

log = logging.getLogger("credence.http")
_CONTROL = re.compile("[\x00-\x1f\x7f]")


def refuse_control_characters(app: ASGIApp) -> ASGIApp:
    """400 for a path with a control character (a NUL, a newline) before any route sees it."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _CONTROL.search(scope["path"]):
            log.warning("refused a request path with control characters: %s", scope["path"])
            raise ClientException("the request path contains control characters")
        await app(scope, receive, send)

    return middleware


def _expects_body(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return True
    return False


def body_deadline(seconds: float) -> Callable[[ASGIApp], ASGIApp]:
    """Middleware: the whole request body must arrive within ``seconds`` of its headers.

    A late body is a 408 and the connection is closed. A body still trickling in after an
    early answer (a 413, say) is cut off by the server's header deadline (credence.serving).
    """

    def factory(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or not _expects_body(scope):
                await app(scope, receive, send)
                return
            deadline = anyio.current_time() + seconds
            finished = False

            async def timed_receive() -> ReceiveMessage:
                nonlocal finished
                if finished:
                    return await receive()
                message = None
                with anyio.move_on_after(deadline - anyio.current_time()):
                    message = await receive()
                if message is None:
                    raise ClientException(
                        f"the request body did not arrive within {seconds:g} s",
                        status_code=408,
                        headers={"Connection": "close"},
                    )
                if message["type"] != "http.request" or not message.get("more_body", False):
                    finished = True
                return message

            await app(scope, timed_receive, send)

        return middleware

    return factory
