"""Agents: create, list, read and update settings."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from litestar import Controller, Request, get, patch, post
from litestar.exceptions import ClientException, NotFoundException
from litestar.params import JSONBody

from credence.api.deps import principal_of, services_of
from credence.api.errors import errors
from credence.api.params import AgentIdPath, Cursor, Limit
from credence.auth import Principal, admin_only
from credence.clock import rfc3339
from credence.models import Agent, AgentIn, AgentPage, AgentPatch, ReflectionSettings
from credence.reflection.cron import check_cron
from credence.services import Services


def agent_from_row(row: Any) -> Agent:
    """Turn an agents row into the API's Agent."""
    return Agent(
        id=row["id"],
        name=row["name"],
        roles=json.loads(row["roles"]),
        reflection=msgspec.convert(json.loads(row["settings"]), ReflectionSettings),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


async def load_agent(request: Request, agent_id: str) -> Agent:
    """The agent if this key may see it, else 404 (existence is not leaked)."""
    return await visible_agent(services_of(request), principal_of(request), agent_id)


async def visible_agent(services: Services, principal: Principal, agent_id: str) -> Agent:
    """The agent if ``principal`` may see it, else 404; REST and MCP share this check."""
    principal.require_agent(agent_id)
    row = await services.store.fetchone("SELECT * FROM agents WHERE id = ?", (agent_id,))
    if row is None:
        raise NotFoundException(f"agent {agent_id!r} not found")
    return agent_from_row(row)


class AgentController(Controller):
    """/api/v1/agents"""

    path = "/agents"
    tags = ["agents"]

    @post(operation_id="createAgent", guards=[admin_only], responses=errors(403, 409, 422))
    async def create(self, request: Request, data: JSONBody[AgentIn]) -> Agent:
        """Create an agent (admin)."""
        check_cron(data.reflection.cron, "reflection.cron")
        services = services_of(request)
        now = rfc3339(services.clock())
        settings = msgspec.json.encode(data.reflection).decode()

        async def work(conn) -> bool:
            async with conn.execute("SELECT 1 FROM agents WHERE id = ?", (data.id,)) as cur:
                if await cur.fetchone() is not None:
                    return False
            await conn.execute(
                "INSERT INTO agents(id, name, roles, settings, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (data.id, data.name, json.dumps(data.roles), settings, now, now),
            )
            return True

        if not await services.store.write(work):
            raise ClientException(status_code=409, detail=f"agent {data.id!r} already exists")
        return await load_agent(request, data.id)

    @get(operation_id="listAgents", responses=errors())
    async def list_agents(
        self, request: Request, limit: Limit = 50, cursor: Cursor = None
    ) -> AgentPage:
        """Agents this key can see, by id."""
        principal = principal_of(request)
        clauses, params = [], []
        if principal.scope != "admin" and principal.agents is not None:
            clauses.append(f"id IN ({','.join('?' * len(principal.agents))})")
            params.extend(sorted(principal.agents))
        if cursor is not None:
            clauses.append("id > ?")
            params.append(cursor)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = await services_of(request).store.fetchall(
            f"SELECT * FROM agents {where} ORDER BY id LIMIT ?", (*params, limit + 1)
        )
        next_cursor = rows[limit - 1]["id"] if len(rows) > limit else None
        return AgentPage(items=[agent_from_row(r) for r in rows[:limit]], next_cursor=next_cursor)

    @get("/{agent_id:str}", operation_id="getAgent", responses=errors(404))
    async def get_agent(self, request: Request, agent_id: AgentIdPath) -> Agent:
        """One agent."""
        return await load_agent(request, agent_id)

    @patch(
        "/{agent_id:str}",
        operation_id="updateAgent",
        guards=[admin_only],
        responses=errors(403, 404, 422),
    )
    async def update(
        self, request: Request, agent_id: AgentIdPath, data: JSONBody[AgentPatch]
    ) -> Agent:
        """Update an agent's name, roles or reflection settings (admin)."""
        if data.reflection is not None:
            check_cron(data.reflection.cron, "reflection.cron")
        services = services_of(request)
        now = rfc3339(services.clock())

        async def work(conn) -> bool:
            async with conn.execute("SELECT 1 FROM agents WHERE id = ?", (agent_id,)) as cur:
                if await cur.fetchone() is None:
                    return False
            if data.name is not None:
                await conn.execute("UPDATE agents SET name = ? WHERE id = ?", (data.name, agent_id))
            if data.roles is not None:
                await conn.execute(
                    "UPDATE agents SET roles = ? WHERE id = ?", (json.dumps(data.roles), agent_id)
                )
            if data.reflection is not None:
                await conn.execute(
                    "UPDATE agents SET settings = ? WHERE id = ?",
                    (msgspec.json.encode(data.reflection).decode(), agent_id),
                )
            await conn.execute("UPDATE agents SET updated_at = ? WHERE id = ?", (now, agent_id))
            return True

        if not await services.store.write(work):
            raise NotFoundException(f"agent {agent_id!r} not found")
        return await load_agent(request, agent_id)
