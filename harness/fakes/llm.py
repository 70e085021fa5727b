"""A loopback server speaking the OpenAI chat-completions protocol, answering from a script."""

from __future__ import annotations

import collections
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from harness.loopback import LoopbackServer


@dataclass
class Reply:
    """One scripted reply: a completion, an HTTP status, a delay or a hold."""

    kind: str  # "answer", "status", "raw", "hang", "hold"
    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    seconds: float = 0.0
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None


@dataclass
class Seen:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeLLM(LoopbackServer):
    """``POST /v1/chat/completions`` on 127.0.0.1; each request consumes the next reply.

    When the script runs out, ``default`` answers (an empty array unless changed). ``hold()``
    makes the next request block until ``release()``: tests use it to kill a server while its
    job waits on the model.
    """

    def __init__(self, default: str = "[]") -> None:
        self.default = default
        self.script: collections.deque[Reply] = collections.deque()
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        super().__init__(self._handler())

    # --- scripting ---------------------------------------------------------------------------

    def answer(self, content: str, *, finish_reason: str = "stop", usage=None) -> FakeLLM:
        """Reply 200 with a chat completion whose message content is ``content``."""
        self.script.append(Reply("answer", content, finish_reason=finish_reason, usage=usage))
        return self

    def status(self, status: int, *, headers: dict[str, str] | None = None) -> FakeLLM:
        """Reply with an error status and a JSON error body."""
        body = json.dumps({"error": {"message": f"scripted {status}"}}).encode()
        self.script.append(Reply("status", status=status, headers=headers or {}, body=body))
        return self

    def raw(self, status: int, body: bytes, content_type: str = "text/plain") -> FakeLLM:
        """Reply with an arbitrary body."""
        self.script.append(
            Reply("raw", status=status, body=body, headers={"Content-Type": content_type})
        )
        return self

    def hang(self, seconds: float) -> FakeLLM:
        """Say nothing for ``seconds`` (longer than the client's timeout), then answer []."""
        self.script.append(Reply("hang", seconds=seconds))
        return self

    def hold(self, content: str = "[]") -> FakeLLM:
        """Block the next request until ``release()``, then answer it with ``content``.

        The held request answers its own content so that a request whose client died while
        it waited never consumes the replies scripted for the next one.
        """
        self._released.clear()
        self.script.append(Reply("hold", content))
        return self

    def release(self) -> None:
        """Let a held request continue."""
        self._released.set()

    @property
    def calls(self) -> int:
        """How many chat-completion requests arrived."""
        with self._lock:
            return len(self.requests)

    # --- serving -----------------------------------------------------------------------------

    def _next(self) -> Reply:
        with self._lock:
            return self.script.popleft() if self.script else Reply("answer", self.default)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with fake._lock:
                    fake.requests.append(Seen(self.path, dict(self.headers.items()), body))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, b'{"error": {"message": "no such route"}}', {})
                    return
                reply = fake._next()
                if reply.kind == "hold":
                    fake.holding.set()
                    while not fake._released.wait(0.05):
                        if fake._stopping.is_set():
                            return
                    fake.holding.clear()
                    reply = Reply("answer", reply.content)
                if reply.kind == "hang":
                    deadline = time.monotonic() + reply.seconds
                    while time.monotonic() < deadline and not fake._stopping.is_set():
                        time.sleep(0.02)
                    reply = Reply("answer", "[]")
                if reply.kind == "answer":
                    completion = {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "fake"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.content},
                                "finish_reason": reply.finish_reason,
                            }
                        ],
                        "usage": reply.usage
                        or {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                    }
                    payload = json.dumps(completion).encode()
                    self._send(200, payload, {"Content-Type": "application/json"})
                    return
                headers = {"Content-Type": "application/json", **reply.headers}
                self._send(reply.status, reply.body, headers)

            def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    return

        return Handler
