"""A loopback HTTP endpoint recording what apprise's json:// plugin POSTs: a channel's far end."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from harness.loopback import LoopbackServer


class Webhook(LoopbackServer):
    """Answers every POST with ``status`` and records the JSON bodies it was sent."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.status = 200
        self._lock = threading.Lock()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                with hook._lock:
                    status = hook.status
                    if 200 <= status < 300:
                        hook.messages.append(json.loads(raw))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        super().__init__(Handler)

    @property
    def url(self) -> str:
        """The apprise URL that posts JSON here."""
        return f"json://127.0.0.1:{self.port}/hook"

    def received(self) -> list[dict[str, Any]]:
        """The accepted messages, oldest first."""
        with self._lock:
            return list(self.messages)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Block until ``count`` messages were accepted."""
        deadline = time.monotonic() + timeout
        while len(self.received()) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"expected {count} channel messages, got {len(self.received())}")
            time.sleep(0.01)
        return self.received()
