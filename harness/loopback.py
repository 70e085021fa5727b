"""A threaded HTTP server on 127.0.0.1 that the fakes of external services build on."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class LoopbackServer:
    """Serves ``handler`` on a free loopback port in a daemon thread, as a context manager.

    ``_released`` and ``_stopping`` let a fake hold requests and let them go at shutdown.
    """

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._released = threading.Event()
        self._stopping = threading.Event()
        self.holding = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        # A short poll interval: shutdown() waits for it, once per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def port(self) -> int:
        """The loopback port the server listens on."""
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The OpenAI-style base URL (``…/v1``) to configure the service with."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._released.set()
        self._server.shutdown()
        self._server.server_close()


class RecordingServer(LoopbackServer):
    """A loopback fake that keeps what it accepted, for tests to read or wait for.

    ``noun`` names the messages in a timeout's error ("ntfy messages").
    """

    noun = "messages"

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(handler)
        self.messages: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def received(self) -> list[dict[str, Any]]:
        """The accepted messages, oldest first."""
        with self._lock:
            return list(self.messages)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Block until ``count`` messages were accepted."""
        deadline = time.monotonic() + timeout
        while len(self.received()) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"expected {count} {self.noun}, got {len(self.received())}")
            time.sleep(0.01)
        return self.received()
