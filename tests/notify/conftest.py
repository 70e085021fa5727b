"""Fixtures for the push tests: a loopback fake push service, VAPID keys and an httpx client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from harness.fakes.push import LOOPBACK, FakePushService

from credence.db import make_store
from credence.db.engine import Database
from credence.notify.endpoints import EndpointPolicy, push_client
from credence.notify.vapid import VapidKeys, generate

SUBJECT = "mailto:reviewer@credence-push.org"


@pytest.fixture
def subject() -> str:
    """A VAPID subject at a real (non-reserved) domain."""
    return SUBJECT


@pytest.fixture
def vapid_keys() -> VapidKeys:
    """A freshly generated VAPID key pair."""
    return generate()


@pytest.fixture
async def store(tmp_path: Path, database_url: str | None) -> AsyncIterator[Database]:
    """An open store of the test's engine (SQLite file in ``tmp_path/data``, or PostgreSQL)."""
    (tmp_path / "data").mkdir(exist_ok=True)
    opened = make_store(database_url, tmp_path / "data" / "credence.sqlite3")
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def fake_push(vapid_keys: VapidKeys) -> Iterator[FakePushService]:
    """A running fake push service that only accepts pushes signed with ``vapid_keys``."""
    with FakePushService(expected_server_key=vapid_keys.public_key_b64url) as service:
        yield service


@pytest.fixture
async def http_client() -> AsyncIterator[httpx.AsyncClient]:
    """The pinned client the app uses for push delivery, admitting the loopback push service."""
    async with push_client(EndpointPolicy(allowed=LOOPBACK)) as client:
        yield client
