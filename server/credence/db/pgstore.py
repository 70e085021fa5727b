"""The PostgreSQL store: a psycopg pool behind the same read/write interface as SQLite."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from credence.db import pg_migrate
from credence.db.engine import (
    Dialect,
    Params,
    Query,
    SharedStoreParts,
    Statement,
    StoreError,
    StoreUnavailable,
    to_pyformat,
)
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
# Once the database is known to be away a request waits only this long for a connection, so
# it gets its 503 at once instead of after CONNECT_TIMEOUT_S; the first success restores it.
AWAY_WAIT_S = 0.5
# Server-side bounds, so no request hangs on a runaway statement and a replica that vanishes
# inside a transaction does not hold its row locks for long. A URL's own `options` win.
SESSION_OPTIONS = "-c statement_timeout=30000 -c idle_in_transaction_session_timeout=60000"
# libpq settings that notice a database host gone without closing its sockets (a partition).
LIBPQ_DEFAULTS = {
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "3",
    "keepalives_count": "3",
    "tcp_user_timeout": "20000",
}


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

    async def batch(self, statements: Sequence[Statement]) -> None:
        """Execute each statement once per parameter set, in order, in one pipeline: one
        round trip for the whole batch."""
        async with self.raw.pipeline(), self.raw.cursor() as cursor:
            for sql, params in statements:
                await cursor.executemany(to_pyformat(sql), list(params))

    async def rows_together(self, queries: Sequence[Query]) -> list[list[Any]]:
        """Each query's rows, the queries sent in one pipeline: one round trip. Each runs on
        its own snapshot, taken as it starts, so a query after a lock sees what committed
        while the lock was awaited."""
        cursors = [self.raw.cursor(row_factory=row_factory) for _ in queries]
        try:
            async with self.raw.pipeline():
                for cursor, (sql, params) in zip(cursors, queries, strict=True):
                    await cursor.execute(to_pyformat(sql), params)
            return [await c.fetchall() if c.description else [] for c in cursors]
        finally:
            for cursor in cursors:
                await cursor.close()


class PostgresStore(SharedStoreParts):
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
        self.away = False  # the last unit of work found the database unreachable
        self._away_since: float | None = None  # when "unreachable" was logged, for "back after"

    async def open(self) -> None:
        """Connect, apply pending migrations under the advisory lock and load the secrets."""
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            self.url,
            min_size=1,
            max_size=self.pool_size,
            kwargs=connection_kwargs(self.url, self.timeout_s),
            timeout=self.timeout_s,
            # A failed (re)connection is retried once at once and then given up; the next
            # request waiting for a connection starts a fresh attempt. So connecting follows
            # demand with no backoff to sit out when the database comes back.
            reconnect_timeout=0,
            open=False,
            name="credence",
        )
        try:
            await pool.open(wait=False)
            await _first_connection(pool, self.timeout_s)
        except (PoolTimeout, psycopg.Error) as exc:
            await pool.close()
            reason = await _connect_error(self.url, self.timeout_s) or _reason(exc)
            raise StoreError(f"cannot connect to {redact_url(self.url)}: {reason}") from None
        try:
            async with pool.connection() as conn:
                # A migration may rewrite a big table: no statement timeout for it.
                await conn.execute("SET statement_timeout = 0")
                await pg_migrate.migrate(conn)
                found = await pg_migrate.status(conn)
                await conn.execute("RESET statement_timeout")
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

    async def read(self, work: Work[T], *, inline: bool = False) -> T:
        """Run ``work(conn)`` in autocommit on a pooled connection (``inline`` as for write)."""
        return await self._use(work, transaction=False)

    async def write(self, work: Work[T], *, inline: bool = False) -> T:
        """Run ``work(conn)`` in one committed transaction; its exception rolls it back.

        ``inline`` changes nothing here: every statement is a round trip to the server anyway.
        """
        return await self._use(work, transaction=True)

    def pool_stats(self) -> dict[str, int]:
        """This process's connections: in use, idle, the most allowed, and requests waiting."""
        if self._pool is None:
            return {"max": self.pool_size}
        stats = self._pool.get_stats()
        size, idle = stats.get("pool_size", 0), stats.get("pool_available", 0)
        return {
            "in_use": size - idle,
            "idle": idle,
            "max": self.pool_size,
            "waiting": stats.get("requests_waiting", 0),
        }

    @property
    def available(self) -> bool:
        """False while the database is known to be away (a request failed to reach it)."""
        return self._pool is not None and not self.away

    async def _use(self, work: Work[T], *, transaction: bool) -> T:
        pool = self._pool
        if pool is None:
            raise StoreError("store is not open")
        deadline = time.monotonic() + self.timeout_s
        attempt = 0
        while True:
            attempt += 1
            wait = min(AWAY_WAIT_S if self.away else self.timeout_s, deadline - time.monotonic())
            committing = False
            raw: psycopg.AsyncConnection[Any] | None = None
            try:
                async with pool.connection(timeout=max(wait, 0.001)) as raw:
                    conn = PostgresConnection(raw)
                    if not transaction:
                        result = await work(conn)
                    else:
                        async with raw.transaction():
                            result = await work(conn)
                            committing = True
                        self.commits += 1
                self.away = False
                if self._away_since is not None:
                    log.warning("database back after %.1f s", time.monotonic() - self._away_since)
                    self._away_since = None
                return result
            except RETRYABLE:
                if attempt >= ATTEMPTS:
                    raise
                await asyncio.sleep(0.01 * attempt)
            except PoolTimeout as exc:
                self._went_away(exc)
                raise StoreUnavailable(f"database unavailable: {_reason(exc)}") from exc
            except psycopg.OperationalError as exc:
                broken = raw is not None and (raw.broken or raw.closed)
                if broken and not committing and time.monotonic() < deadline:
                    # The database dropped this connection (a restart, a failover): others in
                    # the pool may be dead too and are discarded one by one as they fail. The
                    # unit never committed, so it runs again on the next connection.
                    self.away = True
                    continue
                if broken:
                    self._went_away(exc)
                # A lost COMMIT has an unknown outcome: never retried here; a client's
                # Idempotency-Key retry replays it or runs it once.
                raise StoreUnavailable(f"database unavailable: {_reason(exc)}") from exc

    def _went_away(self, exc: BaseException) -> None:
        # One line per state change: this one, then "database back after …" on the next success.
        if self._away_since is None:
            log.warning("database unreachable: %s; answering 503 until it is back", _reason(exc))
            self._away_since = time.monotonic()
        self.away = True


async def _first_connection(pool: AsyncConnectionPool[Any], timeout_s: float) -> None:
    """Wait up to ``timeout_s`` for a first connection, asking again while none comes.

    Each request for a connection starts a fresh attempt, so a database that is still
    starting (replicas and database brought up together) is waited for, not given up on.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        wait = min(AWAY_WAIT_S, deadline - time.monotonic())
        try:
            conn = await pool.getconn(timeout=max(wait, 0.001))
        except PoolTimeout:
            if time.monotonic() >= deadline:
                raise
            continue
        await pool.putconn(conn)
        return


async def _connect_error(url: str, timeout_s: float) -> str | None:
    """Why connecting fails, in libpq's words (the pool only says it timed out)."""
    try:
        conn = await psycopg.AsyncConnection.connect(url, **connection_kwargs(url, timeout_s))
    except psycopg.Error as exc:
        return _reason(exc)
    await conn.close()
    return None


def connection_kwargs(url: str, timeout_s: float) -> dict[str, Any]:
    """libpq settings for pooled connections: the URL's own values win over these defaults."""
    given = conninfo_to_dict(url)
    kwargs: dict[str, Any] = {"autocommit": True}
    if "connect_timeout" not in given:
        kwargs["connect_timeout"] = max(1, int(timeout_s))
    kwargs.update({name: value for name, value in LIBPQ_DEFAULTS.items() if name not in given})
    kwargs["options"] = f"{SESSION_OPTIONS} {given.get('options', '')}".strip()
    return kwargs


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
