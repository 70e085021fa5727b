"""Admin: API keys, pairing codes and audit-chain verification; plus the caller's own identity."""

from __future__ import annotations

from litestar import Controller, Request, get, patch, post
from litestar.params import JSONBody

from credence.access import keys as access_keys
from credence.access.pairing import create_pairing_code as mint_pairing_code
from credence.access.principal import admin_only
from credence.api.deps import SharedServices, principal_of
from credence.api.errors import errors
from credence.api.params import KeyIdPath
from credence.api.reviewers import me_of
from credence.memory.lifecycle import audit
from credence.memory.semantics.backfill import status as embedding_status
from credence.models import (
    ApiKey,
    ApiKeyCreated,
    ApiKeyPage,
    AuditVerification,
    EmbeddingStatus,
    KeyIn,
    KeyPatch,
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
                conn,
                scope=data.scope,
                agents=data.agents,
                label=data.label,
                clock=services.clock,
                may_write=data.may_write,
                granted_by=principal_of(request).actor,
            )

        secret, row = await services.store.write(work)
        services.keyring.forget_cached()
        return ApiKeyCreated(key=secret, info=ApiKey(**row))

    @get(operation_id="listKeys", responses=errors(403))
    async def list_keys(self, request: Request, services: SharedServices) -> ApiKeyPage:
        """Every key's metadata (never the secrets)."""
        rows = await access_keys.list_keys(services.store)
        return ApiKeyPage(items=[ApiKey(**row) for row in rows])

    @patch(
        "/{key_id:str}",
        operation_id="updateKey",
        responses=errors(403, 404, 409, 422),
        description="Grant a reviewer key posting episodes, turns, proposals and imports for"
        " its agents (`may_write: true`), or withdraw it. Agent and admin keys always may"
        " (422); a revoked key is a 409. The key row keeps when and by whom, and the change is"
        " logged to `credence.audit`; every replica follows within a second.",
    )
    async def update(
        self,
        request: Request,
        services: SharedServices,
        key_id: KeyIdPath,
        data: JSONBody[KeyPatch],
    ) -> ApiKey:
        """Grant or withdraw a reviewer key's writing."""
        row = await access_keys.set_may_write(
            services.store,
            key_id,
            data.may_write,
            by=principal_of(request).actor,
            clock=services.clock,
        )
        services.keyring.forget_cached()
        return ApiKey(**row)

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
            conn,
            agents=data.agents,
            label=data.label,
            clock=services.clock,
            reviewer_id=data.reviewer_id,
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


@get(
    "/embeddings",
    operation_id="embeddingStatus",
    guards=[admin_only],
    tags=["admin"],
    responses=errors(403),
)
async def embeddings(request: Request, services: SharedServices) -> EmbeddingStatus:
    """How many beliefs and episodes the configured model embedded; the backfill's progress."""
    backfill = services.backfill
    found = await embedding_status(
        services.store, services.embedder.name, backfill.progress if backfill else None
    )
    return EmbeddingStatus(
        model=found.model,
        beliefs=found.beliefs,
        beliefs_current=found.beliefs_current,
        episodes=found.episodes,
        episodes_current=found.episodes_current,
        state=found.state,
        line=found.line,
    )


@get("/me", operation_id="whoAmI", tags=["auth"], responses=errors())
async def who_am_i(request: Request, services: SharedServices) -> Me:
    """The calling key's scope and agents, and the reviewer (person) it belongs to."""
    return await me_of(services, principal_of(request))
