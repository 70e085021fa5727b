"""Reviewers: the people behind reviewer keys, their devices, and which agents they review."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from credence.access.principal import Principal
from credence.clock import Clock, rfc3339
from credence.db import agents as db_agents
from credence.db import reviewers as db_reviewers
from credence.db.engine import Connection
from credence.db.reviewers import Assignment, ReviewerRecord
from credence.errors import NotFound, Unprocessable
from credence.ids import new_id

NAME_MAX = 80


@dataclass(frozen=True)
class Device:
    """One paired key of a reviewer."""

    key_id: str
    label: str
    scope: str
    agents: list[str] | None
    created_at: str


def covers(scope: str, agents: list[str] | None, agent_id: str) -> bool:
    """True when a key of this scope and agent list may review ``agent_id``."""
    return scope == "admin" or agents is None or agent_id in agents


def reviewer_sees(devices: Iterable[Device], agent_id: str) -> bool:
    """True when any of the reviewer's devices may review ``agent_id``."""
    return any(covers(d.scope, d.agents, agent_id) for d in devices)


def effective_owners(
    devices: dict[str, list[Device]], assignments: Iterable[Assignment], agent_id: str
) -> list[str]:
    """The agent's reviewers: those whose keys cover it, plus assigned, minus unassigned.

    An assignment never reaches a reviewer who cannot see the agent (scoping is unchanged).
    """
    owners = {rid for rid, own in devices.items() if reviewer_sees(own, agent_id)}
    for choice in assignments:
        if choice.agent_id != agent_id:
            continue
        if choice.assigned:
            if reviewer_sees(devices.get(choice.reviewer_id, []), agent_id):
                owners.add(choice.reviewer_id)
        else:
            owners.discard(choice.reviewer_id)
    return sorted(owners)


async def new_reviewer(conn: Connection, *, name: str, clock: Clock) -> str:
    """Create a reviewer inside the caller's transaction; its id."""
    reviewer_id = new_id("rvw")
    await db_reviewers.insert(
        conn, reviewer_id=reviewer_id, name=name[:NAME_MAX], created_at=rfc3339(clock())
    )
    return reviewer_id


async def require_reviewer(conn: Connection, reviewer_id: str) -> ReviewerRecord:
    """The reviewer; NotFound when there is none."""
    row = await db_reviewers.get(conn, reviewer_id)
    if row is None:
        raise NotFound(f"reviewer {reviewer_id!r} not found")
    return row


async def reviewer_of(conn: Connection, principal: Principal, clock: Clock) -> str:
    """The caller's reviewer id; a key without one (an admin's) becomes a reviewer of its own."""
    found = await db_reviewers.key_reviewer(conn, principal.key_id)
    if found is not None:
        return found
    reviewer_id = await new_reviewer(conn, name="", clock=clock)
    await db_reviewers.link_key(conn, principal.key_id, reviewer_id)
    return reviewer_id


async def devices_by_reviewer(
    conn: Connection, reviewer_ids: list[str] | None = None
) -> dict[str, list[Device]]:
    """Each reviewer's unrevoked devices."""
    grouped: dict[str, list[Device]] = {}
    for key in await db_reviewers.devices(conn, reviewer_ids):
        grouped.setdefault(key.reviewer_id, []).append(
            Device(
                key_id=key.id,
                label=key.label,
                scope=key.scope,
                agents=key.agents,
                created_at=key.created_at,
            )
        )
    return grouped


async def owners_of(conn: Connection, agent_id: str) -> list[str]:
    """The ids of the reviewers who review ``agent_id`` now."""
    devices = await devices_by_reviewer(conn)
    return effective_owners(devices, await db_reviewers.assignments(conn, agent_id), agent_id)


def valid_name(name: str) -> str:
    """A display name trimmed; Unprocessable naming the field when blank or too long."""
    cleaned = " ".join(name.split())
    if not cleaned:
        raise Unprocessable("name: give a name of at least one visible character")
    if len(cleaned) > NAME_MAX:
        raise Unprocessable(f"name: at most {NAME_MAX} characters")
    return cleaned


async def rename(conn: Connection, principal: Principal, name: str, clock: Clock) -> str:
    """Set the caller's reviewer name; the reviewer id."""
    cleaned = valid_name(name)
    reviewer_id = await reviewer_of(conn, principal, clock)
    await db_reviewers.rename(conn, reviewer_id, cleaned)
    return reviewer_id


async def assign(
    conn: Connection, *, agent_id: str, reviewer_id: str, assigned: bool, clock: Clock
) -> None:
    """Assign (or unassign) a reviewer to an agent, in the caller's transaction.

    NotFound for an unknown agent or reviewer; Unprocessable naming ``reviewer_id`` when none of
    the reviewer's keys may see the agent (an assignment never widens a key's scope).
    """
    if not await db_agents.exists(conn, agent_id):
        raise NotFound(f"agent {agent_id!r} not found")
    await require_reviewer(conn, reviewer_id)
    devices = (await devices_by_reviewer(conn, [reviewer_id])).get(reviewer_id, [])
    if assigned and not reviewer_sees(devices, agent_id):
        raise Unprocessable(
            f"reviewer_id: reviewer {reviewer_id!r} has no key that covers agent {agent_id!r};"
            " pair a device for that agent first"
        )
    await db_reviewers.set_assignment(
        conn, agent_id=agent_id, reviewer_id=reviewer_id, assigned=assigned, at=rfc3339(clock())
    )


async def agent_reviewers(conn: Connection, agent_id: str) -> list[dict[str, Any]]:
    """Every reviewer who can see the agent, with whether it reviews it and why."""
    if not await db_agents.exists(conn, agent_id):
        raise NotFound(f"agent {agent_id!r} not found")
    devices = await devices_by_reviewer(conn)
    rows = await db_reviewers.assignments(conn, agent_id)
    explicit = {choice.reviewer_id: bool(choice.assigned) for choice in rows}
    owners = set(effective_owners(devices, rows, agent_id))
    people = {row.id: row for row in await db_reviewers.all_reviewers(conn)}
    listed = []
    for reviewer_id, own in sorted(devices.items()):
        if not reviewer_sees(own, agent_id) or reviewer_id not in people:
            continue
        listed.append(
            {
                "id": reviewer_id,
                "name": people[reviewer_id].name,
                "reviews": reviewer_id in owners,
                "assignment": (
                    "default"
                    if reviewer_id not in explicit
                    else "assigned"
                    if explicit[reviewer_id]
                    else "unassigned"
                ),
            }
        )
    return listed


async def reviewers_with_devices(conn: Connection) -> list[dict[str, Any]]:
    """Every reviewer with its unrevoked devices (admin listing)."""
    devices = await devices_by_reviewer(conn)
    return [
        {
            "id": row.id,
            "name": row.name,
            "created_at": row.created_at,
            "devices": [
                {
                    "key_id": d.key_id,
                    "label": d.label,
                    "scope": d.scope,
                    "agents": d.agents,
                    "created_at": d.created_at,
                }
                for d in devices.get(row.id, [])
            ],
        }
        for row in await db_reviewers.all_reviewers(conn)
    ]


async def reviewer_of_key(conn: Connection, key_id: str) -> tuple[str | None, str]:
    """(reviewer id, name) of the person a key belongs to; (None, "") for a key of no one."""
    reviewer_id = await db_reviewers.key_reviewer(conn, key_id)
    row = await db_reviewers.get(conn, reviewer_id) if reviewer_id else None
    return reviewer_id, row.name if row is not None else ""
