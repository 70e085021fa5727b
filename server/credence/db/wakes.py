"""Store functions of wakes (cron schedules and event names) and of the agents seed writes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from credence.db.engine import Connection, for_update, placeholders, skip_locked

WAKE_COLUMNS = (
    "id, kind, workflow_id, cron, event, agent_ids, enabled, input_data, description,"
    " created_at, updated_at, last_fired_at"
)
# The columns a wake definition sets (what create, replace and compare look at).
DEFINITION = ("kind", "cron", "event", "agent_ids", "enabled", "input_data", "description")


async def all_wakes(conn: Connection) -> list[Any]:
    """Every wake row, by id."""
    return await conn.rows(f"SELECT {WAKE_COLUMNS} FROM wakes ORDER BY id")


async def get(conn: Connection, wake_id: str, *, lock: bool = False) -> Any:
    """One wake row or None; ``lock`` holds it (PostgreSQL) until the transaction ends."""
    return await conn.one(
        f"SELECT {WAKE_COLUMNS} FROM wakes WHERE id = ?" + (for_update(conn) if lock else ""),
        (wake_id,),
    )


async def insert(conn: Connection, wake_id: str, values: dict[str, Any], now: str) -> bool:
    """Insert a wake; False (nothing written) when the id is taken."""
    row = await conn.one(
        "INSERT INTO wakes(id, kind, cron, event, agent_ids, enabled, input_data,"
        " description, created_at, updated_at) VALUES (:id, :kind, :cron, :event,"
        " :agent_ids, :enabled, :input_data, :description, :now, :now)"
        " ON CONFLICT (id) DO NOTHING RETURNING id",
        {**{name: values[name] for name in DEFINITION}, "id": wake_id, "now": now},
    )
    return row is not None


async def replace(conn: Connection, wake_id: str, values: dict[str, Any], now: str) -> None:
    """Overwrite a wake's definition."""
    await conn.run(
        "UPDATE wakes SET kind = :kind, cron = :cron, event = :event, agent_ids = :agent_ids,"
        " enabled = :enabled, input_data = :input_data, description = :description,"
        " updated_at = :now WHERE id = :id",
        {**{name: values[name] for name in DEFINITION}, "id": wake_id, "now": now},
    )


async def patch(
    conn: Connection,
    wake_id: str,
    *,
    cron: str | None,
    event: str | None,
    agent_ids: str | None,
    enabled: int | None,
    description: str | None,
    input_data: str | None,
    now: str,
) -> None:
    """Set schedule, event and agents; enabled, description and input only when given."""
    await conn.run(
        "UPDATE wakes SET cron = ?, event = ?, agent_ids = ?,"
        " enabled = COALESCE(?, enabled), description = COALESCE(?, description),"
        " input_data = COALESCE(?, input_data), updated_at = ? WHERE id = ?",
        (cron, event, agent_ids, enabled, description, input_data, now, wake_id),
    )


async def delete(conn: Connection, wake_id: str) -> bool:
    """Delete a wake; False when there is none."""
    return await conn.run("DELETE FROM wakes WHERE id = ?", (wake_id,)) == 1


async def enabled_cron(conn: Connection) -> list[Any]:
    """Every enabled cron wake."""
    return await conn.rows(
        f"SELECT {WAKE_COLUMNS} FROM wakes WHERE kind = 'cron' AND enabled = 1 ORDER BY id"
    )


async def enabled_event(conn: Connection, name: str) -> list[Any]:
    """The enabled event wakes listening for ``name``, by id."""
    return await conn.rows(
        f"SELECT {WAKE_COLUMNS} FROM wakes WHERE kind = 'event' AND enabled = 1 AND event = ?"
        " ORDER BY id",
        (name,),
    )


async def claim_cron(conn: Connection, wake_ids: Sequence[str]) -> set[str]:
    """Lock the enabled cron wakes among ``wake_ids`` for this tick; the ids this tick holds.

    On PostgreSQL ``SKIP LOCKED`` leaves a wake another replica is ticking to that replica
    (the unique window index would make the loser's insert a no-op anyway; this keeps it from
    waiting on the winner). On SQLite the one writer holds them all.
    """
    if not wake_ids:
        return set()
    rows = await conn.rows(
        "SELECT id FROM wakes WHERE kind = 'cron' AND enabled = 1"
        f" AND id IN ({placeholders(len(wake_ids))}) ORDER BY id{skip_locked(conn)}",
        tuple(wake_ids),
    )
    return {row["id"] for row in rows}


async def lock_event(conn: Connection, wake_id: str) -> bool:
    """Lock an enabled event wake until commit (PostgreSQL), so replicas firing it queue one job."""
    row = await conn.one(
        "SELECT id FROM wakes WHERE id = ? AND enabled = 1" + for_update(conn), (wake_id,)
    )
    return row is not None


async def fired(conn: Connection, wake_id: str, at: str) -> None:
    """Record that a wake submitted a job."""
    await conn.run("UPDATE wakes SET last_fired_at = ? WHERE id = ?", (at, wake_id))


# --- agents, as wakes target them and seed writes them --------------------------------------


async def agents(conn: Connection) -> list[Any]:
    """Every agent's id, reflection settings JSON and creation time."""
    return await conn.rows("SELECT id, settings, created_at FROM agents ORDER BY id")


async def agent(conn: Connection, agent_id: str) -> Any:
    """One agent's id, settings and creation time, or None."""
    return await conn.one("SELECT id, settings, created_at FROM agents WHERE id = ?", (agent_id,))


async def seed_agent_row(conn: Connection, agent_id: str) -> Any:
    """The name, roles and settings of an agent a manifest names, locked for the upsert."""
    return await conn.one(
        "SELECT name, roles, settings FROM agents WHERE id = ?" + for_update(conn), (agent_id,)
    )


async def insert_agent(
    conn: Connection, agent_id: str, name: str, roles: str, settings: str, now: str
) -> bool:
    """Insert an agent; False when one with this id exists already."""
    row = await conn.one(
        "INSERT INTO agents(id, name, roles, settings, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id",
        (agent_id, name, roles, settings, now, now),
    )
    return row is not None


async def update_agent(
    conn: Connection, agent_id: str, name: str, roles: str, settings: str, now: str
) -> None:
    """Overwrite an agent's name, roles and reflection settings."""
    await conn.run(
        "UPDATE agents SET name = ?, roles = ?, settings = ?, updated_at = ? WHERE id = ?",
        (name, roles, settings, now, agent_id),
    )
