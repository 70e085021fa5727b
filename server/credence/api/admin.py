"""Admin: API keys, pairing codes and audit-chain verification; plus the caller's own identity."""

from __future__ import annotations

from litestar import Controller, Request, get, post
from litestar.exceptions import ClientException, NotFoundException
from litestar.params import JSONBody

from credence.api.deps import principal_of, services_of
from credence.api.errors import errors
from credence.api.params import KeyIdPath
from credence.auth import admin_only, insert_key, insert_pairing_code, key_row
from credence.clock import rfc3339
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
    async def create(self, request: Request, data: JSONBody[KeyIn]) -> ApiKeyCreated:
        """Create a key; the secret is in this response only."""
        services = services_of(request)

        async def work(conn):
            return await insert_key(
                conn, scope=data.scope, agents=data.agents, label=data.label, clock=services.clock
            )

        try:
            secret, row = await services.store.write(work)
        except ValueError as exc:
            raise ClientException(status_code=422, detail=str(exc)) from None
        except LookupError as exc:
            raise NotFoundException(str(exc)) from None
        services.keyring.forget_cached()
        return ApiKeyCreated(key=secret, info=ApiKey(**row))

    @get(operation_id="listKeys", responses=errors(403))
    async def list_keys(self, request: Request) -> ApiKeyPage:
        """Every key's metadata (never the secrets)."""
        rows = await services_of(request).store.fetchall("SELECT * FROM api_keys ORDER BY id")
        return ApiKeyPage(items=[ApiKey(**key_row(r)) for r in rows])

    @post(
        "/{key_id:str}/revoke",
        operation_id="revokeKey",
        status_code=200,
        responses=errors(403, 404),
    )
    async def revoke(self, request: Request, key_id: KeyIdPath) -> ApiKey:
        """Revoke a key at once (other processes notice within seconds)."""
        services = services_of(request)
        now = rfc3339(services.clock())

        async def work(conn):
            await conn.execute(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?",
                (now, key_id),
            )
            await conn.execute(
                "UPDATE store_state SET value = value + 1 WHERE name = 'key_changes'"
            )
            async with conn.execute("SELECT * FROM api_keys WHERE id = ?", (key_id,)) as cur:
                return await cur.fetchone()

        row = await services.store.write(work)
        if row is None:
            raise NotFoundException(f"key {key_id!r} not found")
        services.keyring.forget_cached()
        return ApiKey(**key_row(row))


@post(
    "/pairing-codes",
    operation_id="createPairingCode",
    status_code=201,
    guards=[admin_only],
    tags=["admin"],
    responses=errors(403, 404, 422),
)
async def create_pairing_code(request: Request, data: JSONBody[PairingCodeIn]) -> PairingCode:
    """A one-time code (10 minutes) that a phone exchanges for a reviewer key."""
    services = services_of(request)

    async def work(conn):
        return await insert_pairing_code(
            conn, agents=data.agents, label=data.label, clock=services.clock
        )

    try:
        code, expires_at = await services.store.write(work)
    except ValueError as exc:
        raise ClientException(status_code=422, detail=str(exc)) from None
    except LookupError as exc:
        raise NotFoundException(str(exc)) from None
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
async def verify_audit(request: Request) -> AuditVerification:
    """Walk the whole audit chain and report the first broken link, if any."""
    ok, rows, first_broken = await audit.verify(services_of(request).store)
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
