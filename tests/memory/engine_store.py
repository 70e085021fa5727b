"""Stores of either engine for the read-path tests (recall, context, retrieval)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import pytest

from credence.db import make_store
from credence.db.engine import Database
from credence.embed import Embedder
from credence.services import Services, open_services
from credence.settings import Settings


def engines() -> list[str]:
    """The engines to run on: both unless ``CREDENCE_TEST_ENGINES`` narrows them."""
    wanted = os.environ.get("CREDENCE_TEST_ENGINES", "sqlite,postgresql").split(",")
    return [e for e in ("sqlite", "postgresql") if e in wanted] or ["sqlite"]


def url_for(request: pytest.FixtureRequest, engine: str) -> str | None:
    """None for SQLite; else a fresh migrated PostgreSQL database of this test."""
    return None if engine == "sqlite" else request.getfixturevalue("pg_migrated_url")


@asynccontextmanager
async def opened_store(url: str | None, data_dir: Path) -> AsyncIterator[Database]:
    """An open store (PostgreSQL at ``url``, else SQLite in ``data_dir``), closed after."""
    data_dir.mkdir(parents=True, exist_ok=True)
    store = make_store(url, data_dir / "credence.sqlite3")
    await store.open()
    try:
        yield store
    finally:
        await store.close()


@asynccontextmanager
async def engine_services(
    url: str | None, data_dir: Path, embedder: Embedder, clock: Callable[[], datetime]
) -> AsyncIterator[Services]:
    """Services wired as the app wires them, on the store of one engine; closed after."""
    settings = Settings(data_dir=data_dir, database_url=url, scheduler=False)
    async with open_services(settings, clock=clock, embedder=embedder) as services:
        yield services
