"""The SQLite store, migrations and paging: the innermost layer.

Every SQL statement of Credence lives in this package, written once against
``engine.Connection`` for both engines (SQLite in ``store``, PostgreSQL in ``pgstore``).
Dependencies point inward: api → services → memory / reflection / notify → db. db imports only
the shared modules (files, settings), nothing that builds on it; tests/test_architecture.py
checks it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from credence.db.engine import Database


def make_store(database_url: str | None, sqlite_path: Path) -> Database:
    """The store for these settings: PostgreSQL at ``database_url``, else the SQLite file."""
    if database_url:
        from credence.db.pgstore import PostgresStore

        return PostgresStore(database_url)
    from credence.db.store import Store

    return Store(sqlite_path)
