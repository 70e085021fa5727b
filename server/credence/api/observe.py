"""Operations at the edge: log configuration, request metrics and spans, and GET /metrics."""

from __future__ import annotations

import hmac
import ipaddress
import time
from typing import Any

from litestar import Request, Response, get
from litestar.enums import ScopeType
from litestar.exceptions import HTTPException
from litestar.logging import LoggingConfig
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from credence.errors import DomainError, StoreUnavailable, status_of
from credence.logs import FORMAT, OutageFilter, formatter_class
from credence.observe import metrics, tracing
from credence.settings import Settings

PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"
# Requests the router matched no route for share one label, so scanners cannot grow the series.
UNMATCHED = "unmatched"


def logging_config(settings: Settings) -> LoggingConfig:
    """Litestar's logging: escaped text (or JSON) lines, no tracebacks for database outages."""
    handler = {"level": "DEBUG", "formatter": "standard", "filters": ["outage"]}
    return LoggingConfig(
        formatters={"standard": {"()": formatter_class(settings.log_format), "fmt": FORMAT}},
        filters={"outage": {"()": OutageFilter}},
        handlers={
            "console": {"class": "logging.StreamHandler", **handler},
            "queue_listener": {
                "class": "litestar.logging.standard.QueueListenerHandler",
                **handler,
            },
        },
        root={"handlers": ["queue_listener"], "level": settings.log_level.upper()},
    )


class ObserveMiddleware(ASGIMiddleware):
    """Counts and times each request by route template and status, inside one server span."""

    scopes = (ScopeType.HTTP,)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        """Run the request, then record its route, status and duration."""
        route = scope.get("path_template") or UNMATCHED
        method = str(scope.get("method", "GET"))
        status = 500
        started = time.perf_counter()

        async def observed_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        with tracing.request_span(method, route) as span:
            try:
                await next_app(scope, receive, observed_send)
            except Exception as exc:
                # The app's exception handlers answer outside this middleware: the status they
                # will send is the one the error maps to.
                status = _status_of(exc)
                raise
            finally:
                metrics.observe_request(method, route, status, time.perf_counter() - started)
                tracing.end_request(span, status)


def _status_of(exc: Exception) -> int:
    if isinstance(exc, HTTPException):
        return exc.status_code
    if isinstance(exc, DomainError):
        return status_of(exc)
    if isinstance(exc, StoreUnavailable):
        return 503
    return 400 if isinstance(exc, RecursionError) else 500


def _loopback(request: Request) -> bool:
    client = request.client
    if client is None:
        return False
    try:
        return ipaddress.ip_address(client.host).is_loopback
    except ValueError:
        return False


def _authorised(request: Request, token: str | None) -> bool:
    if not token:
        return _loopback(request)
    given = request.headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip(), token)


@get(
    "/metrics",
    operation_id="metrics",
    exclude_from_auth=True,
    include_in_schema=False,
    media_type=PROMETHEUS_TEXT,
)
async def metrics_endpoint(request: Request) -> Response[Any]:
    """Prometheus text: this replica's process metrics and the database-wide gauges."""
    settings: Settings = request.app.state.services.settings
    if not settings.metrics:
        return Response(b"metrics are off (CREDENCE_METRICS=on)\n", status_code=404)
    if not _authorised(request, settings.metrics_token):
        headers = {"WWW-Authenticate": "Bearer"} if settings.metrics_token else None
        return Response(b"not allowed\n", status_code=401 if headers else 403, headers=headers)
    services = request.app.state.services
    await metrics.DATABASE.refresh(services.store, services.clock())
    return Response(metrics.render(services.store), media_type=PROMETHEUS_TEXT)
