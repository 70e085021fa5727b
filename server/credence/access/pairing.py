"""One-time pairing codes: an admin mints one, a phone exchanges it once for a reviewer key."""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from typing import Any

from credence.access.keys import create_key, hash_secret, refuse_empty, require_agents
from credence.clock import Clock, parse_rfc3339, rfc3339
from credence.db import keys as db_keys
from credence.db import reviewers as db_reviewers
from credence.db.engine import Connection
from credence.errors import Gone, NotFound

PAIRING_TTL = timedelta(minutes=10)


class PairingRefused(Gone):
    """The pairing code is unknown, used, or expired (410)."""


def generate_pairing_code() -> str:
    """A one-time pairing code: short enough to type, long enough not to guess."""
    return secrets.token_urlsafe(12)


async def create_pairing_code(
    conn: Connection,
    *,
    agents: list[str] | None,
    label: str,
    clock: Clock,
    reviewer_id: str | None = None,
) -> tuple[str, str]:
    """Create a pairing code inside the caller's transaction; returns (code, expires_at).

    ``agents`` None means every agent; an empty list is refused (Unprocessable), never widened.
    With ``reviewer_id`` the paired device joins that reviewer, else it becomes a new reviewer.
    """
    refuse_empty(agents)
    await require_agents(conn, agents)
    if reviewer_id is not None and await db_reviewers.get(conn, reviewer_id) is None:
        raise NotFound(f"reviewer {reviewer_id!r} not found")
    code = generate_pairing_code()
    now = clock()
    expires_at = rfc3339(now + PAIRING_TTL)
    await db_keys.insert_pairing_code(
        conn,
        code_hash=hash_secret(code),
        agents=json.dumps(sorted(set(agents))) if agents else None,
        label=label,
        created_at=rfc3339(now),
        expires_at=expires_at,
        reviewer_id=reviewer_id,
    )
    return code, expires_at


async def redeem_pairing_code(
    conn: Connection, code: str, clock: Clock
) -> tuple[str, dict[str, Any]]:
    """Exchange a pairing code for a new reviewer key, once in total, in the caller's transaction.

    The code is claimed first with one conditional update, so of two replicas redeeming it at
    once exactly one gets a key. An expired code raises, which rolls the claim back.
    """
    code_hash = hash_secret(code)
    now = clock()
    claimed = await db_keys.claim_pairing_code(conn, code_hash, rfc3339(now))
    if claimed is None:
        if await db_keys.get_pairing_code(conn, code_hash) is None:
            raise PairingRefused("this pairing code is not valid")
        raise PairingRefused("this pairing code was already used; run `credence pair` again")
    if parse_rfc3339(claimed.expires_at) <= now:
        raise PairingRefused("this pairing code has expired; run `credence pair` again")
    secret, info = await create_key(
        conn,
        scope="reviewer",
        agents=claimed.agents,
        label=claimed.label,
        clock=clock,
        reviewer_id=claimed.reviewer_id,
    )
    await db_keys.link_pairing_key(conn, code_hash, info["id"])
    return secret, info
