"""The `credence migrate` and `credence db copy` commands (registered in credence.cli)."""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import msgspec

from credence.cli import _data_flag, command, missing_data, settings_from, with_store
from credence.settings import Settings, SettingsError, load_settings, redact_url

EXIT_PENDING = 1
EXIT_FAILED = 2


def _migrate_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="list pending migrations and exit 1 if there are any; change nothing",
    )
    _data_flag(parser)


@command("migrate", "apply pending database migrations (--check: only list them)", _migrate_flags)
def migrate(args: argparse.Namespace) -> int:
    """Apply (or with --check list) the migrations the store of these settings has not had."""
    settings = settings_from(args)
    url = settings.database_url
    if url:
        return _fail_cleanly(lambda: asyncio.run(_pg_migrate(url, args.check)))
    return _fail_cleanly(lambda: _sqlite_migrate(settings, args.check))


def _fail_cleanly(run: Callable[[], int]) -> int:
    """Run a command body; a database it cannot use is one error line, never a traceback."""
    import psycopg

    from credence.db.engine import StoreError
    from credence.db.pg_migrate import MigrationError

    try:
        return run()
    except (psycopg.Error, sqlite3.Error, OSError, MigrationError, StoreError) as exc:
        print(f"error: {_first_line(exc)}", file=sys.stderr)
        return EXIT_FAILED


async def _pg_migrate(url: str, check: bool) -> int:
    import psycopg

    from credence.db import pg_migrate

    try:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        raise psycopg.OperationalError(
            f"cannot connect to {redact_url(url)}: {_first_line(exc)}"
        ) from None
    async with conn:
        found = await pg_migrate.status(conn)
        if found.unknown:
            print(
                f"error: {redact_url(url)} has migrations this Credence does not know:"
                f" {found.unknown}; upgrade Credence",
                file=sys.stderr,
            )
            return EXIT_FAILED
        if check:
            return _report([f"{m.version:04d}_{m.name}" for m in found.pending], found.applied)
        applied = await pg_migrate.migrate(conn)
    names = {m.version: f"{m.version:04d}_{m.name}" for m in found.pending}
    for version in applied:
        print(f"applied {names.get(version, f'{version:04d}')}")
    print(f"up to date: {redact_url(url)} at schema {max([*found.applied, *applied], default=0)}")
    return 0


def _sqlite_migrate(settings: Settings, check: bool) -> int:
    try:
        return _sqlite_migrate_file(settings, check)
    except sqlite3.Error as exc:
        raise sqlite3.Error(f"{settings.database_path}: {_first_line(exc)}") from None


def _sqlite_migrate_file(settings: Settings, check: bool) -> int:
    from credence.db.store import applied_versions, migrations

    path = settings.database_path
    before = applied_versions(path)
    shipped = migrations()
    if check:
        if not path.is_file():
            print(f"no database yet at {path}: every migration is pending")
        unknown = sorted(before - {version for version, _, _ in shipped})
        if unknown:
            print(f"error: {path} has migrations this Credence does not know: {unknown}")
            return EXIT_FAILED
        pending = [f"{v:04d}_{name}" for v, name, _ in shipped if v not in before]
        return _report(pending, sorted(before))

    async def nothing(store: object) -> None:
        return None

    with_store(settings, nothing)  # opening the store applies its migrations
    after = applied_versions(path)
    for version, name, _ in shipped:
        if version in after - before:
            print(f"applied {version:04d}_{name}")
    print(f"up to date: {path} at schema {max(after, default=0)}")
    return 0


def _report(pending: list[str], applied: list[int]) -> int:
    for name in pending:
        print(f"pending {name}")
    if pending:
        print(f"{len(pending)} migration(s) pending; `credence migrate` applies them")
        return EXIT_PENDING
    print(f"up to date at schema {max(applied, default=0)}")
    return 0


def _db_flags(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="db_action", required=True)
    copy = sub.add_parser(
        "copy", help="copy this installation's SQLite file into an empty PostgreSQL database"
    )
    copy.add_argument("--to", required=True, help="postgresql://user:password@host:5432/db")
    copy.add_argument("--data", type=Path, help="data dir (default $CREDENCE_DATA_DIR or ./data)")


@command("db", "move an installation between engines (db copy --to postgresql://…)", _db_flags)
def db_command(args: argparse.Namespace) -> int:
    """Copy every row of the SQLite installation in the data dir to PostgreSQL and verify it."""
    from credence.db.copy import CopyError

    try:
        load_settings({}, database_url=args.to)
    except SettingsError:
        print(
            f"error: --to must be a postgresql://user@host:port/database URL,"
            f" got {redact_url(args.to)!r}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    # The source is always the SQLite file in the data dir, whatever CREDENCE_DATABASE_URL says.
    settings = msgspec.structs.replace(
        settings_from(argparse.Namespace(data=args.data)), database_url=None
    )
    if missing_data(settings):
        return EXIT_FAILED
    try:
        return _fail_cleanly(lambda: _copy(settings, args.to))
    except CopyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED


def _copy(settings: Settings, url: str) -> int:
    from credence.db.copy import copy_to_postgres
    from credence.db.pgstore import PostgresStore
    from credence.memory.lifecycle import audit

    async def nothing(store: object) -> None:
        return None

    # Bring the SQLite file to this version's schema (and its secrets into the database) first,
    # so both sides have the same tables and columns.
    with_store(settings, nothing)
    report = asyncio.run(copy_to_postgres(settings.database_path, url, audit.verify_rows))
    for table, rows in report.tables.items():
        print(f"copied {rows:8d}  {table}")
    if report.skipped:
        print(f"skipped (SQLite only, rebuilt by PostgreSQL): {', '.join(report.skipped)}")

    async def reverify() -> tuple[bool, int, int | None]:
        store = PostgresStore(url)
        await store.open()
        try:
            return await audit.verify(store)
        finally:
            await store.close()

    ok, rows, broken = asyncio.run(reverify())
    if not ok or rows != report.audit_rows:
        print(f"error: the copied audit chain does not verify at seq {broken}", file=sys.stderr)
        return EXIT_FAILED
    total = sum(report.tables.values())
    print(
        f"copied {total} rows of {len(report.tables)} tables to {redact_url(url)}; audit chain"
        f" verified ({rows} rows, head {report.audit_head or 'none'})"
    )
    print(f"now start Credence with CREDENCE_DATABASE_URL={redact_url(url)}")
    return 0


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
