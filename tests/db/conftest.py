"""PostgreSQL fixtures: one throwaway cluster per session, a fresh database per test."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.pg import PostgresServer, PostgresUnavailable, throwaway_postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """The session's throwaway cluster; fails under CI=true when it cannot start, else skips."""
    try:
        with throwaway_postgres() as server:
            yield server
    except PostgresUnavailable as exc:
        reason = f"PostgreSQL unavailable: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


@pytest.fixture
def pg_url(postgres: PostgresServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of an empty database of its own for one test, dropped after it."""
    with postgres.database(request.node.name) as url:
        yield url
