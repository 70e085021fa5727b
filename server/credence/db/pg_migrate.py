"""PostgreSQL migrations: numbered files in db/postgres, applied under an advisory lock."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import psycopg

# pg_advisory_lock key: b"credmigr" as a big-endian int64, so replicas starting together take
# turns. The audit chain trigger uses b"credaudt"; the two must never be equal.
MIGRATION_LOCK_KEY = 7165901439106639730
PACKAGE = "credence.db.postgres"


class MigrationError(RuntimeError):
    """The shipped migrations or the database's record of them are not consistent."""


@dataclass(frozen=True)
class Migration:
    """One numbered forward migration file."""

    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        """SHA-256 hex of the file's text, recorded when applied to notice later edits."""
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class MigrationStatus:
    """What a database has applied against what this Credence ships."""

    applied: list[int]
    pending: list[Migration]
    unknown: list[int]


def migrations() -> list[Migration]:
    """The shipped PostgreSQL migrations in order; numbers are distinct, gaps are allowed.

    Numbers are reserved per change (as for SQLite), so a lower one may land after a higher one
    was applied; every migration not yet recorded is applied, in number order.
    """
    found = []
    for entry in resources.files(PACKAGE).iterdir():
        stem, _, suffix = entry.name.partition(".")
        number, _, name = stem.partition("_")
        if suffix != "sql" or not name or not number.isdigit():
            continue
        found.append(Migration(int(number), name, entry.read_text(encoding="utf-8")))
    found.sort(key=lambda migration: migration.version)
    numbers = [migration.version for migration in found]
    if len(set(numbers)) != len(numbers) or (numbers and numbers[0] < 1):
        raise MigrationError(f"migrations must have distinct numbers from 1, found {numbers}")
    return found


async def _ensure_table(conn: psycopg.AsyncConnection) -> None:
    async with conn.transaction():
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL,"
            " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )


async def _recorded(conn: psycopg.AsyncConnection) -> dict[int, str]:
    if not await _has_table(conn):
        return {}
    cursor = await conn.execute("SELECT version, checksum FROM schema_migrations ORDER BY version")
    return {version: checksum for version, checksum in await cursor.fetchall()}


async def _has_table(conn: psycopg.AsyncConnection) -> bool:
    cursor = await conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL")
    row = await cursor.fetchone()
    return bool(row and row[0])


def _compare(recorded: dict[int, str], shipped: Sequence[Migration]) -> MigrationStatus:
    for migration in shipped:
        checksum = recorded.get(migration.version)
        if checksum is not None and checksum != migration.checksum:
            raise MigrationError(
                f"migration {migration.version:04d}_{migration.name} changed after it was applied"
            )
    versions = {migration.version for migration in shipped}
    return MigrationStatus(
        applied=sorted(recorded),
        pending=[migration for migration in shipped if migration.version not in recorded],
        unknown=sorted(set(recorded) - versions),
    )


async def status(
    conn: psycopg.AsyncConnection, shipped: Sequence[Migration] | None = None
) -> MigrationStatus:
    """Applied, pending and unknown (newer than this code) versions, without changing anything."""
    recorded = await _recorded(conn)
    if not conn.autocommit:
        await conn.rollback()
    return _compare(recorded, migrations() if shipped is None else shipped)


async def migrate(
    conn: psycopg.AsyncConnection, shipped: Sequence[Migration] | None = None
) -> list[int]:
    """Apply every pending migration, each in its own transaction; returns the versions applied.

    The session advisory lock makes concurrent runners (replicas starting together) take turns:
    the one that waits finds the work done. A failing migration rolls back whole and raises.
    """
    shipped = migrations() if shipped is None else shipped
    previous_autocommit = conn.autocommit
    if not previous_autocommit:
        await conn.rollback()
        await conn.set_autocommit(True)
    await conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
    try:
        await _ensure_table(conn)
        plan = _compare(await _recorded(conn), shipped)
        applied = []
        for migration in plan.pending:
            async with conn.transaction():
                # No parameters: psycopg sends the simple protocol, so one file may hold many
                # statements, PL/pgSQL bodies included.
                await conn.execute(migration.sql.encode("utf-8"))
                await conn.execute(
                    "INSERT INTO schema_migrations(version, name, checksum) VALUES (%s, %s, %s)",
                    (migration.version, migration.name, migration.checksum),
                )
            applied.append(migration.version)
        return applied
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
        if not previous_autocommit:
            await conn.set_autocommit(False)


async def _main(url: str, check: bool) -> int:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        if check:
            found = await status(conn)
            for migration in found.pending:
                print(f"pending {migration.version:04d}_{migration.name}")
            return 1 if found.pending else 0
        for version in await migrate(conn):
            print(f"applied {version:04d}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m credence.db.pg_migrate URL [--check]`: apply, or list pending (exit 1)."""
    parser = argparse.ArgumentParser(prog="python -m credence.db.pg_migrate", description=__doc__)
    parser.add_argument("url", help="postgresql://user@host:port/db")
    parser.add_argument("--check", action="store_true", help="list pending, change nothing")
    args = parser.parse_args(argv)
    try:
        return asyncio.run(_main(args.url, args.check))
    except (psycopg.Error, MigrationError) as exc:
        print(f"credence: migrate: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
