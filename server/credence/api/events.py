"""Events: tell Credence something happened; event wakes turn it into jobs."""

from __future__ import annotations

from litestar import Request, post
from litestar.params import JSONBody

from credence.api.agents import load_agent
from credence.api.deps import SharedServices, principal_of
from credence.api.errors import errors
from credence.models import EventAccepted, EventIn
from credence.reflection import wakes
from credence.reflection.engine import runner_of


@post("/events", operation_id="postEvent", status_code=202, responses=errors(404), tags=["jobs"])
async def post_event(
    request: Request, services: SharedServices, data: JSONBody[EventIn]
) -> EventAccepted:
    """Fire an event (e.g. reflection-episodes-ready); answers with the jobs it submitted.

    Each enabled event wake listening for the name and targeting the agent queues one job, or
    returns the job it already has queued, so a burst of events becomes one run. An event no
    wake listens for is accepted with no jobs.
    """
    await load_agent(request, data.agent_id)
    wake_ids, submitted = await wakes.fire_event(
        services.store, data.name, data.agent_id, services.clock(), principal_of(request).actor
    )
    runner = runner_of(services)
    if runner is not None and submitted:
        runner.wake()
    return EventAccepted(name=data.name, agent_id=data.agent_id, wakes=wake_ids, jobs=submitted)
