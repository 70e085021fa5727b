"""Liveness and readiness probes (no authentication)."""

from __future__ import annotations

from litestar import Request, get
from litestar.exceptions import HTTPException
from litestar.openapi.datastructures import ResponseSpec

from credence.api.errors import RETRY_AFTER_S
from credence.db.health import check_writable, latest_schema_version
from credence.models import Health, Problem


@get("/healthz", operation_id="healthz", exclude_from_auth=True, tags=["health"])
async def healthz() -> Health:
    """The process is up and serving."""
    return Health(status="ok")


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
    retry = {"Retry-After": str(RETRY_AFTER_S)}
    try:
        writable = await store.write(check_writable)
    except Exception as exc:  # any failure means not ready; never a 500 from the probe
        raise HTTPException(
            status_code=503, detail=f"store not writable: {exc}", headers=retry
        ) from None
    if not writable:
        raise HTTPException(
            status_code=503, detail="store not writable: the database is read-only", headers=retry
        )
    if store.schema_version != latest_schema_version(store.dialect):
        raise HTTPException(status_code=503, detail="migrations not applied", headers=retry)
    return Health(status="ready", schema_version=store.schema_version)
