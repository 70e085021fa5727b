"""A loopback ntfy server: takes publishes (JSON at ``/``, headers at ``/<topic>``) and taps
their ``http`` actions the way the ntfy app does."""

from __future__ import annotations

import json
from collections import deque
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx

from harness.loopback import RecordingServer

_HEADER_FIELDS = {
    "x-title": "title",
    "x-tags": "tags",
    "x-priority": "priority",
    "x-click": "click",
    "x-actions": "actions",
}


def _from_headers(topic: str, headers: Any, body: bytes) -> dict[str, Any]:
    """A header-form publish (``POST /<topic>``) as the JSON form ntfy stores."""
    message: dict[str, Any] = {"topic": topic, "message": body.decode("utf-8")}
    for header, name in _HEADER_FIELDS.items():
        value = headers.get(header)
        if value is None:
            continue
        if name == "tags":
            message[name] = [tag.strip() for tag in value.split(",") if tag.strip()]
        elif name == "priority":
            message[name] = int(value)
        elif name == "actions":
            message[name] = json.loads(value)  # the JSON form of X-Actions
        else:
            message[name] = value
    return message


class FakeNtfy(RecordingServer):
    """Records accepted messages with the Authorization they came with; ``replies`` queues
    (status, Retry-After) answers given before accepting (a 429 or 5xx to test retries)."""

    noun = "ntfy messages"

    def __init__(self, token: str | None = None) -> None:
        self.token = token
        self.refused: list[int] = []
        self.replies: deque[tuple[int, str | None]] = deque()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status, retry_after = fake._answer(self.headers.get("Authorization"))
                if status == 200:
                    topic = self.path.strip("/")
                    form = _from_headers(topic, self.headers, raw) if topic else None
                    message = form if form is not None else json.loads(raw)
                    with fake._lock:
                        fake.messages.append(message)
                self.send_response(status)
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                body = b'{"id":"fake"}' if status == 200 else b'{"error":"no"}'
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        super().__init__(Handler)

    def _answer(self, authorization: str | None) -> tuple[int, str | None]:
        with self._lock:
            if self.token is not None and authorization != f"Bearer {self.token}":
                self.refused.append(401)
                return 401, None
            if self.replies:
                status, retry_after = self.replies.popleft()
                self.refused.append(status)
                return status, retry_after
        return 200, None

    @property
    def root(self) -> str:
        """The server root (where JSON publishes go)."""
        return f"http://127.0.0.1:{self.port}"

    def topic_url(self, topic: str) -> str:
        """The topic URL an admin configures."""
        return f"{self.root}/{topic}"


def tap(message: dict[str, Any], label: str) -> httpx.Response:
    """Tap a message's ``http`` action as the ntfy app does: its method, URL, headers, body."""
    [action] = [a for a in message.get("actions", []) if a["label"] == label]
    if action["action"] != "http":
        raise ValueError(f"{label!r} is a {action['action']} action, not http")
    return httpx.request(
        action.get("method", "POST"),
        action["url"],
        headers=action.get("headers", {}),
        content=action.get("body", "").encode("utf-8"),
        timeout=10,
    )
