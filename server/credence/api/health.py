"""Liveness and readiness probes (no authentication)."""

from __future__ import annotations

from litestar import Request, get
from litestar.exceptions import HTTPException
from litestar.openapi.datastructures import ResponseSpec

from credence.db import state
from credence.db.store import migrations
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
    store = request.app.state.services.store
    try:
        await store.write(state.touch)
    except Exception as exc:
        raise HTTPException(status_code=503, detail=f"store not writable: {exc}") from None
    if store.schema_version != migrations()[-1][0]:
        raise HTTPException(status_code=503, detail="migrations not applied")
    return Health(status="ready", schema_version=store.schema_version)
