"""The PostgreSQL store: a psycopg pool behind the same read/write interface as SQLite."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Iterable
from typing import Any, TypeVar

import psycopg
from psycopg import errors
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from credence.db import pg_migrate
from credence.db.engine import Dialect, Params, StoreError, StoreUnavailable, to_pyformat
from credence.db.secrets import ensure_secrets
from credence.db.store import Work
from credence.settings import redact_url

log = logging.getLogger(__name__)

T = TypeVar("T")
# Deadlocks and serialisation failures are the database asking us to try again; a unit of work
# holds no state outside its transaction, so running it again is safe.
RETRYABLE = (errors.DeadlockDetected, errors.SerializationFailure)
ATTEMPTS = 4
CONNECT_TIMEOUT_S = 5.0


@functools.lru_cache(maxsize=1024)
def _row_class(names: tuple[str, ...]) -> type[tuple[Any, ...]]:
    index = {name: position for position, name in enumerate(names)}

    class PgRow(tuple[Any, ...]):
        """A result row readable by position and by column name, like ``sqlite3.Row``."""

        __slots__ = ()

        def __getitem__(self, key: Any) -> Any:
            if isinstance(key, str):
                return tuple.__getitem__(self, index[key])
            return tuple.__getitem__(self, key)

        def keys(self) -> list[str]:
            return list(names)

    return PgRow


def row_factory(cursor: Any) -> Any:
    """psycopg row factory producing rows addressable by position or column name."""
    description = cursor.description
    if description is None:
        return tuple
    return _row_class(tuple(column.name for column in description))


class PostgresConnection:
    """A pooled psycopg connection seen through the engine-neutral ``Connection`` interface."""

    dialect: Dialect = "postgresql"

    def __init__(self, raw: psycopg.AsyncConnection[Any]) -> None:
        self.raw = raw

    async def rows(self, sql: str, params: Params = ()) -> list[Any]:
        """All rows of one statement."""
        async with self.raw.cursor(row_factory=row_factory) as cursor:
            await cursor.execute(to_pyformat(sql), params)
            return await cursor.fetchall() if cursor.description else []

    async def one(self, sql: str, params: Params = ()) -> Any:
        """The first row of one statement, or None."""
        async with self.raw.cursor(row_factory=row_factory) as cursor:
            await cursor.execute(to_pyformat(sql), params)
            return await cursor.fetchone() if cursor.description else None

    async def run(self, sql: str, params: Params = ()) -> int:
        """Execute one statement; the number of rows it changed."""
        async with self.raw.cursor() as cursor:
            await cursor.execute(to_pyformat(sql), params)
            return cursor.rowcount

    async def run_many(self, sql: str, params: Iterable[Params]) -> None:
        """Execute one statement once per parameter set, pipelined."""
        async with self.raw.cursor() as cursor:
            await cursor.executemany(to_pyformat(sql), list(params))


class PostgresStore:
    """A connection pool on one PostgreSQL database, shared by every replica of Credence.

    Reads run in autocommit; each write runs in its own READ COMMITTED transaction on a pooled
    connection and is retried on deadlock or serialisation failure. A database that cannot be
    reached raises ``StoreUnavailable`` (the API answers 503) instead of hanging.
    """

    dialect: Dialect = "postgresql"

    def __init__(
        self, url: str, *, pool_size: int = 10, timeout_s: float = CONNECT_TIMEOUT_S
    ) -> None:
        self.url = url
        self.pool_size = pool_size
        self.timeout_s = timeout_s
        self.schema_version = 0
        self.commits = 0
        self._secrets: dict[str, bytes] = {}
        self._pool: AsyncConnectionPool[Any] | None = None

    async def open(self) -> None:
        """Connect, apply pending migrations under the advisory lock and load the secrets."""
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            self.url,
            min_size=1,
            max_size=self.pool_size,
            kwargs={"autocommit": True, "connect_timeout": max(1, int(self.timeout_s))},
            timeout=self.timeout_s,
            reconnect_timeout=0,  # keep trying while the database is away, however long
            open=False,
            name="credence",
        )
        try:
            await pool.open(wait=True, timeout=self.timeout_s)
        except (PoolTimeout, psycopg.Error) as exc:
            await pool.close()
            raise StoreError(f"cannot connect to {redact_url(self.url)}: {_reason(exc)}") from None
        try:
            async with pool.connection() as conn:
                await pg_migrate.migrate(conn)
                found = await pg_migrate.status(conn)
            if found.unknown:
                raise StoreError(
                    f"the database has migrations this Credence does not know: {found.unknown};"
                    " upgrade Credence"
                )
            self.schema_version = max(found.applied, default=0)
            self._pool = pool
            self._secrets = await self.write(ensure_secrets)
        except BaseException:
            self._pool = None
            await pool.close()
            raise

    async def close(self) -> None:
        """Close every pooled connection."""
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    def secret(self, name: str) -> bytes:
        """A per-installation secret, made once in the database and shared by every replica."""
        try:
            return self._secrets[name]
        except KeyError:
            raise StoreError(f"unknown installation secret {name!r}") from None

    async def read(self, work: Work[T]) -> T:
        """Run ``work(conn)`` in autocommit on a pooled connection."""
        return await self._use(work, transaction=False)

    async def write(self, work: Work[T]) -> T:
        """Run ``work(conn)`` in one committed transaction; its exception rolls it back."""
        return await self._use(work, transaction=True)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Any]:
        """Convenience read: all rows of one query."""
        return await self.read(lambda conn: conn.rows(sql, params))

    async def fetchone(self, sql: str, params: Params = ()) -> Any:
        """Convenience read: the first row of one query, or None."""
        return await self.read(lambda conn: conn.one(sql, params))

    async def _use(self, work: Work[T], *, transaction: bool) -> T:
        if self._pool is None:
            raise StoreError("store is not open")
        for attempt in range(1, ATTEMPTS + 1):
            try:
                async with self._pool.connection() as raw:
                    conn = PostgresConnection(raw)
                    if not transaction:
                        return await work(conn)
                    async with raw.transaction():
                        result = await work(conn)
                    self.commits += 1
                    return result
            except RETRYABLE:
                if attempt == ATTEMPTS:
                    raise
                await asyncio.sleep(0.01 * attempt)
            except PoolTimeout as exc:
                raise StoreUnavailable(f"database unavailable: {_reason(exc)}") from exc
            except psycopg.OperationalError as exc:
                raise StoreUnavailable(f"database unavailable: {_reason(exc)}") from exc
        raise AssertionError("unreachable")


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
