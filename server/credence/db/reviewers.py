"""Reviewers (people with devices), their notification policy, and who reviews which agent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from credence.db.engine import Connection, for_update, placeholders
from credence.db.records import Record
from credence.models.common import Scope


class ReviewerRecord(Record, frozen=True, kw_only=True):
    """One reviewers row; ``notifications`` is the stored policy's JSON object."""

    JSON_FIELDS = frozenset({"notifications"})

    id: str
    name: str
    notifications: dict[str, Any]
    created_at: str


class DeviceRecord(Record, frozen=True, kw_only=True):
    """An unrevoked admin or reviewer key of a reviewer; ``agents`` None covers every agent."""

    JSON_FIELDS = frozenset({"agents"})

    reviewer_id: str
    id: str
    scope: Scope
    agents: list[str] | None
    label: str
    created_at: str


class Assignment(Record, frozen=True, kw_only=True):
    """An admin's choice for one agent: this reviewer reviews it (``assigned`` 1) or not (0)."""

    agent_id: str
    reviewer_id: str
    assigned: int


COLUMNS = ReviewerRecord.columns()


async def insert(conn: Connection, *, reviewer_id: str, name: str, created_at: str) -> None:
    """Store a new reviewer with the default notification policy."""
    await conn.run(
        "INSERT INTO reviewers(id, name, created_at) VALUES (?, ?, ?)",
        (reviewer_id, name, created_at),
    )


async def get(conn: Connection, reviewer_id: str, *, lock: bool = False) -> ReviewerRecord | None:
    """The reviewer, or None; ``lock`` holds its row for this transaction."""
    row = await conn.one(
        f"SELECT {COLUMNS} FROM reviewers WHERE id = ?{for_update(conn) if lock else ''}",
        (reviewer_id,),
    )
    return None if row is None else ReviewerRecord.from_row(row)


async def all_reviewers(conn: Connection) -> list[ReviewerRecord]:
    """Every reviewer, by id."""
    return ReviewerRecord.from_rows(await conn.rows(f"SELECT {COLUMNS} FROM reviewers ORDER BY id"))


async def rename(conn: Connection, reviewer_id: str, name: str) -> None:
    """Set the reviewer's display name."""
    await conn.run("UPDATE reviewers SET name = ? WHERE id = ?", (name, reviewer_id))


async def set_notifications(conn: Connection, reviewer_id: str, policy_json: str) -> None:
    """Replace the reviewer's notification policy (JSON text)."""
    await conn.run(
        "UPDATE reviewers SET notifications = ? WHERE id = ?", (policy_json, reviewer_id)
    )


async def key_reviewer(conn: Connection, key_id: str) -> str | None:
    """The reviewer a key belongs to, or None."""
    row = await conn.one("SELECT reviewer_id FROM api_keys WHERE id = ?", (key_id,))
    return row["reviewer_id"] if row is not None else None


async def link_key(conn: Connection, key_id: str, reviewer_id: str) -> None:
    """Make the key one of the reviewer's devices."""
    await conn.run("UPDATE api_keys SET reviewer_id = ? WHERE id = ?", (reviewer_id, key_id))


async def devices(
    conn: Connection, reviewer_ids: Sequence[str] | None = None
) -> list[DeviceRecord]:
    """Unrevoked admin and reviewer keys that belong to a reviewer (all, or these reviewers)."""
    where = "revoked_at IS NULL AND reviewer_id IS NOT NULL AND scope IN ('admin', 'reviewer')"
    params: tuple[Any, ...] = ()
    if reviewer_ids is not None:
        if not reviewer_ids:
            return []
        where += f" AND reviewer_id IN ({placeholders(len(reviewer_ids))})"
        params = tuple(reviewer_ids)
    rows = await conn.rows(
        f"SELECT {DeviceRecord.columns()} FROM api_keys"
        f" WHERE {where} ORDER BY reviewer_id, created_at, id",
        params,
    )
    return DeviceRecord.from_rows(rows)


async def assignments(conn: Connection, agent_id: str | None = None) -> list[Assignment]:
    """Admins' assignments, of one agent or all."""
    if agent_id is None:
        rows = await conn.rows(
            f"SELECT {Assignment.columns()} FROM agent_reviewers ORDER BY agent_id"
        )
    else:
        rows = await conn.rows(
            f"SELECT {Assignment.columns()} FROM agent_reviewers WHERE agent_id = ?", (agent_id,)
        )
    return Assignment.from_rows(rows)


async def set_assignment(
    conn: Connection, *, agent_id: str, reviewer_id: str, assigned: bool, at: str
) -> None:
    """Record that an admin assigned (True) or unassigned (False) a reviewer for an agent."""
    await conn.run(
        "INSERT INTO agent_reviewers(agent_id, reviewer_id, assigned, changed_at)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (agent_id, reviewer_id)"
        " DO UPDATE SET assigned = excluded.assigned, changed_at = excluded.changed_at",
        (agent_id, reviewer_id, 1 if assigned else 0, at),
    )


async def people_of_keys(conn: Connection, key_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per key id: its label (the device), its reviewer's id and name (None without one)."""
    people: dict[str, dict[str, Any]] = {}
    for start in range(0, len(key_ids), 500):
        chunk = list(key_ids[start : start + 500])
        found = await conn.rows(
            "SELECT k.id, k.label, k.reviewer_id, r.name FROM api_keys k"
            " LEFT JOIN reviewers r ON r.id = k.reviewer_id"
            f" WHERE k.id IN ({placeholders(len(chunk))})",
            tuple(chunk),
        )
        for row in found:
            people[row["id"]] = {
                "label": row["label"],
                "reviewer_id": row["reviewer_id"],
                "reviewer_name": row["name"],
            }
    return people
