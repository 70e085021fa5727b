"""A loopback HTTP endpoint recording what apprise's json:// plugin POSTs: a channel's far end."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

from harness.loopback import RecordingServer


class Webhook(RecordingServer):
    """Answers every POST with ``status`` and records the JSON bodies it was sent."""

    noun = "channel messages"

    def __init__(self) -> None:
        self.status = 200
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
