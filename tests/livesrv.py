"""A real Credence server on a loopback port, run by uvicorn in a background thread."""

from __future__ import annotations

import asyncio
import contextlib
import io
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from credence.app import create_app
from credence.cli import main as credence_main
from credence.serving import uvicorn_config
from credence.settings import Settings
from credence.tls import tls_context


def cli_key(where: Settings | Path, scope: str, *agents: str, label: str = "") -> str:
    """Create a key with `credence keys create` (in-process) and return the last stdout line.

    ``where`` is a server's settings (its data dir and database URL) or a bare data dir.
    """
    argv = ["keys", "create", "--scope", scope, "--label", label, *store_flags(where)]
    for agent in agents:
        argv += ["--agent", agent]
    out = io.StringIO()
    codes: list[int] = []

    def run() -> None:  # a thread of its own, so async tests can call it too
        with contextlib.redirect_stdout(out):
            codes.append(credence_main(argv))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert codes == [0], out.getvalue()
    return out.getvalue().strip().splitlines()[-1]


def store_flags(where: Settings | Path) -> list[str]:
    """The CLI flags naming the store of ``where``: ``--data`` and, on PostgreSQL, its URL."""
    if isinstance(where, Path):
        return ["--data", str(where)]
    flags = ["--data", str(where.data_dir)]
    return [*flags, "--database-url", where.database_url] if where.database_url else flags


class _PromptServer(uvicorn.Server):
    """uvicorn's server, but a stop request is acted on at once, not at the next 0.1 s tick.

    Every test that serves pays the stop, so the tick's average 50 ms adds up over a run.
    """

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    async def main_loop(self) -> None:
        """Tick as uvicorn does, waking early when ``stop_now`` is called."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), 0.1)

    def stop_now(self) -> None:
        """Ask the server to exit and wake its main loop (callable from any thread)."""
        self.should_exit = True
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                self._loop.call_soon_threadsafe(self._stop.set)


class LiveServer:
    """Serves ``create_app(settings)`` on 127.0.0.1 until stopped."""

    def __init__(self, settings: Settings, **app_kwargs: Any) -> None:
        self.settings = settings
        self.app = create_app(settings, **app_kwargs)
        # The configuration `credence serve` runs (trusted proxies, header deadline, safe logs).
        config = uvicorn_config(
            self.app, settings, host="127.0.0.1", port=0, log_level="warning", ws="none"
        )
        self._server = _PromptServer(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self.url = ""

    def start(self) -> LiveServer:
        """Start serving and wait until the port is open."""
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        """Ask uvicorn to shut down (running the lifespan's cleanup) and wait."""
        self._server.stop_now()
        self._thread.join(timeout=30)

    @property
    def services(self) -> Any:
        """The running app's shared services (for assertions on server state)."""
        return self.app.state.services

    def run(self, coro: Any) -> Any:
        """Run a coroutine on the server's own event loop (e.g. a store read) and return it."""
        loop = self._server_loop()
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=30)

    def _server_loop(self) -> asyncio.AbstractEventLoop:
        # The listening socket's loop is the app's on either engine (PostgreSQL has no executor).
        return self._server.servers[0].get_loop()

    def client(self, key: str | None = None, **kwargs: Any) -> httpx.Client:
        """A sync httpx client for this server, authenticated with ``key``."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        kwargs.setdefault("timeout", 30)
        return httpx.Client(base_url=self.url, headers=headers, verify=tls_context(), **kwargs)

    def async_client(self, key: str | None = None, **kwargs: Any) -> httpx.AsyncClient:
        """An async httpx client for this server, authenticated with ``key``."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=30, verify=tls_context(), **kwargs
        )


@contextlib.contextmanager
def running(settings: Settings, **app_kwargs: Any) -> Iterator[LiveServer]:
    """A started LiveServer, stopped on exit."""
    server = LiveServer(settings, **app_kwargs).start()
    try:
        yield server
    finally:
        server.stop()
