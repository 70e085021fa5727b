"""create_app(settings) -> Litestar: routers, lifespan, auth, OpenAPI and the PWA."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import httpx
from litestar import Litestar, Router, get
from litestar.datastructures import CacheControlHeader
from litestar.exceptions import HTTPException, NotFoundException
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme, Server
from litestar.static_files import create_static_files_router

from credence import __version__
from credence.api import admin, agents, beliefs, context, episodes, health, pair, push
from credence.api import events as events_api
from credence.api import jobs as jobs_api
from credence.api import search as search_api
from credence.api import wakes as wakes_api
from credence.api.errors import (
    http_exception_handler,
    too_deep_handler,
    unexpected_exception_handler,
)
from credence.api.security import (
    add_security_headers,
    conditional_get_middleware,
    options_middleware,
)
from credence.api.strict import strict_request
from credence.auth import BearerAuth, KeyRing
from credence.clock import Clock, system_clock
from credence.db.store import Store
from credence.embed import Embedder, make_embedder
from credence.memory.beliefs import BeliefHooks, BeliefService
from credence.memory.context import context_component
from credence.memory.episodes import EpisodeService
from credence.notify.worker import push_component
from credence.openapi_doc import cached_openapi_dict
from credence.ratelimit import RateLimiter, RateLimitMiddleware
from credence.reflection.engine import reflection_component
from credence.services import Component, Services
from credence.settings import Settings

log = logging.getLogger("credence")
API_PREFIX = "/api/v1"
PWA_DIR = Path(__file__).resolve().parent.parent.parent / "pwa"


def api_handlers() -> list:
    """Every route handler under /api/v1."""
    return [
        agents.AgentController,
        episodes.EpisodeController,
        beliefs.BeliefController,
        admin.KeyController,
        admin.create_pairing_code,
        admin.verify_audit,
        admin.who_am_i,
        pair.pair,
        jobs_api.JobController,
        search_api.SearchController,
        events_api.post_event,
        wakes_api.WakeController,
        context.ContextController,
        push.PushController,
        push.PushChannelController,
        push.apply_action,
    ]


@get(
    "/openapi.json",
    operation_id="getOpenapi",
    exclude_from_auth=True,
    include_in_schema=False,
    media_type="application/json",
)
async def openapi_json() -> dict:
    """The OpenAPI document (the same one committed as openapi.yaml)."""
    return cached_openapi_dict()


def default_components() -> list[Component]:
    """Background parts started with the app (push delivery, scheduler, …)."""
    return [context_component(), push_component(), reflection_component()]


def create_app(
    settings: Settings,
    *,
    clock: Clock = system_clock,
    embedder: Embedder | None = None,
    components: Sequence[Component] | None = None,
    pwa_dir: Path | None = None,
) -> Litestar:
    """Build the Credence ASGI app; the store opens in the lifespan, not at import."""
    chosen_components = list(default_components() if components is None else components)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        store = Store(settings.database_path)
        await store.open()
        stack = AsyncExitStack()
        try:
            stack.push_async_callback(store.close)
            http = httpx.AsyncClient(timeout=httpx.Timeout(30.0), follow_redirects=False)
            stack.push_async_callback(http.aclose)
            chosen = embedder or make_embedder(
                settings.embed_url, settings.embed_model, settings.embed_api_key, client=http
            )
            hooks = BeliefHooks()
            services = Services(
                settings=settings,
                clock=clock,
                store=store,
                embedder=chosen,
                http=http,
                keyring=KeyRing(store),
                hooks=hooks,
                beliefs=BeliefService(store, chosen, clock, hooks),
                episodes=EpisodeService(store, chosen, clock),
            )
            app.state.services = services
            app.state.keyring = services.keyring
            for component in chosen_components:
                await stack.enter_async_context(component(services))
            yield
        finally:
            # Shutdown may arrive inside a cancelled scope (Ctrl-C): drain components and close
            # the store regardless, so no write is cut off and the WAL is checkpointed.
            with anyio.CancelScope(shield=True):
                await stack.aclose()

    route_handlers: list = [
        health.healthz,
        health.readyz,
        Router(
            path=API_PREFIX,
            route_handlers=[*api_handlers(), openapi_json],
            middleware=[
                DefineMiddleware(BearerAuth),
                RateLimitMiddleware(RateLimiter.from_settings(settings)),
            ],
        ),
    ]
    static_dir = pwa_dir or settings.pwa_dir or PWA_DIR
    if static_dir.is_dir():
        route_handlers.append(
            create_static_files_router(
                path="/",
                directories=[static_dir],
                html_mode=True,
                include_in_schema=False,
                name="pwa",
                # Revalidate on every load (304s via ETag), so a new version shows at once.
                cache_control=CacheControlHeader(no_cache=True),
                middleware=[conditional_get_middleware],
            )
        )

    return Litestar(
        route_handlers=route_handlers,
        lifespan=[lifespan],
        middleware=[options_middleware],
        exception_handlers={
            HTTPException: http_exception_handler,
            RecursionError: too_deep_handler,
            Exception: unexpected_exception_handler,
        },
        openapi_config=openapi_config(),
        request_max_body_size=settings.max_body_bytes,
        before_request=strict_request,
        before_send=[add_security_headers],
        debug=False,
    )


def _not_served(*_: object) -> None:
    """Litestar's own schema routes stay dark: /api/v1/openapi.json serves the exact document."""
    raise NotFoundException("the OpenAPI document is at /api/v1/openapi.json")


def openapi_config() -> OpenAPIConfig:
    """The OpenAPI document the contract test compares with openapi.yaml."""
    return OpenAPIConfig(
        title="Credence",
        version=__version__,
        description=(
            "Memory review for AI agents: agents post episodes, reflection proposes beliefs,"
            " a human keeps, forgets or edits them, and agents read kept memory back."
        ),
        servers=[Server(url="/")],
        components=Components(
            security_schemes={
                "BearerToken": SecurityScheme(
                    type="http", scheme="bearer", description="A Credence API key (crd_…)"
                )
            }
        ),
        security=[{"BearerToken": []}],
        use_handler_docstrings=True,
        path="/schema",
        render_plugins=[],
        openapi_router=Router(path="/schema", route_handlers=[], guards=[_not_served]),
    )
