"""Rows the push tests need from other aggregates, written with portable SQL on either engine."""

from __future__ import annotations

import json
from typing import Any

from credence.ids import new_id


async def insert_key(
    conn: Any, scope: str, agents: list[str] | None, now: str, *, revoked: bool = False
) -> str:
    """An API key row (its hash is never checked by these tests); returns its id."""
    key_id = new_id("key")
    await conn.run(
        "INSERT INTO api_keys(id, key_hash, scope, agents, label, created_at, revoked_at)"
        " VALUES (?, ?, ?, ?, '', ?, ?)",
        (
            key_id,
            f"hash-{key_id}",
            scope,
            json.dumps(sorted(agents)) if agents else None,
            now,
            "x" if revoked else None,
        ),
    )
    return key_id


async def insert_agent(conn: Any, agent_id: str, name: str, now: str) -> None:
    """An agent row."""
    await conn.run(
        "INSERT INTO agents(id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
        (agent_id, name, now, now),
    )


async def insert_pending_belief(conn: Any, agent_id: str, content: str, now: str) -> dict[str, Any]:
    """A pending belief row, as the in-transaction hook receives it."""
    belief = {
        "id": new_id("b"),
        "agent_id": agent_id,
        "content": content,
        "content_key": content.lower(),
        "status": "pending",
        "confidence": 0.7,
        "op": "add",
        "target_belief_id": None,
        "provenance": "clean",
        "review_reasons": "[]",
        "version": 1,
        "created_at": now,
        "updated_at": now,
    }
    columns = ", ".join(belief)
    await conn.run(
        f"INSERT INTO beliefs({columns}) VALUES ({', '.join('?' * len(belief))})",
        tuple(belief.values()),
    )
    return belief


async def insert_subscription(
    conn: Any, key_id: str, endpoint: str, p256dh: str, auth: str, now: str
) -> str:
    """A push subscription row; returns its id."""
    subscription_id = new_id("sub")
    await conn.run(
        "INSERT INTO push_subscriptions(id, key_id, endpoint, p256dh, auth, created_at,"
        " last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (subscription_id, key_id, endpoint, p256dh, auth, now, now),
    )
    return subscription_id
