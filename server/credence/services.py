"""The long-lived objects one running service shares, built by one factory: ``open_services``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from credence.auth import KeyRing
from credence.clock import Clock, system_clock
from credence.db import make_store
from credence.db.engine import Database
from credence.embed import Embedder, make_embedder
from credence.memory.beliefs import BeliefHooks, BeliefService
from credence.memory.episodes import EpisodeService
from credence.notify.endpoints import EndpointPolicy, push_client
from credence.settings import Settings

if TYPE_CHECKING:
    from credence.memory.context import ContextService
    from credence.notify.runtime import PushRuntime
    from credence.reflection.engine import ReflectionRunner

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
    # Set by the parts that run inside the app: the context cache on first use, the push
    # runtime and the reflection runner while their components run.
    context: ContextService | None = None
    push_runtime: PushRuntime | None = None
    runner: ReflectionRunner | None = None
    # Push deliveries go through their own client: it dials only vetted public addresses.
    push_policy: EndpointPolicy = field(default_factory=EndpointPolicy)
    push_http: httpx.AsyncClient | None = None


@asynccontextmanager
async def open_services(
    settings: Settings,
    *,
    clock: Clock = system_clock,
    embedder: Embedder | None = None,
    push_policy: EndpointPolicy | None = None,
) -> AsyncIterator[Services]:
    """Open the store and build every shared object for ``settings``; close them all after.

    The app's lifespan, the CLI and the tests all build their ``Services`` here, so they are
    wired alike. ``embedder`` replaces the configured one (tests share a loaded model).
    """
    store = make_store(settings.database_url, settings.database_path)
    await store.open()
    async with AsyncExitStack() as stack:
        stack.push_async_callback(store.close)
        http = httpx.AsyncClient(timeout=httpx.Timeout(30.0), follow_redirects=False)
        stack.push_async_callback(http.aclose)
        policy = push_policy or EndpointPolicy()
        pinned = push_client(policy)
        stack.push_async_callback(pinned.aclose)
        chosen = embedder or make_embedder(
            settings.embed_url, settings.embed_model, settings.embed_api_key, client=http
        )
        hooks = BeliefHooks()
        yield Services(
            settings=settings,
            clock=clock,
            store=store,
            embedder=chosen,
            http=http,
            keyring=KeyRing(store),
            hooks=hooks,
            beliefs=BeliefService(store, chosen, clock, hooks),
            episodes=EpisodeService(store, chosen, clock),
            push_policy=policy,
            push_http=pinned,
        )
