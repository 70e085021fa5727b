"""The long-lived objects one running service shares, built once in the app's lifespan."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import httpx

from credence.auth import KeyRing
from credence.clock import Clock
from credence.db.engine import Database
from credence.embed import Embedder
from credence.memory.beliefs import BeliefHooks, BeliefService
from credence.memory.episodes import EpisodeService
from credence.notify.endpoints import EndpointPolicy
from credence.settings import Settings

# A component is started with the services and stopped when the app shuts down.
Component = Callable[["Services"], AbstractAsyncContextManager[Any]]


@dataclass
class Services:
    """Store, embedder, HTTP client and the memory services, shared by every request."""

    settings: Settings
    clock: Clock
    store: Database
    embedder: Embedder
    http: httpx.AsyncClient
    keyring: KeyRing
    hooks: BeliefHooks
    beliefs: BeliefService
    episodes: EpisodeService
    extras: dict[str, Any] = field(default_factory=dict)
    # Push deliveries go through their own client: it dials only vetted public addresses.
    push_policy: EndpointPolicy = field(default_factory=EndpointPolicy)
    push_http: httpx.AsyncClient | None = None
