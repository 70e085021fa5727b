"""The long-lived objects one running service shares, built by one factory: ``open_services``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from credence.access.keys import KeyRing
from credence.clock import Clock, system_clock
from credence.db import make_store
from credence.db.engine import Database
from credence.embed import Embedder
from credence.memory.ingest.episodes import EpisodeService
from credence.memory.lifecycle.beliefs import BeliefHooks, BeliefService
from credence.memory.read.context import ContextService, new_context_service
from credence.memory.semantics.embedders import make_embedder
from credence.memory.semantics.judge import JUDGE_TIMEOUT_S, LLMJudge
from credence.memory.semantics.model import limit_blas_threads
from credence.notify.endpoints import EndpointPolicy, push_client
from credence.notify.runtime import PushParts
from credence.reflection.deps import ReflectionDeps
from credence.settings import Settings
from credence.tls import tls_context

if TYPE_CHECKING:
    from credence.memory.semantics.backfill import Backfill
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
    # The read path's hot cache, invalidated by every belief change.
    context: ContextService
    # Push's parts; its deliveries go through their own client, which dials only vetted
    # public addresses.
    push: PushParts
    # Set by the app's components while they run: the reflection runner and the backfill.
    runner: ReflectionRunner | None = None
    backfill: Backfill | None = None

    @property
    def reflection(self) -> ReflectionDeps:
        """What the reflection job and its runner use, and nothing else."""
        return ReflectionDeps(
            settings=self.settings,
            clock=self.clock,
            store=self.store,
            embedder=self.embedder,
            http=self.http,
            hooks=self.hooks,
            beliefs=self.beliefs,
        )


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
    limit_blas_threads()
    store = make_store(settings.database_url, settings.database_path)
    await store.open()
    async with AsyncExitStack() as stack:
        stack.push_async_callback(store.close)
        http = httpx.AsyncClient(
            timeout=httpx.Timeout(30.0), follow_redirects=False, verify=tls_context()
        )
        stack.push_async_callback(http.aclose)
        policy = push_policy or EndpointPolicy()
        pinned = push_client(policy)
        stack.push_async_callback(pinned.aclose)
        chosen = embedder or make_embedder(
            settings.embed_url, settings.embed_model, settings.embed_api_key, client=http
        )
        hooks = BeliefHooks()
        context = new_context_service(store, chosen, clock)
        hooks.after_change.append(context.invalidate)
        yield Services(
            settings=settings,
            clock=clock,
            store=store,
            embedder=chosen,
            http=http,
            keyring=KeyRing(store),
            hooks=hooks,
            beliefs=BeliefService(store, chosen, clock, hooks, judge=_judge(settings, http)),
            episodes=EpisodeService(
                store, chosen, clock, quota_bytes=settings.episode_quota_mb * 1024 * 1024
            ),
            context=context,
            push=PushParts(settings, store, pinned, policy),
        )


def _judge(settings: Settings, http: httpx.AsyncClient) -> LLMJudge | None:
    """The gate's LLM judge when CREDENCE_GATE_JUDGE is on and an LLM endpoint is set."""
    if not (settings.gate_judge and settings.llm_url and settings.llm_model):
        return None
    return LLMJudge(
        http,
        settings.llm_url,
        settings.llm_model,
        api_key=settings.llm_api_key,
        timeout_s=min(settings.llm_timeout_s, JUDGE_TIMEOUT_S),
    )
