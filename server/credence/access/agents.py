"""Agents: create, read, list and update, seen through the caller's key."""

from __future__ import annotations

import json

import msgspec

from credence.access.principal import Principal
from credence.clock import Clock, rfc3339
from credence.db import agents as db_agents
from credence.db.agents import AgentRecord
from credence.db.engine import Connection, Database
from credence.errors import Conflict, NotFound
from credence.models import Agent, AgentIn, AgentPage, AgentPatch, ReflectionSettings


def agent_from_row(row: AgentRecord) -> Agent:
    """Turn a stored agent into the API's Agent."""
    return Agent(
        id=row.id,
        name=row.name,
        roles=row.roles,
        reflection=msgspec.convert(row.settings, ReflectionSettings),
        created_at=row.created_at,
        updated_at=row.updated_at,
        stored_episode_chars=row.episode_bytes,
    )


async def visible_agent(store: Database, principal: Principal, agent_id: str) -> Agent:
    """The agent if ``principal`` may see it, else NotFound (existence is not leaked)."""
    principal.require_agent(agent_id)

    async def work(conn: Connection) -> AgentRecord | None:
        return await db_agents.get(conn, agent_id)

    row = await store.read(work, inline=True)
    if row is None:
        raise NotFound(f"agent {agent_id!r} not found")
    return agent_from_row(row)


async def create_agent(store: Database, data: AgentIn, clock: Clock) -> Agent:
    """Create an agent; Conflict when the id is taken."""
    now = rfc3339(clock())

    async def work(conn: Connection) -> AgentRecord | None:
        created = await db_agents.insert(
            conn,
            agent_id=data.id,
            name=data.name,
            roles=json.dumps(data.roles),
            settings=msgspec.json.encode(data.reflection).decode(),
            now=now,
        )
        return await db_agents.get(conn, data.id) if created else None

    row = await store.write(work)
    if row is None:
        raise Conflict(f"agent {data.id!r} already exists")
    return agent_from_row(row)


async def update_agent(store: Database, agent_id: str, data: AgentPatch, clock: Clock) -> Agent:
    """Change an agent's name, roles or reflection settings; NotFound for no such agent."""
    now = rfc3339(clock())
    roles = json.dumps(data.roles) if data.roles is not None else None
    settings = (
        msgspec.json.encode(data.reflection).decode() if data.reflection is not None else None
    )

    async def work(conn: Connection) -> AgentRecord | None:
        if not await db_agents.update(
            conn, agent_id, name=data.name, roles=roles, settings=settings, now=now
        ):
            return None
        return await db_agents.get(conn, agent_id)

    row = await store.write(work)
    if row is None:
        raise NotFound(f"agent {agent_id!r} not found")
    return agent_from_row(row)


async def list_agents(
    store: Database, principal: Principal, *, limit: int, cursor: str | None
) -> AgentPage:
    """The agents this key can see, by id, one page after ``cursor``."""
    only = None
    if principal.scope != "admin" and principal.agents is not None:
        only = sorted(principal.agents)

    async def work(conn: Connection) -> list[AgentRecord]:
        return await db_agents.page(conn, only=only, after=cursor, limit=limit + 1)

    rows = await store.read(work)
    next_cursor = rows[limit - 1].id if len(rows) > limit else None
    return AgentPage(items=[agent_from_row(r) for r in rows[:limit]], next_cursor=next_cursor)
