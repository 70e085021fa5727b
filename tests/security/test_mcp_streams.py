"""GET /mcp holds no stream: each answers 405 at once, counts against the key's limit, and a
burst of them leaves the server's sockets and /healthz as they were."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from credence.settings import Settings
from tests.helpers import make_agent
from tests.livesrv import LiveServer, cli_key, running

BURST = 200  # each endless stream cost a file descriptor; 1,000 starved the server


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    settings = Settings(data_dir=tmp_path / "data", scheduler=False, rate_limit_per_minute=1000)
    with running(settings) as server:
        yield server


def _open_fds() -> int:
    """File descriptors open in this process (the live server runs in a thread of it)."""
    return len(os.listdir("/proc/self/fd"))


def _settled_fds(below: int) -> int:
    """Open descriptors once the server has closed the burst's connections (at most 5 s)."""
    deadline = time.monotonic() + 5
    while (count := _open_fds()) >= below and time.monotonic() < deadline:
        time.sleep(0.05)
    return count


async def _get_streams(url: str, key: str) -> list[int]:
    """Open BURST GET /mcp requests at once; each must be answered within a few seconds.

    Only the read is held to 5 s (an endless stream would never finish its body); opening 200
    connections at once on two loaded cores, with the server in this process, can take longer.
    """
    limits = httpx.Limits(max_connections=BURST)
    headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits) as client:

        async def one() -> int:
            response = await client.get("/mcp", timeout=httpx.Timeout(5.0, connect=30.0, pool=30.0))
            return response.status_code

        return await asyncio.gather(*(one() for _ in range(BURST)))


def test_a_burst_of_gets_holds_no_streams_and_healthz_answers(live: LiveServer) -> None:
    with live.client(cli_key(live.settings, "admin")) as admin:
        make_agent(admin, "coder")
    key = cli_key(live.settings, "agent", "coder")
    before = _open_fds()
    statuses = asyncio.run(_get_streams(live.url, key))
    assert set(statuses) == {405}
    assert _settled_fds(below=before + 20) < before + 20  # the burst's sockets are all closed
    with live.client() as anonymous:
        assert anonymous.get("/healthz").status_code == 200
    with live.client(key) as client:
        refused = client.get("/mcp")
    assert refused.headers["allow"] == "POST"
    assert "POST" in refused.json()["detail"]


def test_gets_count_against_the_keys_limit(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", scheduler=False, rate_limit_per_minute=5)
    with running(settings) as live:
        with live.client(cli_key(settings, "admin")) as admin:
            make_agent(admin, "coder")
        with live.client(cli_key(settings, "agent", "coder")) as client:
            statuses = [client.get("/mcp", timeout=5).status_code for _ in range(6)]
    assert statuses == [405] * 5 + [429]
