"""The embedded SQLite store: one connection, checked pragmas, migrations, group commit."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import sqlite3
from collections.abc import Awaitable, Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import aiosqlite

from credence.db.audit import sqlite_row_hash
from credence.db.engine import (
    Connection,
    Dialect,
    Params,
    Query,
    SharedStoreParts,
    Statement,
    StoreError,
    StoreUnavailable,
)
from credence.db.secrets import ensure_secrets
from credence.files import create_private_file

log = logging.getLogger(__name__)

T = TypeVar("T")
Work = Callable[[Any], Awaitable[T]]

# (pragma, value to set, value PRAGMA reads back). Start-up refuses to run unless each reads back.
REQUIRED_PRAGMAS: tuple[tuple[str, str, object], ...] = (
    ("journal_mode", "WAL", "wal"),
    ("synchronous", "FULL", 2),
    ("foreign_keys", "ON", 1),
    ("busy_timeout", "10000", 10000),
)
MAX_BATCH = 64


__all__ = ["SqliteConnection", "Store", "StoreError", "StoreUnavailable"]


class SqliteConnection:
    """The aiosqlite connection seen through the engine-neutral ``Connection`` interface.

    Every method is one call on the database thread (each aiosqlite call is a thread hop that
    costs more than the SQL), or, while ``inline`` is set, a direct call on the event loop's
    thread. The store's own savepoints ride along: ``defer`` queues a control statement that
    runs just before the next statement, in the same call.
    """

    dialect: Dialect = "sqlite"

    def __init__(self, raw: aiosqlite.Connection) -> None:
        self.raw = raw
        self._deferred: list[str] = []
        self.inline = False

    @contextlib.contextmanager
    def running(self, *, inline: bool) -> Iterator[None]:
        """One unit's turn on the connection: its calls run on the loop's thread if ``inline``."""
        self.inline = inline
        try:
            yield
        finally:
            self.inline = False

    def defer(self, statement: str) -> None:
        """Run ``statement`` (a SAVEPOINT or RELEASE) before the next one, in its call."""
        self._deferred.append(statement)

    def undefer(self, statement: str) -> bool:
        """Drop ``statement`` if it is still waiting (True), so it never runs."""
        if self._deferred and self._deferred[-1] == statement:
            self._deferred.pop()
            return True
        return False

    async def _call(self, action: Callable[..., T], *args: Any) -> T:
        deferred, self._deferred = self._deferred, []
        if self.inline:
            return _on_thread(self.raw._conn, deferred, action, args)
        # aiosqlite runs any callable on its thread through _execute; its public methods do so.
        return await self.raw._execute(_on_thread, self.raw._conn, deferred, action, args)

    async def execute(self, statement: str) -> None:
        """Run the deferred statements, then ``statement`` (no parameters, no rows)."""
        await self._call(_change, statement, ())

    async def rows(self, sql: str, params: Params = ()) -> list[Any]:
        """All rows of one statement."""
        return await self._call(_fetch_all, sql, _sqlite_params(params))

    async def one(self, sql: str, params: Params = ()) -> Any:
        """The first row of one statement, or None.

        ``async with conn.execute(...)`` then ``fetchone()`` costs three trips (execute, fetch,
        close); on the decision path that triples the time a write holds the store.
        """
        return next(iter(await self._call(_fetch_all, sql, _sqlite_params(params))), None)

    async def run(self, sql: str, params: Params = ()) -> int:
        """Execute one statement; the number of rows it changed."""
        return await self._call(_change, sql, _sqlite_params(params))

    async def run_many(self, sql: str, params: Any) -> None:
        """Execute one statement once per parameter set."""
        await self._call(_run_batch, [(sql, [_sqlite_params(p) for p in params])])

    async def batch(self, statements: Sequence[Statement]) -> None:
        """Execute each statement once per parameter set, in order, in one call."""
        prepared = [(sql, [_sqlite_params(p) for p in params]) for sql, params in statements]
        await self._call(_run_batch, prepared)

    async def rows_together(self, queries: Sequence[Query]) -> list[list[Any]]:
        """Each query's rows, the queries run in order in one call."""
        return await self._call(_fetch_each, [(sql, _sqlite_params(p)) for sql, p in queries])


def _on_thread(
    raw: sqlite3.Connection,
    deferred: list[str],
    action: Callable[..., T],
    args: tuple[Any, ...],
) -> T:
    for statement in deferred:
        raw.execute(statement)
    return action(raw, *args)


def _fetch_all(raw: sqlite3.Connection, sql: str, params: Any) -> list[Any]:
    return raw.execute(sql, params).fetchall()


def _fetch_each(raw: sqlite3.Connection, queries: list[tuple[str, Any]]) -> list[list[Any]]:
    return [_fetch_all(raw, sql, params) for sql, params in queries]


def _change(raw: sqlite3.Connection, sql: str, params: Any) -> int:
    cursor = raw.execute(sql, params)
    try:
        return cursor.rowcount
    finally:
        cursor.close()


def _run_batch(raw: sqlite3.Connection, statements: list[tuple[str, list[Any]]]) -> None:
    for sql, params in statements:
        raw.executemany(sql, params)


def _sqlite_params(params: Params) -> Any:
    return params if isinstance(params, dict | tuple) else tuple(params)


class Store(SharedStoreParts):
    """Owns the single aiosqlite connection of this process and serialises every use of it.

    Reads run one at a time between transactions. Writes queue up and the executor commits each
    run of queued writes in one ``BEGIN IMMEDIATE`` transaction (group commit), isolating each
    write in its own SAVEPOINT so one failing write rolls back alone. A caller learns its result
    only after COMMIT, so a success is durable; a cancelled caller never interrupts a write, and
    a write whose caller left before it started is skipped.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: aiosqlite.Connection | None = None
        self._queue: collections.deque[_Queued] = collections.deque()
        self._wakeup = asyncio.Event()
        self._executor: asyncio.Task[None] | None = None
        self.schema_version = 0
        self.commits = 0  # committed write transactions, for tests and benchmarks
        self._secrets: dict[str, bytes] = {}

    dialect: Dialect = "sqlite"

    async def open(self) -> None:
        """Open the file, enforce the pragmas, apply migrations and start the executor."""
        create_private_file(self.path)
        # The executor serialises every use of the connection, so an inline write may run its
        # statements on the event loop's thread between calls on the database thread.
        self._conn = await aiosqlite.connect(
            self.path, isolation_level=None, check_same_thread=False
        )
        self._conn.row_factory = aiosqlite.Row
        # Batched audit appends link and hash the chain in SQL, as PostgreSQL's trigger does.
        await self._conn.create_function("audit_row_hash", 13, sqlite_row_hash, deterministic=True)
        try:
            for name, value, expected in REQUIRED_PRAGMAS:
                await self._conn.execute(f"PRAGMA {name}={value}")
                async with self._conn.execute(f"PRAGMA {name}") as cur:
                    row = await cur.fetchone()
                actual = row[0] if row else None
                if isinstance(expected, str) and isinstance(actual, str):
                    actual = actual.lower()
                if actual != expected:
                    raise StoreError(
                        f"PRAGMA {name} is {actual!r}, need {expected!r}: refusing to run"
                    )
            await self._migrate()
        except BaseException:
            # The connection's thread would keep the process alive (a corrupt file hung start-up).
            await self._conn.close()
            self._conn = None
            raise
        self._executor = asyncio.create_task(self._run(), name="credence-store")
        self._secrets = await self.write(lambda conn: ensure_secrets(conn, self.path.parent))

    def pool_stats(self) -> dict[str, int]:
        """The one connection: busy while writes are queued; the rest of them wait."""
        queued = len(self._queue)
        return {
            "in_use": min(queued, 1),
            "idle": 0 if queued or self._conn is None else 1,
            "max": 1,
            "waiting": max(queued - 1, 0),
        }

    async def close(self) -> None:
        """Finish queued work, stop the executor and close the connection."""
        if self._executor is not None:
            stop = _Queued(False, False, _stop, asyncio.get_running_loop().create_future())
            self._queue.append(stop)
            self._wakeup.set()
            try:
                await self._executor
            except asyncio.CancelledError:
                # A shutdown that cancels every task may reach the executor first; the queue
                # holds no unfinished write then (writes run to completion), so closing is safe.
                if not self._executor.cancelled():
                    raise
            self._executor = None
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def read(self, work: Work[T], *, inline: bool = False) -> T:
        """Run ``work(conn)`` outside any transaction and return its result.

        ``inline``: the read is a lookup by key, run on the event loop's thread. It still
        waits its turn in the queue, so it never sees a write transaction's uncommitted rows.
        """
        return await self._submit(work, write=False, inline=inline)

    async def write(self, work: Work[T], *, inline: bool = False) -> T:
        """Run ``work(conn)`` inside a committed transaction; its exception rolls it back.

        ``inline``: the unit is a few indexed statements, run on the event loop's thread.
        A trip to the database thread costs several times such a statement's own CPU; the
        transaction's BEGIN and its COMMIT (which waits on the disk) stay on that thread.
        """
        return await self._submit(work, write=True, inline=inline)

    async def _submit(self, work: Work[T], *, write: bool, inline: bool) -> T:
        if self._executor is None or self._executor.done():
            raise StoreError("store is not open")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append(_Queued(write, inline, work, future))
        self._wakeup.set()
        return await future

    async def _run(self) -> None:
        assert self._conn is not None
        conn = SqliteConnection(self._conn)
        while True:
            if not self._queue:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            first = self._queue.popleft()
            if first.work is _stop:
                return
            if not first.write:
                if not first.future.cancelled():
                    with conn.running(inline=first.inline):
                        await _settle(first.future, first.work, conn)
                continue
            batch = [first]
            while self._queue and self._queue[0].write and len(batch) < MAX_BATCH:
                batch.append(self._queue.popleft())
            await self._commit_batch(conn, batch)

    async def _commit_batch(self, conn: SqliteConnection, batch: list[_Queued]) -> None:
        outcomes: list[tuple[asyncio.Future[Any], bool, Any]] = []
        try:
            await conn.execute("BEGIN IMMEDIATE")
        except Exception as exc:  # the database itself is unusable: fail the whole batch
            for unit in batch:
                _resolve(unit.future, False, exc)
            return
        for _, inline, work, future in batch:
            if future.cancelled():
                continue
            # The savepoint and its release ride with the unit's first statement and with the
            # next one after it (or COMMIT): two fewer trips to the database thread per write.
            conn.defer("SAVEPOINT unit")
            with conn.running(inline=inline):
                try:
                    result = await work(conn)
                except Exception as exc:
                    if not conn.undefer("SAVEPOINT unit"):  # it ran: undo what the unit wrote
                        await conn.execute("ROLLBACK TO unit")
                        conn.defer("RELEASE unit")
                    outcomes.append((future, False, exc))
                else:
                    if not conn.undefer("SAVEPOINT unit"):
                        conn.defer("RELEASE unit")
                    outcomes.append((future, True, result))
        try:
            await conn.execute("COMMIT")
            self.commits += 1
        except Exception as exc:
            log.exception("commit failed; rolling back %d writes", len(outcomes))
            await conn.execute("ROLLBACK")
            outcomes = [(future, False, exc) for future, _, _ in outcomes]
        for future, ok, value in outcomes:
            _resolve(future, ok, value)

    async def _migrate(self) -> None:
        assert self._conn is not None
        conn = self._conn
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        async with conn.execute("SELECT version FROM schema_version") as cur:
            applied = {row[0] for row in await cur.fetchall()}
        current = max(applied, default=0)
        for version, name, sql in migrations():
            if version in applied:
                continue
            log.info("applying migration %04d_%s", version, name)
            # A table rebuild (the only way to change a CHECK in SQLite) drops and renames a
            # parent table: foreign keys go off for it, as SQLite documents, and are checked
            # before COMMIT instead. The pragma is a no-op inside a transaction, so it is here.
            await conn.execute("PRAGMA foreign_keys=OFF")
            await conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in split_statements(sql):
                    await conn.execute(statement)
                broken = list(await conn.execute_fetchall("PRAGMA foreign_key_check"))
                if broken:
                    raise StoreError(
                        f"migration {version:04d}_{name} breaks foreign keys: {list(broken[0])}"
                    )
                await conn.execute(
                    "INSERT INTO schema_version(version, name, applied_at)"
                    " VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))",
                    (version, name),
                )
                await conn.execute("COMMIT")
            except Exception:
                await conn.execute("ROLLBACK")
                raise
            finally:
                await conn.execute("PRAGMA foreign_keys=ON")
            current = max(current, version)
        self.schema_version = current


def applied_versions(path: Path) -> set[int]:
    """The versions a SQLite file records, read only (a missing file has none and stays so)."""
    if not path.is_file():
        return set()
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        known = db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if not known:
            return set()
        return {row[0] for row in db.execute("SELECT version FROM schema_version")}
    finally:
        db.close()


def migrations() -> list[tuple[int, str, str]]:
    """The numbered forward migrations shipped in ``credence/db/migrations``, in order."""
    found = []
    for entry in resources.files("credence.db.migrations").iterdir():
        stem, _, suffix = entry.name.partition(".")
        if suffix != "sql" or "_" not in stem:
            continue
        number, _, name = stem.partition("_")
        found.append((int(number), name, entry.read_text(encoding="utf-8")))
    found.sort()
    numbers = [n for n, _, _ in found]
    # Numbers are handed out per change in advance, so one may land before a lower one does:
    # each must be unique and positive, and the store applies them in order.
    if len(set(numbers)) != len(numbers) or (numbers and numbers[0] < 1):
        raise StoreError(f"migrations must have unique positive numbers, found {numbers}")
    return found


def split_statements(sql: str) -> list[str]:
    """Split a migration into statements, keeping trigger bodies (BEGIN … END;) whole."""
    statements, buffer = [], ""
    for line in sql.splitlines(keepends=True):
        if line.strip().startswith("--") and not buffer:
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


class _Queued(NamedTuple):
    """One unit waiting for the connection: a read, or a write (inline or on the thread)."""

    write: bool
    inline: bool
    work: Work[Any]
    future: asyncio.Future[Any]


async def _stop(conn: Connection) -> None:  # sentinel work item
    return None


async def _settle(future: asyncio.Future[Any], work: Work[Any], conn: Connection) -> None:
    try:
        result = await work(conn)
    except Exception as exc:
        _resolve(future, False, exc)
    else:
        _resolve(future, True, result)


def _resolve(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
