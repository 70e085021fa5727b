"""Shared fixtures for the memory tests: the real embedder and Services built on a real store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import pytest

from credence.memory.semantics.model import MiniLMEmbedder
from credence.services import Services, open_services
from credence.settings import Settings


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    """The bundled default embedder, loaded once per module."""
    loaded = MiniLMEmbedder()
    loaded.load()
    return loaded


@asynccontextmanager
async def built_services(
    data_dir: Path, embedder: MiniLMEmbedder, clock: Callable[[], datetime]
) -> AsyncIterator[Services]:
    """Services on a fresh SQLite file in ``data_dir``, as the app wires them; closed after."""
    settings = Settings(data_dir=data_dir, scheduler=False)
    async with open_services(settings, clock=clock, embedder=embedder) as services:
        yield services
