"""The connection interface every store module writes its SQL against, for SQLite and PostgreSQL."""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal, Protocol, TypeVar

# The store's errors live with the domain's (the edge handles them without importing db).
from credence.errors import StoreError as StoreError
from credence.errors import StoreUnavailable as StoreUnavailable

Dialect = Literal["sqlite", "postgresql"]
Params = Sequence[Any] | dict[str, Any]
# One statement of a batch and its parameter sets (it runs once per set).
Statement = tuple[str, Sequence[Params]]
# One query and its parameters, for ``rows_together``.
Query = tuple[str, Params]
T = TypeVar("T")


class Row(Protocol):
    """One result row: by position (``row[0]``) or by column name (``row["id"]``)."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def keys(self) -> list[str]: ...


class Connection(Protocol):
    """What a unit of work sees: one connection, inside a transaction when it writes.

    Store modules write portable SQL with ``?`` (or ``:name``) placeholders; a statement that
    differs per engine branches on ``dialect``.
    """

    dialect: Dialect

    async def rows(self, sql: str, params: Params = ()) -> list[Row]:
        """All rows of one statement."""
        ...

    async def one(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of one statement, or None."""
        ...

    async def run(self, sql: str, params: Params = ()) -> int:
        """Execute one statement; the number of rows it changed."""
        ...

    async def run_many(self, sql: str, params: Iterable[Params]) -> None:
        """Execute one statement once per parameter set."""
        ...

    async def batch(self, statements: Sequence[Statement]) -> None:
        """Execute each statement once per parameter set, in order, in one trip to the
        database (SQLite: one call on its thread; PostgreSQL: one pipeline)."""
        ...

    async def rows_together(self, queries: Sequence[Query]) -> list[list[Row]]:
        """Each query's rows, the queries run in order in one trip to the database (SQLite:
        one call; PostgreSQL: one pipeline, each query on its own snapshot as it starts)."""
        ...


async def one_row(conn: Connection, sql: str, params: Params = ()) -> Row:
    """The row a statement always returns (an aggregate, ``RETURNING``, a row just written)."""
    row = await conn.one(sql, params)
    if row is None:
        raise StoreError(f"no row where one is certain: {sql[:80]}")
    return row


def for_update(conn: Connection) -> str:
    """`` FOR UPDATE`` on PostgreSQL; SQLite's one writer already holds the whole database."""
    return " FOR UPDATE" if conn.dialect == "postgresql" else ""


def skip_locked(conn: Connection) -> str:
    """`` FOR UPDATE SKIP LOCKED`` on PostgreSQL, so replicas claim different rows; else ``""``."""
    return " FOR UPDATE SKIP LOCKED" if conn.dialect == "postgresql" else ""


def placeholders(count: int) -> str:
    """``?, ?, ?`` for an ``IN (…)`` list of ``count`` values (at least one)."""
    return ", ".join("?" * max(count, 1))


# A string literal, a quoted identifier, a ::cast, a ?, a :name or a bare %.
_TOKEN = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|::|\?|:([A-Za-z_]\w*)|%""")


@functools.lru_cache(maxsize=2048)
def to_pyformat(sql: str) -> str:
    """Rewrite ``?`` and ``:name`` placeholders as psycopg's ``%s`` and ``%(name)s``.

    Quoted text and ``::type`` casts are left alone, and a literal ``%`` is doubled, so one
    statement serves both engines.
    """

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "?":
            return "%s"
        if token == "%":
            return "%%"
        if match.group(1):
            return f"%({match.group(1)})s"
        # psycopg reads % signs inside quoted text too.
        return token.replace("%", "%%")

    return _TOKEN.sub(replace, sql)


class Database(Protocol):
    """A store of either engine: units of work run through ``read`` and ``write``."""

    dialect: Dialect
    schema_version: int
    commits: int

    async def open(self) -> None:
        """Connect, apply pending migrations and load the installation secrets."""
        ...

    async def close(self) -> None:
        """Finish queued work and release every connection."""
        ...

    def secret(self, name: str) -> bytes:
        """A per-installation secret kept in the database."""
        ...

    async def read(self, work: Callable[[Connection], Awaitable[T]], *, inline: bool = False) -> T:
        """Run ``work(conn)`` outside any transaction.
        ``inline`` marks a lookup by key (SQLite runs it on the loop)."""
        ...

    async def write(self, work: Callable[[Connection], Awaitable[T]], *, inline: bool = False) -> T:
        """Run ``work(conn)`` in one committed transaction; its exception rolls it back.
        ``inline`` marks a unit of a few indexed statements (SQLite runs it on the loop)."""
        ...

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """All rows of one query."""
        ...

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of one query, or None."""
        ...


class SharedStoreParts:
    """What both stores do alike once ``read`` exists and the secrets are loaded."""

    _secrets: dict[str, bytes]

    async def read(self, work: Callable[[Connection], Awaitable[T]], *, inline: bool = False) -> T:
        """Run ``work(conn)`` outside any transaction (each store defines how)."""
        raise NotImplementedError

    def secret(self, name: str) -> bytes:
        """A per-installation secret (32 random bytes made once), kept in the database."""
        try:
            return self._secrets[name]
        except KeyError:
            raise StoreError(f"unknown installation secret {name!r}") from None

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Convenience read: all rows of one query."""
        return await self.read(lambda conn: conn.rows(sql, params))

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """Convenience read: the first row of one query, or None."""
        return await self.read(lambda conn: conn.one(sql, params))
