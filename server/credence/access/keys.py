"""API keys: minting, listing, revoking, and resolving a bearer secret to its principal."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

from credence.access.principal import Principal, principal_from_row
from credence.clock import Clock, rfc3339
from credence.db import agents as db_agents
from credence.db import keys as db_keys
from credence.db import reviewers as db_reviewers
from credence.db.engine import Connection, Database
from credence.errors import Conflict, NotFound, Unprocessable
from credence.ids import new_id

KEY_PREFIX = "crd_"
# How often a key cache asks the store whether any key was created or revoked since. A key
# revoked anywhere (another replica, the CLI) stops working here within about this long.
POLL_SECONDS = 0.25
# Even without a change, a cached lookup is redone after this long.
CACHE_SECONDS = 60.0
MAX_CACHED = 10_000
WRITE_GRANT_SCOPE = (
    "may_write: only a reviewer key takes a write grant (agent and admin keys always write)"
)
audit_log = logging.getLogger("credence.audit")


def generate_key() -> str:
    """Return a new secret API key in Credence's format: ``crd_`` + 43 url-safe chars."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    """SHA-256 hex digest: keys and pairing codes are stored only as this."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def refuse_empty(agents: list[str] | None) -> None:
    """An empty agent list is refused, never widened to every agent."""
    if agents is not None and not agents:
        raise Unprocessable("agents: give at least one agent, or none (null) for every agent")


async def require_agents(conn: Connection, agents: list[str] | None) -> None:
    """NotFound naming the first agent of ``agents`` that does not exist."""
    absent = await db_agents.missing(conn, agents or [])
    if absent:
        raise NotFound(f"agent {absent[0]!r} not found")


def key_info(key: db_keys.KeyRecord) -> dict[str, Any]:
    """A stored key as the ApiKey fields (never the digest)."""
    return {
        "id": key.id,
        "scope": key.scope,
        "agents": key.agents,
        "label": key.label,
        "created_at": key.created_at,
        "revoked_at": key.revoked_at,
        "may_write": _may_write(key.scope, bool(key.may_write)),
        "write_grant_at": key.write_grant_at,
        "write_grant_by": key.write_grant_by,
    }


def _may_write(scope: str, granted: bool) -> bool:
    """Whether a key may post episodes and proposals: agent and admin keys always."""
    return scope != "reviewer" or granted


async def create_key(
    conn: Connection,
    *,
    scope: str,
    agents: list[str] | None,
    label: str,
    clock: Clock,
    reviewer_id: str | None = None,
    may_write: bool = False,
    granted_by: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """Create a key inside the caller's transaction; returns (secret, ApiKey fields).

    ``agents`` None means every agent; an empty list is refused (Unprocessable), never widened;
    an unknown agent is NotFound. A reviewer key joins ``reviewer_id`` (a device of that person)
    or, without one, is the first device of a new reviewer. ``may_write`` grants a reviewer key
    posting episodes and proposals (recorded as granted by ``granted_by``).
    """
    refuse_empty(agents)
    if may_write and scope != "reviewer":
        raise Unprocessable(WRITE_GRANT_SCOPE)
    if scope == "agent" and (not agents or len(agents) != 1):
        raise Unprocessable("an agent key belongs to exactly one agent")
    if scope == "admin" and agents:
        raise Unprocessable("an admin key covers every agent; give no agent list")
    await require_agents(conn, agents)
    secret = generate_key()
    listed = sorted(set(agents)) if agents else None
    key_id, created_at = new_id("key"), rfc3339(clock())
    if scope == "reviewer" and reviewer_id is None:
        reviewer_id = new_id("rvw")
        await db_reviewers.insert(conn, reviewer_id=reviewer_id, name="", created_at=created_at)
    await db_keys.insert_key(
        conn,
        key_id=key_id,
        key_hash=hash_secret(secret),
        scope=scope,
        agents=json.dumps(listed) if listed is not None else None,
        label=label,
        created_at=created_at,
        reviewer_id=reviewer_id,
        may_write=may_write,
        write_grant_by=granted_by if may_write else None,
    )
    info = {
        "id": key_id,
        "scope": scope,
        "agents": listed,
        "label": label,
        "created_at": created_at,
        "revoked_at": None,
        "may_write": _may_write(scope, may_write),
        "write_grant_at": created_at if may_write else None,
        "write_grant_by": granted_by if may_write else None,
    }
    return secret, info


async def list_keys(store: Database) -> list[dict[str, Any]]:
    """Every key's ApiKey fields, by id."""
    return [key_info(row) for row in await store.read(db_keys.all_keys)]


async def revoke_key(store: Database, key_id: str, clock: Clock) -> dict[str, Any]:
    """Revoke a key (again is harmless); its ApiKey fields, NotFound for an unknown id."""
    now = rfc3339(clock())

    async def work(conn: Connection) -> db_keys.KeyRecord | None:
        return await db_keys.revoke_key(conn, key_id, now)

    row = await store.write(work)
    if row is None:
        raise NotFound(f"key {key_id!r} not found")
    return key_info(row)


async def set_may_write(
    store: Database, key_id: str, may_write: bool, *, by: str, clock: Clock
) -> dict[str, Any]:
    """Grant (or withdraw) a reviewer key's writing; its ApiKey fields.

    NotFound for an unknown key, Unprocessable for an agent or admin key (they always write),
    Conflict for a revoked key. Each change is logged to ``credence.audit`` with who made it.
    """
    now = rfc3339(clock())

    async def work(conn: Connection) -> db_keys.KeyRecord:
        key = await db_keys.get_key(conn, key_id)
        if key is None:
            raise NotFound(f"key {key_id!r} not found")
        if key.scope != "reviewer":
            raise Unprocessable(WRITE_GRANT_SCOPE)
        if key.revoked_at is not None:
            raise Conflict(f"key {key_id!r} is revoked")
        granted = await db_keys.set_may_write(conn, key_id, may_write, now, by)
        if granted is None:  # keys are never deleted, so this is only for the type checker
            raise NotFound(f"key {key_id!r} not found")
        return granted

    info = key_info(await store.write(work))
    audit_log.info(
        "audit: %s %s may_write %s key %s (%s)",
        by,
        "granted" if may_write else "withdrew",
        "to" if may_write else "from",
        key_id,
        info["label"],
    )
    return info


class KeyRing:
    """Resolves bearer secrets to principals, with an in-process cache that follows the store.

    Every create or revoke, by any process on the store, bumps the ``key_changes`` counter;
    the cache reads it at most every ``POLL_SECONDS`` and drops itself when it moved. So a
    revocation made on another replica or by the CLI is refused here within that long, at the
    cost of one tiny read per poll interval instead of one per request.
    """

    def __init__(self, store: Database, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._monotonic = monotonic
        self._cache: dict[str, tuple[int, float, Principal | None]] = {}
        self._generation: int | None = None
        self._polled_at = float("-inf")
        self._poll: asyncio.Lock | None = None

    def forget_cached(self) -> None:
        """Drop every cached lookup (this process just created or revoked a key)."""
        self._cache.clear()
        self._polled_at = float("-inf")

    async def _current_generation(self) -> int:
        now = self._monotonic()
        if self._generation is not None and now - self._polled_at < POLL_SECONDS:
            return self._generation
        if self._poll is None:
            self._poll = asyncio.Lock()
        async with self._poll:  # one poll at a time; the others reuse its answer
            if self._generation is None or self._monotonic() - self._polled_at >= POLL_SECONDS:
                started = self._monotonic()
                generation = await self._store.read(db_keys.key_changes, inline=True)
                if generation != self._generation:
                    self._cache.clear()
                self._generation, self._polled_at = generation, started
            return self._generation

    async def resolve(self, secret: str) -> Principal | None:
        """The principal for ``secret``, or None when it is unknown or revoked."""
        if not secret.startswith(KEY_PREFIX) or len(secret) > 100:
            return None
        digest = hash_secret(secret)
        generation = await self._current_generation()
        cached = self._cache.get(digest)
        now = self._monotonic()
        if cached is not None and cached[0] == generation and now - cached[1] < CACHE_SECONDS:
            return cached[2]

        async def lookup(conn: Connection) -> db_keys.KeyRecord | None:
            return await db_keys.active_key(conn, digest)

        key = await self._store.read(lookup, inline=True)
        principal = None
        if key is not None and hmac.compare_digest(key.key_hash, digest):
            principal = principal_from_row(key)
        if len(self._cache) > MAX_CACHED:
            self._cache.clear()
        # Tagged with the generation seen before the lookup: if keys changed meanwhile, the
        # next poll moves the generation on and this entry is not trusted.
        self._cache[digest] = (generation, now, principal)
        return principal
