"""Shared fixtures: a real server over real HTTP on a real SQLite file, and keys made by the CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from credence.settings import Settings
from tests.livesrv import LiveServer, cli_key, running
from tests.notify.fakepush import FakePushService
from tests.notify.pushserver import ALLOWED


@pytest.fixture
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings for a fresh data dir; background schedulers off unless a test turns them on.

    Tests marked ``loopback_push`` also admit the loopback fake push service (plain http on
    127.0.0.1), which the push endpoint policy refuses otherwise.
    """
    allowed = ALLOWED if request.node.get_closest_marker("loopback_push") else ()
    return Settings(data_dir=tmp_path / "data", scheduler=False, push_allowed_hosts=allowed)


@pytest.fixture
def fake_push() -> Iterator[FakePushService]:
    """A running loopback push service that decrypts what it receives."""
    with FakePushService() as service:
        yield service


@pytest.fixture
def server(settings: Settings) -> Iterator[LiveServer]:
    """A running server on 127.0.0.1 with an empty store."""
    with running(settings) as live:
        yield live


@pytest.fixture
def admin_key(server: LiveServer) -> str:
    """An admin key made by `credence keys create`."""
    return cli_key(server.settings.data_dir, "admin", label="tests")


@pytest.fixture
def admin(server: LiveServer, admin_key: str) -> Iterator[httpx.Client]:
    """An httpx client authenticated as admin."""
    with server.client(admin_key) as client:
        yield client
