"""PostgreSQL fixtures: one throwaway cluster per session, a fresh database per test."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import psycopg
import pytest

from credence.db import pg_migrate
from tests.pg import PostgresServer, PostgresUnavailable, refuse_or_skip, throwaway_postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """The session's throwaway cluster; fails under CI=true when it cannot start, else skips."""
    try:
        with throwaway_postgres() as server:
            yield server
    except PostgresUnavailable as exc:
        refuse_or_skip(f"PostgreSQL unavailable: {exc}")


@pytest.fixture(scope="session")
def pg_migrated_template(postgres: PostgresServer) -> str:
    """A database with every PostgreSQL migration applied, for tests to copy."""
    name = postgres.create_database("migrated_template")
    asyncio.run(_migrate(postgres.url(name)))
    return name


async def _migrate(url: str) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await pg_migrate.migrate(conn)


@pytest.fixture
def pg_migrated_url(
    postgres: PostgresServer, pg_migrated_template: str, request: pytest.FixtureRequest
) -> Iterator[str]:
    """The URL of a migrated database of its own for one test (a copy of the template)."""
    with postgres.database(request.node.name, template=pg_migrated_template) as url:
        yield url


@pytest.fixture
def pg_url(postgres: PostgresServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of an empty database of its own for one test, dropped after it."""
    with postgres.database(request.node.name) as url:
        yield url
