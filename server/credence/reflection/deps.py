"""What the reflection job and its runner use, handed in by the composition root."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from credence.clock import Clock
from credence.db.engine import Database
from credence.embed import Embedder
from credence.memory.lifecycle.beliefs import BeliefHooks, BeliefService
from credence.settings import Settings


@dataclass(frozen=True)
class ReflectionDeps:
    """The store, embedder, clock, HTTP client, settings and belief service a job runs on."""

    settings: Settings
    clock: Clock
    store: Database
    embedder: Embedder
    http: httpx.AsyncClient
    hooks: BeliefHooks
    beliefs: BeliefService

    def beliefs_at(self, clock: Clock) -> BeliefService:
        """The proposals logic reading ``clock``: the shared service unless a job pins its own."""
        if clock is self.clock:
            return self.beliefs
        return BeliefService(self.store, self.embedder, clock, self.hooks, judge=self.beliefs.judge)
