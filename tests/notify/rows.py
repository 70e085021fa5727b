"""Rows the push tests need from other aggregates, written with portable SQL on either engine."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from credence.db import beliefs as beliefs_db
from credence.db import make_store
from credence.db.beliefs import BeliefRecord
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


async def insert_pending_belief(conn: Any, agent_id: str, content: str, now: str) -> BeliefRecord:
    """A pending belief, as the in-transaction hook receives it."""
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
    return BeliefRecord.from_row(await beliefs_db.get(conn, str(belief["id"])))


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


def fetch(settings: Any, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of one query against the store of ``settings`` (either engine), from sync code."""

    async def work() -> list[tuple[Any, ...]]:
        store = make_store(settings.database_url, settings.database_path)
        await store.open()
        try:
            return [tuple(row) for row in await store.fetchall(sql, params)]
        finally:
            await store.close()

    return asyncio.run(work())


def installation_secret(settings: Any, name: str) -> bytes:
    """The installation secret ``name`` the server of ``settings`` uses (from its database)."""

    async def work() -> bytes:
        store = make_store(settings.database_url, settings.database_path)
        await store.open()
        try:
            return store.secret(name)
        finally:
            await store.close()

    return asyncio.run(work())


def vapid_public_key(settings: Any) -> str:
    """The VAPID public key the server of ``settings`` presents (its key is in its database)."""
    from credence.notify.runtime import VAPID_SECRET
    from credence.notify.vapid import keys_from_pem

    pem = installation_secret(settings, VAPID_SECRET)
    return keys_from_pem(pem, "database", "the server's VAPID key").public_key_b64url
