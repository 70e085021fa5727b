"""An outage heals without a tap: the real server process stops and starts again on its port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from harness import seed
from harness.browser import PHONE

from tests.browser.conftest import open_app
from tests.livesrv import cli_key

CREDENCE = Path(sys.executable).with_name("credence")


class ServerProcess:
    """`credence serve` as its own process on a fixed loopback port, so it can be restarted."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        """Start the server and wait until it answers."""
        env = {**os.environ, "CREDENCE_SCHEDULER": "0", "CREDENCE_LOG_LEVEL": "WARNING"}
        argv = [str(CREDENCE), "serve", "--data", str(self.data_dir), "--port", str(self.port)]
        self.process = subprocess.Popen(argv, env=env)
        deadline = time.monotonic() + 120  # a start on two loaded cores can take a minute
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert self.process.poll() is None, "credence serve exited"
            assert time.monotonic() < deadline, "credence serve did not start"
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop the process (SIGTERM, as a service manager does) and wait for it."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def client(self, key: str | None = None) -> httpx.Client:
        """An httpx client for this server, authenticated with ``key``."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


@pytest.fixture
def process(tmp_path: Path) -> Iterator[ServerProcess]:
    """A running `credence serve` on a fresh data dir."""
    server = ServerProcess(tmp_path / "data")
    try:
        server.start()  # inside the try: a server that never answered is stopped too
        yield server
    finally:
        server.stop()


def test_an_outage_heals_without_a_tap(chromium: Any, process: ServerProcess) -> None:
    admin = process.client(cli_key(process.data_dir, "admin", label="tests"))
    ids = seed.seed_demo(admin)
    app = open_app(chromium, process, admin, ids, viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        app.watch.expect_network("ERR_CONNECTION_REFUSED")
        app.pair()
        page = app.page
        page.wait_for_function("() => navigator.serviceWorker.controller !== null")
        decided = []
        process.stop()
        for _ in range(3):
            decided.append(app.top_id())
            page.keyboard.press("f")
            app.wait_top_not(decided[-1])
        pill = page.locator("#sync-status")
        page.wait_for_function(
            "() => document.querySelector('#sync-status').textContent === '3 waiting to sync'"
        )
        assert page.locator("#offline-badge").inner_text() == "Server unreachable"

        # A reload during the outage still shows the cards that wait (kept in IndexedDB).
        page.reload()
        error = page.locator("#review-error")
        error.wait_for()
        assert error.inner_text().startswith("Cannot reach the Credence server.")
        assert app.top_id() == ids["friday_deploy"]
        assert page.locator("#review-progress").inner_text() != "Loading…"
        error.get_by_role("button", name="Retry").click()  # still down: still says so
        page.wait_for_timeout(300)
        assert error.is_visible()

        process.start()
        # No tap, no online event, no visibility change: the backoff replays the queue.
        pill.wait_for(state="hidden", timeout=45_000)
        for belief_id in decided:
            assert seed.audit_actions(admin, belief_id) == ["proposed", "forgotten"]
        error.wait_for(state="hidden", timeout=45_000)
        assert page.locator("#offline-badge").is_hidden()
        assert page.evaluate("() => self.CredenceDB.outbox()") == []
        app.watch.check()
    finally:
        app.context.close()
        admin.close()


def test_a_decision_kept_during_an_outage_syncs_within_seconds_of_the_restart(
    chromium: Any, process: ServerProcess
) -> None:
    admin = process.client(cli_key(process.data_dir, "admin", label="tests"))
    ids = seed.seed_demo(admin)
    for name in ("mail_exports", "friday_deploy", "backoff"):  # Keep is not one tap on these
        seed.decide(admin, ids[name], "forget")
    app = open_app(chromium, process, admin, ids, viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        app.watch.expect_network("ERR_CONNECTION_REFUSED")
        app.pair()
        page = app.page
        page.wait_for_function("() => navigator.serviceWorker.controller !== null")
        first = app.top_id()
        page.keyboard.press("k")
        app.wait_top_not(first)
        assert app.wait_status(first, "active")
        process.stop()
        second = app.top_id()
        page.keyboard.press("k")
        app.wait_top_not(second)
        pill = page.locator("#sync-status")
        page.wait_for_function(
            "() => document.querySelector('#sync-status').textContent === '1 waiting to sync'"
        )
        page.wait_for_timeout(6000)  # long enough for the poll to back off to its cap
        process.start()
        restarted = time.monotonic()
        # No tap, no online event, no visibility change: the page's own poll replays it.
        pill.wait_for(state="hidden", timeout=10_000)
        assert time.monotonic() - restarted < 10
        assert seed.audit_actions(admin, second) == ["proposed", "kept"]
        page.wait_for_function(
            "() => document.querySelector('#toast')?.textContent.includes('Synced 1 decision')"
        )
        page.wait_for_timeout(1500)  # a second replay (timer, lock) must not apply it again
        assert seed.audit_actions(admin, second) == ["proposed", "kept"]
        assert page.evaluate("() => self.CredenceDB.outbox()") == []
        app.watch.check()
    finally:
        app.context.close()
        admin.close()
