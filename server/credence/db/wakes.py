"""Store functions of wakes (cron schedules and event names) and of the agents seed writes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import msgspec

from credence.db.engine import Connection, for_update, placeholders, skip_locked
from credence.db.records import Record
from credence.models.reflection import WakeKind, WorkflowId


class WakeRecord(Record, frozen=True, kw_only=True):
    """One wakes row; ``agent_ids`` None means every agent."""

    JSON_FIELDS = frozenset({"agent_ids", "input_data"})

    id: str
    kind: WakeKind
    workflow_id: WorkflowId
    cron: str | None
    event: str | None
    agent_ids: list[str] | None
    enabled: int
    input_data: dict[str, Any]
    description: str
    created_at: str
    updated_at: str
    last_fired_at: str | None


class WakeAgent(Record, frozen=True, kw_only=True):
    """An agent as wakes target it: its reflection settings and when it was created."""

    JSON_FIELDS = frozenset({"settings"})

    id: str
    settings: dict[str, Any]
    created_at: str


class SeedAgent(Record, frozen=True, kw_only=True):
    """What a manifest sets on an existing agent."""

    JSON_FIELDS = frozenset({"roles", "settings"})

    name: str
    roles: list[str]
    settings: dict[str, Any]


R = TypeVar("R", bound=Record)


@dataclass(frozen=True)
class Readable(Generic[R]):
    """The rows of a read that decoded, and the ids (with the error) of those that did not."""

    records: list[R]
    unreadable: dict[str, msgspec.DecodeError] = field(default_factory=dict)


def _readable(kind: type[R], rows: list[Any]) -> Readable[R]:
    # One row with JSON broken by hand (or by an older version) must not stop the others.
    found = Readable[R]([])
    for row in rows:
        try:
            found.records.append(kind.from_row(row))
        except msgspec.DecodeError as exc:
            found.unreadable[row["id"]] = exc
    return found


WAKE_COLUMNS = WakeRecord.columns()
# The columns a wake definition sets (what create, replace and compare look at).
DEFINITION = ("kind", "cron", "event", "agent_ids", "enabled", "input_data", "description")


async def all_wakes(conn: Connection) -> list[WakeRecord]:
    """Every wake, by id."""
    return WakeRecord.from_rows(await conn.rows(f"SELECT {WAKE_COLUMNS} FROM wakes ORDER BY id"))


async def get(conn: Connection, wake_id: str, *, lock: bool = False) -> WakeRecord | None:
    """One wake or None; ``lock`` holds it (PostgreSQL) until the transaction ends."""
    row = await conn.one(
        f"SELECT {WAKE_COLUMNS} FROM wakes WHERE id = ?" + (for_update(conn) if lock else ""),
        (wake_id,),
    )
    return None if row is None else WakeRecord.from_row(row)


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


async def enabled_cron(conn: Connection) -> Readable[WakeRecord]:
    """Every enabled cron wake, by id (those whose JSON does not decode apart)."""
    rows = await conn.rows(
        f"SELECT {WAKE_COLUMNS} FROM wakes WHERE kind = 'cron' AND enabled = 1 ORDER BY id"
    )
    return _readable(WakeRecord, rows)


async def enabled_event(conn: Connection, name: str) -> list[WakeRecord]:
    """The enabled event wakes listening for ``name``, by id."""
    rows = await conn.rows(
        f"SELECT {WAKE_COLUMNS} FROM wakes WHERE kind = 'event' AND enabled = 1 AND event = ?"
        " ORDER BY id",
        (name,),
    )
    return WakeRecord.from_rows(rows)


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


async def agents(conn: Connection) -> Readable[WakeAgent]:
    """Every agent's id, reflection settings and creation time (undecodable ones apart)."""
    rows = await conn.rows(f"SELECT {WakeAgent.columns()} FROM agents ORDER BY id")
    return _readable(WakeAgent, rows)


async def agent(conn: Connection, agent_id: str) -> WakeAgent | None:
    """One agent's id, settings and creation time, or None."""
    row = await conn.one(f"SELECT {WakeAgent.columns()} FROM agents WHERE id = ?", (agent_id,))
    return None if row is None else WakeAgent.from_row(row)


async def seed_agent_row(conn: Connection, agent_id: str) -> SeedAgent | None:
    """The name, roles and settings of an agent a manifest names, locked for the upsert."""
    row = await conn.one(
        f"SELECT {SeedAgent.columns()} FROM agents WHERE id = ?" + for_update(conn), (agent_id,)
    )
    return None if row is None else SeedAgent.from_row(row)


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
