"""Admin: API keys, pairing codes and audit-chain verification; plus the caller's own identity."""

from __future__ import annotations

from litestar import Controller, Request, get, post
from litestar.params import JSONBody

from credence.access import keys as access_keys
from credence.access.pairing import create_pairing_code as mint_pairing_code
from credence.access.principal import admin_only
from credence.api.deps import SharedServices, principal_of
from credence.api.errors import errors
from credence.api.params import KeyIdPath
from credence.memory import audit
from credence.models import (
    ApiKey,
    ApiKeyCreated,
    ApiKeyPage,
    AuditVerification,
    KeyIn,
    Me,
    PairingCode,
    PairingCodeIn,
)


class KeyController(Controller):
    """/api/v1/keys (admin)"""

    path = "/keys"
    tags = ["admin"]
    guards = [admin_only]

    @post(operation_id="createKey", status_code=201, responses=errors(403, 404, 422))
    async def create(
        self, request: Request, services: SharedServices, data: JSONBody[KeyIn]
    ) -> ApiKeyCreated:
        """Create a key; the secret is in this response only."""

        async def work(conn):
            return await access_keys.create_key(
                conn, scope=data.scope, agents=data.agents, label=data.label, clock=services.clock
            )

        secret, row = await services.store.write(work)
        services.keyring.forget_cached()
        return ApiKeyCreated(key=secret, info=ApiKey(**row))

    @get(operation_id="listKeys", responses=errors(403))
    async def list_keys(self, request: Request, services: SharedServices) -> ApiKeyPage:
        """Every key's metadata (never the secrets)."""
        rows = await access_keys.list_keys(services.store)
        return ApiKeyPage(items=[ApiKey(**row) for row in rows])

    @post(
        "/{key_id:str}/revoke",
        operation_id="revokeKey",
        status_code=200,
        responses=errors(403, 404),
    )
    async def revoke(self, request: Request, services: SharedServices, key_id: KeyIdPath) -> ApiKey:
        """Revoke a key at once (other replicas refuse it within a second)."""
        row = await access_keys.revoke_key(services.store, key_id, services.clock)
        services.keyring.forget_cached()
        return ApiKey(**row)


@post(
    "/pairing-codes",
    operation_id="createPairingCode",
    status_code=201,
    guards=[admin_only],
    tags=["admin"],
    responses=errors(403, 404, 422),
)
async def create_pairing_code(
    request: Request, services: SharedServices, data: JSONBody[PairingCodeIn]
) -> PairingCode:
    """A one-time code (10 minutes) that a phone exchanges for a reviewer key."""

    async def work(conn):
        return await mint_pairing_code(
            conn, agents=data.agents, label=data.label, clock=services.clock
        )

    code, expires_at = await services.store.write(work)
    return PairingCode(
        code=code, url=f"{services.settings.base_url}/?pair={code}", expires_at=expires_at
    )


@get(
    "/audit/verify",
    operation_id="verifyAudit",
    guards=[admin_only],
    tags=["admin"],
    responses=errors(403),
)
async def verify_audit(request: Request, services: SharedServices) -> AuditVerification:
    """Walk the whole audit chain and report the first broken link, if any."""
    ok, rows, first_broken = await audit.verify(services.store)
    return AuditVerification(ok=ok, rows=rows, first_broken=first_broken)


@get("/me", operation_id="whoAmI", tags=["auth"], responses=errors())
async def who_am_i(request: Request) -> Me:
    """The calling key's scope and agents."""
    principal = principal_of(request)
    return Me(
        key_id=principal.key_id,
        scope=principal.scope,
        agents=sorted(principal.agents) if principal.agents is not None else None,
        label=principal.label,
    )
