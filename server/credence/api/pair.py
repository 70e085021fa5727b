"""Pairing: a phone exchanges a one-time code for its own reviewer key."""

from __future__ import annotations

from litestar import Request, post
from litestar.params import JSONBody

from credence.access.pairing import redeem_pairing_code
from credence.api.deps import SharedServices
from credence.api.errors import errors
from credence.models import ApiKey, ApiKeyCreated, PairIn


@post(
    "/pair",
    operation_id="pairDevice",
    status_code=201,
    exclude_from_auth=True,
    tags=["auth"],
    responses=errors(410),
)
async def pair(request: Request, services: SharedServices, data: JSONBody[PairIn]) -> ApiKeyCreated:
    """Redeem a pairing code once for a reviewer key (shown only in this response)."""

    async def work(conn):
        return await redeem_pairing_code(conn, data.code, services.clock)

    secret, row = await services.store.write(work)
    services.keyring.forget_cached()
    return ApiKeyCreated(key=secret, info=ApiKey(**row))
