"""Agents: the one place that reads and writes the ``agents`` table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from credence.db.engine import Connection, placeholders
from credence.db.records import Record


class AgentRecord(Record, frozen=True, kw_only=True):
    """One agents row; ``settings`` is the reflection settings' JSON object."""

    JSON_FIELDS = frozenset({"roles", "settings"})

    id: str
    name: str
    roles: list[str]
    settings: dict[str, Any]
    created_at: str
    updated_at: str
    episode_bytes: int


COLUMNS = AgentRecord.columns()


async def get(conn: Connection, agent_id: str) -> AgentRecord | None:
    """The agent, or None when there is no such agent."""
    row = await conn.one(f"SELECT {COLUMNS} FROM agents WHERE id = ?", (agent_id,))
    return None if row is None else AgentRecord.from_row(row)


async def exists(conn: Connection, agent_id: str) -> bool:
    """True when an agent with this id exists."""
    return await conn.one("SELECT 1 FROM agents WHERE id = ?", (agent_id,)) is not None


async def missing(conn: Connection, agent_ids: Sequence[str]) -> list[str]:
    """The ids among ``agent_ids`` that name no agent, in the order given."""
    if not agent_ids:
        return []
    found = await conn.rows(
        f"SELECT id FROM agents WHERE id IN ({placeholders(len(agent_ids))})", tuple(agent_ids)
    )
    known = {row["id"] for row in found}
    return [agent_id for agent_id in agent_ids if agent_id not in known]


async def page(
    conn: Connection, *, only: Sequence[str] | None, after: str | None, limit: int
) -> list[AgentRecord]:
    """Up to ``limit`` agents by id, after the id ``after``; ``only`` None means all."""
    clauses: list[str] = []
    params: list[Any] = []
    if only is not None:
        if not only:
            return []
        clauses.append(f"id IN ({placeholders(len(only))})")
        params.extend(only)
    if after is not None:
        clauses.append("id > ?")
        params.append(after)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = await conn.rows(
        f"SELECT {COLUMNS} FROM agents{where} ORDER BY id LIMIT ?", (*params, limit)
    )
    return AgentRecord.from_rows(rows)


async def insert(
    conn: Connection, *, agent_id: str, name: str, roles: str, settings: str, now: str
) -> bool:
    """Create the agent; False (and no change) when the id is taken already."""
    created = await conn.rows(
        "INSERT INTO agents(id, name, roles, settings, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id",
        (agent_id, name, roles, settings, now, now),
    )
    return bool(created)


async def update(
    conn: Connection,
    agent_id: str,
    *,
    name: str | None,
    roles: str | None,
    settings: str | None,
    now: str,
) -> bool:
    """Change the given fields (None keeps one) and ``updated_at``; False for no such agent."""
    changed = await conn.run(
        "UPDATE agents SET name = COALESCE(?, name), roles = COALESCE(?, roles),"
        " settings = COALESCE(?, settings), updated_at = ? WHERE id = ?",
        (name, roles, settings, now, agent_id),
    )
    return changed > 0
