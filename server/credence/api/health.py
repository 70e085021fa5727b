"""Liveness and readiness probes (no authentication)."""

from __future__ import annotations

from litestar import Request, get
from litestar.exceptions import HTTPException
from litestar.openapi.datastructures import ResponseSpec

from credence.api.errors import RETRY_AFTER_S
from credence.models import Health, Problem
from credence.observe.health import not_ready


@get("/healthz", operation_id="healthz", exclude_from_auth=True, tags=["health"])
async def healthz(request: Request) -> Health:
    """The process is up and serving, with the schema version its store is at."""
    services = getattr(request.app.state, "services", None)
    version = services.store.schema_version if services is not None else None
    return Health(status="ok", schema_version=version)


@get(
    "/readyz",
    operation_id="readyz",
    exclude_from_auth=True,
    tags=["health"],
    responses={
        503: ResponseSpec(
            data_container=Problem,
            description="Store not writable or migrations missing",
            generate_examples=False,
        )
    },
)
async def readyz(request: Request) -> Health:
    """The store is writable and every migration is applied."""
    # While the database is away this is a 503 with Retry-After within the store's short
    # connection wait, so a load balancer takes the replica out until it has reconnected.
    store = request.app.state.services.store
    reason = await not_ready(store)
    if reason is not None:
        raise HTTPException(
            status_code=503, detail=reason, headers={"Retry-After": str(RETRY_AFTER_S)}
        )
    return Health(status="ready", schema_version=store.schema_version)
