"""A raw connection to a test server's database, of either engine, bypassing the app."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from credence.db.engine import to_pyformat
from credence.settings import Settings

# What the database raises when a trigger or constraint refuses a statement.
REFUSED = (sqlite3.IntegrityError, psycopg.errors.IntegrityError)


class RawDb:
    """``execute`` runs one statement (``?`` placeholders) in its own committed transaction."""

    def __init__(self, conn: sqlite3.Connection | psycopg.Connection[Any]) -> None:
        self.conn = conn
        self.dialect = "sqlite" if isinstance(conn, sqlite3.Connection) else "postgresql"

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        """Run one statement and commit it."""
        if isinstance(self.conn, sqlite3.Connection):
            self.conn.execute(sql, params)
            self.conn.commit()
        else:
            self.conn.execute(to_pyformat(sql), params)

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Every row of one query, as tuples."""
        if isinstance(self.conn, sqlite3.Connection):
            return self.conn.execute(sql, params).fetchall()
        return [tuple(row) for row in self.conn.execute(to_pyformat(sql), params).fetchall()]

    def dump(self) -> str:
        """Every row of every table as text (to prove a secret is stored nowhere)."""
        if isinstance(self.conn, sqlite3.Connection):
            return "\n".join(self.conn.iterdump())
        tables = self.conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
        return "\n".join(
            str(row[0])
            for (table,) in tables
            for row in self.conn.execute(f'SELECT t::text FROM "{table}" t').fetchall()
        )


@contextmanager
def raw_db(settings: Settings) -> Iterator[RawDb]:
    """A raw connection to the database ``settings`` name (SQLite file or PostgreSQL URL)."""
    if settings.database_url:
        with psycopg.connect(settings.database_url, autocommit=True) as pg:
            yield RawDb(pg)
        return
    conn = sqlite3.connect(settings.database_path)
    try:
        yield RawDb(conn)
    finally:
        conn.close()
