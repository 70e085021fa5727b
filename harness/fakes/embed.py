"""A loopback OpenAI-compatible embeddings server: deterministic vectors, failures and holds."""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler

from harness.loopback import LoopbackServer

DIM = 64
_WORD = re.compile(r"\w+")


def vector(text: str) -> list[float]:
    """A bag-of-hashed-words unit vector: texts sharing words are close."""
    values = [0.0] * DIM
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        values[digest[0] % DIM] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


class FakeEmbeddings(LoopbackServer):
    """``POST /v1/embeddings`` on 127.0.0.1.

    ``down`` makes every request answer 503. ``hold_on(text)`` makes any request whose input
    contains ``text`` block until ``release()``; ``holding`` is set while one waits, and
    ``wait_holding(n)`` waits until ``n`` wait at once.
    """

    def __init__(self) -> None:
        self.down = False
        self.hold_text: str | None = None
        self.calls = 0
        self._held = 0
        self._held_changed = threading.Condition()
        super().__init__(self._handler())

    def wait_holding(self, count: int, timeout: float) -> bool:
        """Wait until ``count`` requests are held at once; False if ``timeout`` passes first."""
        with self._held_changed:
            return self._held_changed.wait_for(lambda: self._held >= count, timeout)

    def _count_held(self, change: int) -> None:
        with self._held_changed:
            self._held += change
            self._held_changed.notify_all()

    def hold_on(self, text: str) -> None:
        """Block requests that embed ``text`` until ``release()``."""
        self._released.clear()
        self.hold_text = text

    def release(self) -> None:
        """Let held requests continue (and stop holding)."""
        self.hold_text = None
        self._released.set()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fake.calls += 1
                if fake.down:
                    self._send(503, b'{"error": {"message": "down"}}')
                    return
                inputs = json.loads(raw)["input"]
                if fake.hold_text is not None and any(fake.hold_text in t for t in inputs):
                    fake.holding.set()
                    fake._count_held(+1)
                    try:
                        while not fake._released.wait(0.05):
                            if fake._stopping.is_set():
                                return
                    finally:
                        fake._count_held(-1)
                data = [
                    {"object": "embedding", "index": i, "embedding": vector(text)}
                    for i, text in enumerate(inputs)
                ]
                self._send(200, json.dumps({"object": "list", "data": data}).encode())

            def _send(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    return

        return Handler
