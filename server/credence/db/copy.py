"""`credence db copy`: every row of a SQLite installation into an empty PostgreSQL database."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from credence.db import pg_migrate
from credence.settings import redact_url

BATCH = 500
CONNECT_TIMEOUT_S = 5
# SQLite-only tables with no PostgreSQL twin, left out on purpose: the migration record
# (PostgreSQL keeps its own, schema_migrations). FTS5 tables and their shadow tables are found
# from the schema; sqlite_* are SQLite's own.
SQLITE_ONLY = frozenset({"schema_version"})
AUDIT_COLUMNS = (
    "seq, belief_id, agent_id, action, actor, at, before_status, after_status,"
    " before_hash, after_hash, version, detail, prev_hash, row_hash, chain_version"
)
ChainCheck = Callable[[list[dict[str, Any]]], tuple[bool, int, int | None]]


class CopyError(RuntimeError):
    """The copy was refused or did not verify; the target was left unchanged."""


@dataclass
class CopyReport:
    """What a copy moved: rows per table in copy order, what it skipped, the audit chain."""

    tables: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    audit_rows: int = 0
    audit_head: str | None = None


@dataclass(frozen=True)
class _Table:
    name: str
    columns: list[str]  # the columns copied: the source's, all present on the target
    key: list[str]  # the target's primary key
    deferred: list[str]  # nullable self-references, filled in by UPDATE once every row is in
    ordered: list[str]  # self-references a CHECK or NOT NULL ties down: parents inserted first


async def copy_to_postgres(
    sqlite_path: Path, url: str, check_chain: ChainCheck, *, batch: int = BATCH
) -> CopyReport:
    """Copy the SQLite file at ``sqlite_path`` into the empty PostgreSQL database at ``url``.

    The target is migrated first, then filled in one transaction: tables in foreign-key order,
    rows in batches, values unchanged (timestamps and JSON are text on both engines). Identity
    sequences continue after the copied rows. Before COMMIT every table's row count and a digest
    of its rows must equal the source's and the audit chain must pass ``check_chain`` with the
    source's head; anything else raises CopyError and rolls the whole copy back.
    """
    source = sqlite3.connect(f"{sqlite_path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        # One read transaction: a consistent snapshot even if a server still writes (WAL).
        source.execute("BEGIN")
        report = CopyReport()
        columns, report.skipped = _source_tables(source)
        chain = _source_chain(source, check_chain)
        try:
            connection = await psycopg.AsyncConnection.connect(
                url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
            )
        except psycopg.Error as exc:
            raise CopyError(f"cannot connect to {redact_url(url)}: {_first_line(exc)}") from None
        async with connection as target:
            await _refuse_rows(target, await _existing(target, columns))
            await pg_migrate.migrate(target)
            found = await pg_migrate.status(target)
            if found.unknown:
                raise CopyError(
                    f"the target has migrations this Credence does not know ({found.unknown}):"
                    " copy with the Credence version that migrated it"
                )
            async with target.transaction():
                tables = await _plan(target, columns)
                await _copy_all(source, target, tables, batch, report)
                await _verify(source, target, tables, check_chain, chain, report)
        return report
    finally:
        source.close()


def _source_tables(source: sqlite3.Connection) -> tuple[dict[str, list[str]], list[str]]:
    names = [
        row[0]
        for row in source.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            " ORDER BY name"
        )
    ]
    virtual = [
        row[0]
        for row in source.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'"
        )
    ]
    skipped = [
        name
        for name in names
        if name in SQLITE_ONLY or any(name == v or name.startswith(f"{v}_") for v in virtual)
    ]
    tables = {
        name: [row[1] for row in source.execute(f'PRAGMA table_info("{name}")')]
        for name in names
        if name not in skipped
    }
    return tables, skipped


def _source_chain(source: sqlite3.Connection, check_chain: ChainCheck) -> tuple[int, str | None]:
    source.row_factory = sqlite3.Row
    try:
        rows = [
            dict(row) for row in source.execute(f"SELECT {AUDIT_COLUMNS} FROM audit ORDER BY seq")
        ]
    finally:
        source.row_factory = None
    ok, count, broken = check_chain(rows)
    if not ok:
        raise CopyError(
            f"the source's audit chain is broken at seq {broken} (see `credence audit verify`);"
            " nothing was copied"
        )
    return count, rows[-1]["row_hash"] if rows else None


async def _existing(target: psycopg.AsyncConnection[Any], tables: Iterable[str]) -> list[str]:
    cursor = await target.execute(
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_schema = current_schema() AND table_name = ANY(%s)",
        (list(tables),),
    )
    return sorted(row[0] for row in await cursor.fetchall())


async def _refuse_rows(target: psycopg.AsyncConnection[Any], tables: Iterable[str]) -> None:
    """Refuse a target holding any row, but the ones its own migrations write."""
    seeded = seeded_tables()
    full = []
    for name in tables:
        if name in seeded:
            continue
        query = sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(name))
        row = await (await target.execute(query)).fetchone()
        if row and row[0]:
            full.append(name)
    if full:
        raise CopyError(
            f"the target database is not empty ({', '.join(full)} hold rows): copy into a new,"
            " empty database; nothing was changed"
        )


def seeded_tables() -> set[str]:
    """Tables the PostgreSQL migrations themselves put rows in (outside function bodies)."""
    found: set[str] = set()
    for migration in pg_migrate.migrations():
        text = re.sub(r"\$\$.*?\$\$", "", migration.sql, flags=re.S)
        found.update(m.lower() for m in re.findall(r"INSERT\s+INTO\s+(\w+)", text, flags=re.I))
    return found


async def _plan(
    target: psycopg.AsyncConnection[Any], source_columns: dict[str, list[str]]
) -> list[_Table]:
    """The tables to copy in foreign-key order, each checked against the target's schema."""
    cursor = await target.execute(
        "SELECT c.relname, a.attname, a.attgenerated <> '' FROM pg_attribute a"
        " JOIN pg_class c ON c.oid = a.attrelid"
        " WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'"
        " AND a.attnum > 0 AND NOT a.attisdropped"
    )
    target_columns: dict[str, dict[str, bool]] = {}
    for table, column, generated in await cursor.fetchall():
        target_columns.setdefault(table, {})[column] = generated
    missing = sorted(set(source_columns) - set(target_columns))
    if missing:
        raise CopyError(f"no PostgreSQL table for {', '.join(missing)}: upgrade Credence")
    for name, columns in source_columns.items():
        lost = [c for c in columns if c not in target_columns[name] or target_columns[name][c]]
        if lost:
            raise CopyError(f"PostgreSQL's {name} has no column {', '.join(lost)} to copy into")
    keys = await _primary_keys(target)
    references = await _references(target)
    tied = await _tied_columns(target)
    plan = []
    for name in copy_order(source_columns, references):
        own = [c for c, parent in references.get(name, []) if parent == name]
        plan.append(
            _Table(
                name=name,
                columns=source_columns[name],
                key=keys.get(name, []),
                deferred=[c for c in own if (name, c) not in tied],
                ordered=[c for c in own if (name, c) in tied],
            )
        )
    return plan


async def _tied_columns(target: psycopg.AsyncConnection[Any]) -> set[tuple[str, str]]:
    """(table, column) pairs that are NOT NULL or named by a CHECK: they cannot wait as NULL."""
    cursor = await target.execute(
        "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
        " WHERE c.relnamespace = current_schema()::regnamespace AND a.attnum > 0"
        " AND (a.attnotnull OR EXISTS (SELECT 1 FROM pg_constraint k WHERE k.contype = 'c'"
        " AND k.conrelid = c.oid AND a.attnum = ANY(k.conkey)))"
    )
    return {(table, column) for table, column in await cursor.fetchall()}


async def _primary_keys(target: psycopg.AsyncConnection[Any]) -> dict[str, list[str]]:
    cursor = await target.execute(
        "SELECT c.relname, a.attname FROM pg_index i"
        " JOIN pg_class c ON c.oid = i.indrelid"
        " JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) ON true"
        " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum"
        " WHERE i.indisprimary AND c.relnamespace = current_schema()::regnamespace"
        " ORDER BY c.relname, k.n"
    )
    keys: dict[str, list[str]] = {}
    for table, column in await cursor.fetchall():
        keys.setdefault(table, []).append(column)
    return keys


async def _references(target: psycopg.AsyncConnection[Any]) -> dict[str, list[tuple[str, str]]]:
    """Per table, (column, referenced table) of each single-column foreign key."""
    cursor = await target.execute(
        "SELECT c.relname, a.attname, p.relname FROM pg_constraint f"
        " JOIN pg_class c ON c.oid = f.conrelid JOIN pg_class p ON p.oid = f.confrelid"
        " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = f.conkey[1]"
        " WHERE f.contype = 'f' AND c.relnamespace = current_schema()::regnamespace"
    )
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, parent in await cursor.fetchall():
        found.setdefault(table, []).append((column, parent))
    return found


def copy_order(tables: Iterable[str], references: dict[str, list[tuple[str, str]]]) -> list[str]:
    """Parents before children (self-references aside), alphabetical among equals."""
    pending = set(tables)
    order: list[str] = []
    while pending:
        ready = sorted(
            name
            for name in pending
            if all(p == name or p not in pending for _, p in references.get(name, []))
        )
        if not ready:
            raise CopyError(f"foreign keys form a cycle between {', '.join(sorted(pending))}")
        order.extend(ready)
        pending.difference_update(ready)
    return order


async def _copy_all(
    source: sqlite3.Connection,
    target: psycopg.AsyncConnection[Any],
    tables: Sequence[_Table],
    batch: int,
    report: CopyReport,
) -> None:
    names = [sql.Identifier(table.name) for table in tables]
    # Writers (a replica started too early) wait until the copy commits; readers do not.
    await target.execute(
        sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(sql.SQL(", ").join(names))
    )
    everything = await target.execute(
        "SELECT relname FROM pg_class WHERE relkind IN ('r', 'p')"
        " AND relnamespace = current_schema()::regnamespace AND relname <> 'schema_migrations'"
    )
    await _refuse_rows(target, sorted(row[0] for row in await everything.fetchall()))
    triggers = await _side_effect_triggers(target, [table.name for table in tables])
    await _set_triggers(target, triggers, enable=False)
    seeded = seeded_tables()
    for table in tables:
        if table.name in seeded:
            await target.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(table.name)))
        try:
            report.tables[table.name] = await _copy_table(source, target, table, batch)
        except psycopg.Error as exc:
            raise CopyError(f"copying {table.name}: {_first_line(exc)}") from None
    await _set_triggers(target, triggers, enable=True)
    await _continue_sequences(source, target, tables)


async def _side_effect_triggers(
    target: psycopg.AsyncConnection[Any], tables: list[str]
) -> list[tuple[str, str]]:
    """The AFTER triggers on ``tables``: what they derive (the belief change log, counters,
    notifications) the copy carries from the source itself. BEFORE triggers stay on: they check
    each row (the learnability gate, append-only audit) and `audit_chain` recomputes every link.
    """
    cursor = await target.execute(
        "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        " WHERE NOT t.tgisinternal AND c.relname = ANY(%s) AND t.tgenabled <> 'D'"
        " AND c.relnamespace = current_schema()::regnamespace AND (t.tgtype & 2) = 0"
        " ORDER BY 1, 2",
        (tables,),
    )
    return [(table, trigger) for table, trigger in await cursor.fetchall()]


async def _set_triggers(
    target: psycopg.AsyncConnection[Any], triggers: list[tuple[str, str]], *, enable: bool
) -> None:
    verb = sql.SQL("ENABLE" if enable else "DISABLE")
    for table, trigger in triggers:
        await target.execute(
            sql.SQL("ALTER TABLE {} {} TRIGGER {}").format(
                sql.Identifier(table), verb, sql.Identifier(trigger)
            )
        )


async def _copy_table(
    source: sqlite3.Connection, target: psycopg.AsyncConnection[Any], table: _Table, batch: int
) -> int:
    columns = [sql.Identifier(c) for c in table.columns]
    insert = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
        sql.Identifier(table.name),
        sql.SQL(", ").join(columns),
        sql.SQL(", ").join(sql.Placeholder() * len(columns)),
    )
    deferred = [table.columns.index(c) for c in table.deferred if c in table.columns]
    if deferred and not table.key:
        raise CopyError(f"{table.name} refers to itself but has no primary key to update by")
    key = [table.columns.index(c) for c in table.key]
    later: list[tuple[Any, ...]] = []
    copied = 0
    async with target.cursor() as out:
        for rows in _batches(source, table, batch):
            if deferred:
                later += [
                    (*(row[i] for i in deferred), *(row[i] for i in key))
                    for row in rows
                    if any(row[i] is not None for i in deferred)
                ]
                rows = [
                    tuple(None if i in deferred else v for i, v in enumerate(row)) for row in rows
                ]
            await out.executemany(insert, rows)
            copied += len(rows)
        if later:
            update = sql.SQL("UPDATE {} SET {} WHERE {}").format(
                sql.Identifier(table.name),
                sql.SQL(", ").join(
                    sql.SQL("{} = %s").format(sql.Identifier(table.columns[i])) for i in deferred
                ),
                sql.SQL(" AND ").join(
                    sql.SQL("{} = %s").format(sql.Identifier(c)) for c in table.key
                ),
            )
            for start in range(0, len(later), batch):
                await out.executemany(update, later[start : start + batch])
    return copied


def _batches(
    source: sqlite3.Connection, table: _Table, batch: int
) -> Iterable[list[tuple[Any, ...]]]:
    """The source's rows in batches: in key order, or parents first for ``table.ordered``."""
    if not table.ordered:
        cursor = source.execute(f'SELECT * FROM "{table.name}" ORDER BY {_source_order(table)}')
        while rows := cursor.fetchmany(batch):
            yield rows
        return
    if len(table.key) != 1:
        raise CopyError(f"{table.name} refers to itself but has no single-column primary key")
    key = table.key[0]
    refs = ", ".join(f'"{c}"' for c in table.ordered)
    links = source.execute(f'SELECT "{key}", {refs} FROM "{table.name}" ORDER BY "{key}"')
    order = _parents_first({row[0]: [r for r in row[1:] if r is not None] for row in links})
    position = table.columns.index(key)
    for start in range(0, len(order), batch):
        wanted = order[start : start + batch]
        marks = ", ".join("?" * len(wanted))
        found = source.execute(
            f'SELECT * FROM "{table.name}" WHERE "{key}" IN ({marks})', wanted
        ).fetchall()
        rank = {value: n for n, value in enumerate(wanted)}
        yield sorted(found, key=lambda row: rank[row[position]])


def _parents_first(parents: dict[Any, list[Any]]) -> list[Any]:
    """Every key after the keys it refers to (a supersession chain: the newest first)."""
    order: list[Any] = []
    placed: set[Any] = set()
    for start in parents:
        stack, seen = [start], set()
        while stack:
            node = stack[-1]
            if node in placed:
                stack.pop()
                continue
            waiting = [p for p in parents.get(node, []) if p not in placed and p in parents]
            if not waiting:
                placed.add(node)
                order.append(node)
                stack.pop()
                continue
            if node in seen:
                raise CopyError(f"rows refer to each other in a cycle (through {node!r})")
            seen.add(node)
            stack.extend(waiting)
    return order


def _source_order(table: _Table) -> str:
    # The audit chain must arrive in seq order; every other table in key order, for a
    # deterministic copy.
    if table.key and all(c in table.columns for c in table.key):
        return ", ".join(f'"{c}"' for c in table.key)
    return "rowid"


async def _continue_sequences(
    source: sqlite3.Connection, target: psycopg.AsyncConnection[Any], tables: Sequence[_Table]
) -> None:
    """Point each identity sequence past the copied rows, and past SQLite's AUTOINCREMENT
    high-water mark, so no number a deleted row had is handed out again."""
    high = dict(source.execute("SELECT name, seq FROM sqlite_sequence").fetchall())
    for table in tables:
        for column in table.columns:
            row = await (
                await target.execute("SELECT pg_get_serial_sequence(%s, %s)", (table.name, column))
            ).fetchone()
            if not row or row[0] is None:
                continue
            query = sql.SQL("SELECT COALESCE(MAX({}), 0) FROM {}").format(
                sql.Identifier(column), sql.Identifier(table.name)
            )
            top = (await (await target.execute(query)).fetchone() or (0,))[0]
            last = max(int(top), int(high.get(table.name) or 0))
            if last > 0:
                await target.execute("SELECT setval(%s, %s, true)", (row[0], last))
            else:
                await target.execute("SELECT setval(%s, 1, false)", (row[0],))


async def _verify(
    source: sqlite3.Connection,
    target: psycopg.AsyncConnection[Any],
    tables: Sequence[_Table],
    check_chain: ChainCheck,
    chain: tuple[int, str | None],
    report: CopyReport,
) -> None:
    """Compare every table's count and row digest, then verify the audit chain on the target."""
    for table in tables:
        cols = ", ".join(f'"{c}"' for c in table.columns)
        mine = Digest()
        for row in source.execute(f'SELECT {cols} FROM "{table.name}"'):
            mine.add(row)
        query = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(sql.Identifier(c) for c in table.columns),
            sql.Identifier(table.name),
        )
        theirs = Digest()
        # A server-side cursor, so a table of embeddings is not held in memory whole.
        async with target.cursor(name=f"verify_{table.name}") as cursor:
            cursor.itersize = 2000
            await cursor.execute(query)
            async for row in cursor:
                theirs.add(row)
        if mine != theirs:
            raise CopyError(
                f"{table.name} differs after the copy ({mine.rows} rows in SQLite,"
                f" {theirs.rows} in PostgreSQL, or a value changed); nothing was copied"
            )
    async with target.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(f"SELECT {AUDIT_COLUMNS} FROM audit ORDER BY seq")
        rows = await cursor.fetchall()
    ok, count, broken = check_chain(rows)
    head = rows[-1]["row_hash"] if rows else None
    if not ok or (count, head) != chain:
        raise CopyError(
            f"the audit chain does not verify on PostgreSQL (first broken seq {broken},"
            f" {count} rows, head {head}; the source has {chain[0]} rows, head {chain[1]});"
            " nothing was copied"
        )
    report.audit_rows, report.audit_head = count, head


@dataclass
class Digest:
    """Row count and an order-independent sum of each row's SHA-256 over its typed values."""

    rows: int = 0
    total: int = 0

    def add(self, row: Sequence[Any]) -> None:
        """Count one row in."""
        values = tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
        digest = hashlib.sha256(repr(values).encode("utf-8")).digest()
        self.total = (self.total + int.from_bytes(digest, "big")) % (1 << 256)
        self.rows += 1


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
