"""create_app(settings) -> Litestar: routers, lifespan, auth, OpenAPI and the PWA."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from litestar import Litestar, Router, get
from litestar.config.compression import CompressionConfig
from litestar.datastructures import CacheControlHeader
from litestar.exceptions import HTTPException, NotFoundException
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme, Server
from litestar.static_files import create_static_files_router

from credence import __version__
from credence.api import admin, agents, beliefs, context, episodes, health, pair, push
from credence.api import events as events_api
from credence.api import instructions as instructions_api
from credence.api import jobs as jobs_api
from credence.api import report as report_api
from credence.api import reviewers as reviewers_api
from credence.api import search as search_api
from credence.api import wakes as wakes_api
from credence.api.auth import BearerAuth
from credence.api.deps import DEPENDENCIES
from credence.api.errors import (
    domain_error_handler,
    http_exception_handler,
    store_unavailable_handler,
    too_deep_handler,
    unexpected_exception_handler,
)
from credence.api.hardening import body_deadline, refuse_control_characters
from credence.api.mcp import McpMount
from credence.api.observe import ObserveMiddleware, logging_config, metrics_endpoint
from credence.api.ratelimit import RateLimitMiddleware
from credence.api.security import (
    add_security_headers,
    conditional_get_middleware,
    options_middleware,
    pwa_assets_only,
)
from credence.api.strict import strict_request
from credence.clock import Clock, system_clock
from credence.components import backfill_component, context_component, push_component
from credence.embed import Embedder
from credence.errors import DomainError, StoreUnavailable
from credence.files import warn_if_exposed
from credence.logs import quiet_noisy_loggers
from credence.memory.lifecycle.report import week_report
from credence.notify.endpoints import Resolver, policy_from
from credence.notify.tokens import SECRET_FILENAME
from credence.notify.vapid import VAPID_KEY_FILENAME
from credence.observe import metrics, tracing
from credence.openapi_doc import openapi_dict
from credence.ratelimit import RateLimiter
from credence.reflection.engine import reflection_component
from credence.services import Component, open_services
from credence.settings import Settings, SettingsError

log = logging.getLogger("credence")
API_PREFIX = "/api/v1"
# A built wheel carries the review app inside the package (setup.py copies pwa/ there); a
# source checkout serves the top-level pwa/ it was built from.
PACKAGED_PWA_DIR = Path(__file__).resolve().parent / "pwa"
CHECKOUT_PWA_DIR = Path(__file__).resolve().parent.parent.parent / "pwa"
PWA_DIR = PACKAGED_PWA_DIR if PACKAGED_PWA_DIR.is_dir() else CHECKOUT_PWA_DIR


class _OwnRouter(Router):
    """A router built inside one ``create_app`` call and registered once.

    Litestar deep-copies every Router it registers, in case one is shared between apps; this
    one never is, and copying the whole API tree was a fifth of building the app.
    """

    def __deepcopy__(self, memo: dict[int, object]) -> _OwnRouter:
        return self


def api_handlers() -> list:
    """Every route handler under /api/v1."""
    return [
        agents.AgentController,
        episodes.EpisodeController,
        beliefs.BeliefController,
        admin.KeyController,
        admin.create_pairing_code,
        admin.verify_audit,
        admin.embeddings,
        admin.who_am_i,
        pair.pair,
        jobs_api.JobController,
        search_api.SearchController,
        events_api.post_event,
        wakes_api.WakeController,
        context.ContextController,
        instructions_api.InstructionsController,
        push.PushController,
        push.PushChannelController,
        push.apply_action,
        push.apply_ntfy_action,
        *reviewers_api.HANDLERS,
        report_api.ReportController,
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
    return openapi_document()


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The OpenAPI document, built once per process from an app that opens no store."""
    return openapi_dict(create_app(Settings(data_dir=Path("/nonexistent")), components=[]))


def private_paths(settings: Settings) -> list[Path]:
    """The data dir itself and its files that hold secrets: the database (-wal, -shm), the keys.

    A data dir made before the first start keeps its mode (often 0755): it is named too.
    """
    database = settings.database_path
    return [
        settings.data_dir,
        database,
        database.with_name(f"{database.name}-wal"),
        database.with_name(f"{database.name}-shm"),
        settings.data_dir / VAPID_KEY_FILENAME,
        settings.data_dir / SECRET_FILENAME,
    ]


def default_components() -> list[Component]:
    """Background parts started with the app (push delivery, scheduler, …)."""
    return [
        context_component(),
        push_component(weekly_figures=week_report),
        reflection_component(),
        backfill_component(),
    ]


def create_app(
    settings: Settings,
    *,
    clock: Clock = system_clock,
    embedder: Embedder | None = None,
    components: Sequence[Component] | None = None,
    pwa_dir: Path | None = None,
    resolver: Resolver | None = None,
) -> Litestar:
    """Build the Credence ASGI app; the store opens in the lifespan, not at import.

    ``resolver`` replaces DNS for push endpoints (tests); the system resolver by default.
    """
    chosen_components = list(default_components() if components is None else components)
    limiter = RateLimiter.from_settings(settings)
    mcp = McpMount(settings.max_body_bytes)
    quiet_noisy_loggers()
    tracing.setup()
    try:
        push_policy = policy_from(settings, resolver)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        stack = AsyncExitStack()
        try:
            services = await stack.enter_async_context(
                open_services(settings, clock=clock, embedder=embedder, push_policy=push_policy)
            )
            app.state.services = services
            metrics.enable(settings.metrics)
            app.state.keyring = services.keyring
            for component in chosen_components:
                await stack.enter_async_context(component(services))
            warn_if_exposed(private_paths(settings))
            yield
        finally:
            # Shutdown may arrive inside a cancelled scope (Ctrl-C): drain components and close
            # the store regardless, so no write is cut off and the WAL is checkpointed.
            with anyio.CancelScope(shield=True):
                await stack.aclose()

    route_handlers: list = [
        health.healthz,
        health.readyz,
        metrics_endpoint,
        _OwnRouter(
            path=API_PREFIX,
            route_handlers=[*api_handlers(), openapi_json],
            middleware=[
                DefineMiddleware(BearerAuth),
                RateLimitMiddleware(limiter),
            ],
        ),
        mcp.handler(limiter),
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
                middleware=[pwa_assets_only, conditional_get_middleware],
            )
        )

    return Litestar(
        route_handlers=route_handlers,
        dependencies=DEPENDENCIES,
        # The MCP session manager's task group starts after the services and stops before them.
        lifespan=[lifespan, lambda _: mcp.sessions.run()],
        middleware=[
            ObserveMiddleware(),
            refuse_control_characters,
            body_deadline(settings.request_timeout_s),
            options_middleware,
        ],
        logging_config=logging_config(settings),
        exception_handlers={
            HTTPException: http_exception_handler,
            RecursionError: too_deep_handler,
            DomainError: domain_error_handler,
            StoreUnavailable: store_unavailable_handler,
            Exception: unexpected_exception_handler,
        },
        openapi_config=openapi_config(),
        request_max_body_size=settings.max_body_bytes,
        before_request=strict_request,
        before_send=[add_security_headers],
        # The PWA's text files go out gzipped; API answers (and streams) stay as they are.
        compression_config=CompressionConfig(
            backend="gzip", gzip_compress_level=6, exclude=["^/api/", "^/mcp"]
        ),
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
