"""The readiness probe's store checks: the database takes writes and has every migration."""

from __future__ import annotations

from credence.db.engine import Connection, Dialect


async def check_writable(conn: Connection) -> bool:
    """True when this connection's transaction may write (run inside ``store.write``).

    SQLite touches a row, which proves the file and its WAL are writable. PostgreSQL asks the
    server instead, so a load balancer polling every replica writes no WAL and takes no row
    lock; a read-only standby (or a primary in recovery) answers False.
    """
    if conn.dialect == "postgresql":
        row = await conn.one("SELECT current_setting('transaction_read_only') AS read_only")
        return row is not None and row["read_only"] == "off"
    await conn.run("UPDATE store_state SET value = value WHERE name = 'key_changes'")
    return True


def latest_schema_version(dialect: Dialect) -> int:
    """The highest migration number this Credence ships for ``dialect``."""
    if dialect == "postgresql":
        from credence.db import pg_migrate

        return max(migration.version for migration in pg_migrate.migrations())
    from credence.db.store import migrations

    return migrations()[-1][0]
