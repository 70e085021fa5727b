"""An open store of each test's engine; the PostgreSQL fixtures live in tests/conftest.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from credence.db import make_store
from credence.db.engine import Database


@pytest.fixture
async def store(tmp_path: Path, database_url: str | None) -> AsyncIterator[Database]:
    """A migrated, open store of the test's engine (a module may define its own instead)."""
    opened = make_store(database_url, tmp_path / "credence.sqlite3")
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()
