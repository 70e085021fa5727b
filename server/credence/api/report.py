"""GET /api/v1/agents/{agent_id}/memory/report: the memory-quality report of a period."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, get
from litestar.exceptions import NotFoundException
from litestar.params import QueryParameter

from credence.api.deps import SharedServices, principal_of
from credence.api.errors import errors
from credence.api.params import AgentIdPath
from credence.memory.ingest.episodes import AgentMissing
from credence.memory.lifecycle.report import DEFAULT_DAYS, DEFAULT_THRESHOLD, memory_report
from credence.models.report import MemoryReport

Days = Annotated[
    int,
    QueryParameter(name="days", ge=1, le=365, description="The period, in days up to now (1-365)"),
]
Threshold = Annotated[
    float,
    QueryParameter(
        name="threshold",
        ge=0.0,
        le=1.0,
        description="List kept beliefs whose decayed confidence is below this (0-1)",
    ),
]


class ReportController(Controller):
    """/api/v1/agents/{agent_id}/memory/report"""

    path = "/agents/{agent_id:str}/memory/report"
    tags = ["beliefs"]

    @get(operation_id="getMemoryReport", responses=errors(404))
    async def report(
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentIdPath,
        days: Days = DEFAULT_DAYS,
        threshold: Threshold = DEFAULT_THRESHOLD,
    ) -> MemoryReport:
        """Is memory getting better? The period's proposals by outcome and day, the share the
        gate flagged, time to decision, who decided, and the kept beliefs that sit idle (never
        served to the agent in the period) or have faded below the threshold."""
        principal_of(request).require_agent(agent_id)
        try:
            return await memory_report(
                services.store, agent_id, services.clock(), days=days, threshold=threshold
            )
        except AgentMissing:
            raise NotFoundException(f"agent {agent_id!r} not found") from None
