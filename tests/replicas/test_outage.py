"""One server's request path while PostgreSQL is away: 503 + Retry-After at once, then back."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import httpx
import pytest
from harness.pg import PostgresServer

from credence.settings import Settings
from tests.livesrv import running

pytestmark = pytest.mark.slow

# The store is told to wait this long for a connection, as a database that is slow to answer
# would make it. Only the away path (a short wait once a request found the database gone) can
# answer well inside it, so the test tells the two apart with a bound no loaded machine nears.
STORE_WAIT_S = 120.0


def _unknown_key() -> str:
    """Well-formed but unknown, and new each time: resolving it is a database read (no cache)."""
    return "crd_" + secrets.token_hex(21)[:43]


def _timed(client: httpx.Client, path: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = client.get(path, headers={"Authorization": f"Bearer {_unknown_key()}"})
    return response, time.monotonic() - started


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_requests_are_503_while_the_database_is_away_and_served_when_it_is_back(
    cluster: PostgresServer, tmp_path: Path, mode: str
) -> None:
    # Only the request path: the background components are exercised by the replica suite.
    with cluster.database(f"outage_{mode}") as url:
        settings = Settings(data_dir=tmp_path / "data", database_url=url, scheduler=False)
        with (
            running(settings, components=[]) as server,
            server.client(timeout=STORE_WAIT_S * 2) as client,
        ):
            server.services.store.timeout_s = STORE_WAIT_S
            assert _timed(client, "/readyz")[0].status_code == 200
            assert _timed(client, "/api/v1/me")[0].status_code == 401
            cluster.halt(mode)
            try:
                for path in ("/readyz", "/api/v1/me", "/readyz", "/api/v1/me"):
                    response, took = _timed(client, path)
                    assert response.status_code == 503, (path, response.text)
                    assert int(response.headers["retry-after"]) >= 1
                    assert took < STORE_WAIT_S / 4, (path, took)
                assert client.get("/healthz").status_code == 200
            finally:
                cluster.resume()
            # The same process, never restarted: the first requests after the restart succeed.
            assert _timed(client, "/readyz")[0].status_code == 200
            assert _timed(client, "/api/v1/me")[0].status_code == 401


def test_readyz_on_sqlite_touches_the_file_and_reports_the_schema(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", scheduler=False)
    with running(settings, components=[]) as server, server.client() as client:
        ready = client.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["schema_version"] == server.services.store.schema_version > 0
