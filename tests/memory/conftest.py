"""Shared fixtures for the memory tests: the real embedder and Services built on a real store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from credence.auth import KeyRing
from credence.db.store import Store
from credence.embed import WordLlamaEmbedder
from credence.memory.beliefs import BeliefHooks, BeliefService
from credence.memory.episodes import EpisodeService
from credence.services import Services
from credence.settings import Settings


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    """The bundled default embedder, loaded once per module."""
    loaded = WordLlamaEmbedder()
    loaded.load()
    return loaded


@asynccontextmanager
async def built_services(
    data_dir: Path, embedder: WordLlamaEmbedder, clock: Callable[[], datetime]
) -> AsyncIterator[Services]:
    """Services on a fresh SQLite file in ``data_dir``, as the app wires them; closed after."""
    store = Store(data_dir / "credence.sqlite3")
    await store.open()
    hooks = BeliefHooks()
    try:
        async with httpx.AsyncClient() as http:
            yield Services(
                settings=Settings(data_dir=data_dir, scheduler=False),
                clock=clock,
                store=store,
                embedder=embedder,
                http=http,
                keyring=KeyRing(store),
                hooks=hooks,
                beliefs=BeliefService(store, embedder, clock, hooks),
                episodes=EpisodeService(store, embedder, clock),
            )
    finally:
        await store.close()
