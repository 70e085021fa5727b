"""Agents: create, list, read and update settings."""

from __future__ import annotations

from litestar import Controller, Request, get, patch, post
from litestar.params import JSONBody

from credence.access import agents as access_agents
from credence.access.principal import Principal, admin_only
from credence.api.deps import SharedServices, principal_of, services_of
from credence.api.errors import errors
from credence.api.params import AgentIdPath, Cursor, Limit
from credence.models import Agent, AgentIn, AgentPage, AgentPatch
from credence.reflection.cron import check_cron
from credence.services import Services

agent_from_row = access_agents.agent_from_row


async def load_agent(request: Request, agent_id: str) -> Agent:
    """The agent if this key may see it, else 404 (existence is not leaked)."""
    return await visible_agent(services_of(request), principal_of(request), agent_id)


async def visible_agent(services: Services, principal: Principal, agent_id: str) -> Agent:
    """The agent if ``principal`` may see it, else NotFound; REST and MCP share this check."""
    return await access_agents.visible_agent(services.store, principal, agent_id)


class AgentController(Controller):
    """/api/v1/agents"""

    path = "/agents"
    tags = ["agents"]

    @post(operation_id="createAgent", guards=[admin_only], responses=errors(403, 409, 422))
    async def create(
        self, request: Request, services: SharedServices, data: JSONBody[AgentIn]
    ) -> Agent:
        """Create an agent (admin)."""
        check_cron(data.reflection.cron, "reflection.cron")
        return await access_agents.create_agent(services.store, data, services.clock)

    @get(operation_id="listAgents", responses=errors())
    async def list_agents(
        self, request: Request, services: SharedServices, limit: Limit = 50, cursor: Cursor = None
    ) -> AgentPage:
        """Agents this key can see, by id."""
        return await access_agents.list_agents(
            services.store, principal_of(request), limit=limit, cursor=cursor
        )

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
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentIdPath,
        data: JSONBody[AgentPatch],
    ) -> Agent:
        """Update an agent's name, roles or reflection settings (admin)."""
        if data.reflection is not None:
            check_cron(data.reflection.cron, "reflection.cron")
        return await access_agents.update_agent(services.store, agent_id, data, services.clock)
