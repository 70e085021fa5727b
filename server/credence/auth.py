"""API keys, scopes, guards and one-time pairing codes."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import msgspec
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, NotFoundException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult

from credence.clock import Clock, parse_rfc3339, rfc3339
from credence.ids import new_id
from credence.models import Scope

if TYPE_CHECKING:
    import aiosqlite

    from credence.db.engine import Database

KEY_PREFIX = "crd_"
PAIRING_TTL = timedelta(minutes=10)
# Bounds how long a key revoked by another process (the CLI, a replica) keeps working.
_CACHE_SECONDS = 1.0


class Principal(msgspec.Struct, frozen=True):
    """The authenticated caller: one API key and what it may touch."""

    key_id: str
    scope: Scope
    agents: frozenset[str] | None
    label: str

    def sees_agent(self, agent_id: str) -> bool:
        """True when this key may read objects of ``agent_id``."""
        return self.scope == "admin" or self.agents is None or agent_id in self.agents

    def require_agent(self, agent_id: str) -> None:
        """Raise 404 for an agent outside this key's reach, so its existence is not leaked."""
        if not self.sees_agent(agent_id):
            raise NotFoundException(f"agent {agent_id!r} not found")

    def visible_agents(self, requested: str | None = None) -> list[str] | None:
        """The agent ids a listing may cover: None means every agent, [] means none."""
        if requested is not None:
            return [requested] if self.sees_agent(requested) else []
        if self.scope == "admin" or self.agents is None:
            return None
        return sorted(self.agents)

    def require_decider(self) -> None:
        """Agent keys can never approve, forget, edit or reopen anything."""
        if self.scope == "agent":
            raise PermissionDeniedException("agent keys cannot decide on beliefs")

    @property
    def actor(self) -> str:
        """How this caller appears in the audit trail."""
        return f"key:{self.key_id}"


def generate_key() -> str:
    """Return a new secret API key in Credence's format: ``crd_`` + 43 url-safe chars."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    """SHA-256 hex digest: keys and pairing codes are stored only as this."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


async def insert_key(
    conn: aiosqlite.Connection,
    *,
    scope: str,
    agents: list[str] | None,
    label: str,
    clock: Clock,
) -> tuple[str, dict[str, Any]]:
    """Create a key inside the caller's transaction; returns (secret, row as dict).

    ``agents`` None means every agent; an empty list is refused (ValueError), never widened.
    """
    _refuse_empty(agents)
    if scope == "agent" and (not agents or len(agents) != 1):
        raise ValueError("an agent key belongs to exactly one agent")
    if scope == "admin" and agents:
        raise ValueError("an admin key covers every agent; give no agent list")
    for agent_id in agents or []:
        async with conn.execute("SELECT 1 FROM agents WHERE id = ?", (agent_id,)) as cur:
            if await cur.fetchone() is None:
                raise LookupError(f"agent {agent_id!r} not found")
    secret = generate_key()
    row = {
        "id": new_id("key"),
        "scope": scope,
        "agents": sorted(set(agents)) if agents else None,
        "label": label,
        "created_at": rfc3339(clock()),
        "revoked_at": None,
    }
    await conn.execute(
        "INSERT INTO api_keys(id, key_hash, scope, agents, label, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            row["id"],
            hash_secret(secret),
            scope,
            json.dumps(row["agents"]) if row["agents"] is not None else None,
            label,
            row["created_at"],
        ),
    )
    await conn.execute("UPDATE store_state SET value = value + 1 WHERE name = 'key_changes'")
    return secret, row


def _refuse_empty(agents: list[str] | None) -> None:
    if agents is not None and not agents:
        raise ValueError("agents: give at least one agent, or none (null) for every agent")


def key_row(row: Any) -> dict[str, Any]:
    """Turn an api_keys row into the ApiKey fields."""
    return {
        "id": row["id"],
        "scope": row["scope"],
        "agents": json.loads(row["agents"]) if row["agents"] else None,
        "label": row["label"],
        "created_at": row["created_at"],
        "revoked_at": row["revoked_at"],
    }


class KeyRing:
    """Resolves bearer secrets to principals, with a short in-process cache.

    Revocation through this process clears the cache at once; another process on the same data
    dir sees a revocation within ``_CACHE_SECONDS``.
    """

    def __init__(self, store: Database) -> None:
        self._store = store
        self._cache: dict[str, tuple[float, Principal | None]] = {}

    def forget_cached(self) -> None:
        """Drop every cached lookup (after a key is created or revoked)."""
        self._cache.clear()

    async def resolve(self, secret: str) -> Principal | None:
        """The principal for ``secret``, or None when it is unknown or revoked."""
        if not secret.startswith(KEY_PREFIX) or len(secret) > 100:
            return None
        digest = hash_secret(secret)
        cached = self._cache.get(digest)
        now = time.monotonic()
        if cached is not None and now - cached[0] < _CACHE_SECONDS:
            return cached[1]
        row = await self._store.fetchone(
            "SELECT id, key_hash, scope, agents, label FROM api_keys"
            " WHERE key_hash = ? AND revoked_at IS NULL",
            (digest,),
        )
        principal = None
        if row is not None and hmac.compare_digest(row["key_hash"], digest):
            agents = json.loads(row["agents"]) if row["agents"] else None
            principal = Principal(
                key_id=row["id"],
                scope=row["scope"],
                agents=frozenset(agents) if agents is not None else None,
                label=row["label"],
            )
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (now, principal)
        return principal


class BearerAuth(AbstractAuthenticationMiddleware):
    """Authenticates ``Authorization: Bearer crd_…`` on every /api/v1 route."""

    async def authenticate_request(self, connection: ASGIConnection) -> AuthenticationResult:
        """Resolve the bearer key or answer 401."""
        header = connection.headers.get("authorization", "")
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise NotAuthorizedException(
                "missing bearer key", headers={"WWW-Authenticate": "Bearer"}
            )
        keyring: KeyRing = connection.app.state.keyring
        principal = await keyring.resolve(secret.strip())
        if principal is None:
            raise NotAuthorizedException(
                "unknown or revoked key", headers={"WWW-Authenticate": "Bearer"}
            )
        return AuthenticationResult(user=principal, auth=principal.key_id)


def admin_only(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    """Guard: only admin keys."""
    if connection.user.scope != "admin":
        raise PermissionDeniedException("this needs an admin key")


def reviewer_or_admin(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    """Guard: admin or reviewer keys (never agent keys)."""
    if connection.user.scope not in ("admin", "reviewer"):
        raise PermissionDeniedException("this needs a reviewer or admin key")


# --- pairing ------------------------------------------------------------------------------


def generate_pairing_code() -> str:
    """A one-time pairing code: short enough to type, long enough not to guess."""
    return secrets.token_urlsafe(12)


async def insert_pairing_code(
    conn: aiosqlite.Connection, *, agents: list[str] | None, label: str, clock: Clock
) -> tuple[str, str]:
    """Create a pairing code inside the caller's transaction; returns (code, expires_at).

    ``agents`` None means every agent; an empty list is refused (ValueError), never widened.
    """
    _refuse_empty(agents)
    for agent_id in agents or []:
        async with conn.execute("SELECT 1 FROM agents WHERE id = ?", (agent_id,)) as cur:
            if await cur.fetchone() is None:
                raise LookupError(f"agent {agent_id!r} not found")
    code = generate_pairing_code()
    now = clock()
    expires_at = rfc3339(now + PAIRING_TTL)
    await conn.execute(
        "INSERT INTO pairing_codes(code_hash, agents, label, created_at, expires_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (
            hash_secret(code),
            json.dumps(sorted(set(agents))) if agents else None,
            label,
            rfc3339(now),
            expires_at,
        ),
    )
    return code, expires_at


class PairingRefused(ValueError):
    """The pairing code is unknown, used, or expired."""


async def redeem_pairing_code(
    conn: aiosqlite.Connection, code: str, clock: Clock
) -> tuple[str, dict[str, Any]]:
    """Exchange a pairing code for a new reviewer key, once; inside the caller's transaction."""
    async with conn.execute(
        "SELECT code_hash, agents, label, expires_at, used_at FROM pairing_codes"
        " WHERE code_hash = ?",
        (hash_secret(code),),
    ) as cur:
        row = await cur.fetchone()
    if row is None:
        raise PairingRefused("this pairing code is not valid")
    if row["used_at"] is not None:
        raise PairingRefused("this pairing code was already used; run `credence pair` again")
    now = clock()
    if parse_rfc3339(row["expires_at"]) <= now:
        raise PairingRefused("this pairing code has expired; run `credence pair` again")
    agents = json.loads(row["agents"]) if row["agents"] else None
    secret, info = await insert_key(
        conn, scope="reviewer", agents=agents, label=row["label"], clock=clock
    )
    await conn.execute(
        "UPDATE pairing_codes SET used_at = ?, key_id = ? WHERE code_hash = ?",
        (rfc3339(now), info["id"], row["code_hash"]),
    )
    return secret, info
