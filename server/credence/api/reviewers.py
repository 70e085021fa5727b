"""Reviewers: the caller's name and notification settings, the reviewer list, per-agent routing."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, Request, delete, get, patch, put
from litestar.params import JSONBody, PathParameter

from credence.access import reviewers as access_reviewers
from credence.access.principal import Principal, admin_only, reviewer_or_admin
from credence.api.deps import SharedServices, principal_of
from credence.api.errors import errors
from credence.api.params import ID_PATTERN, AgentIdPath
from credence.models import Me
from credence.models.reviewers import (
    AgentReviewer,
    AgentReviewerPage,
    MeIn,
    NotificationSettings,
    Reviewer,
    ReviewerPage,
)
from credence.notify import preferences
from credence.services import Services

ChannelIdPath = Annotated[
    str, PathParameter(pattern=ID_PATTERN, max_length=64, description="Channel id")
]
ReviewerIdPath = Annotated[
    str, PathParameter(pattern=ID_PATTERN, max_length=64, description="Reviewer id")
]


async def me_of(services: Services, principal: Principal) -> Me:
    """The caller as /me shows it: key, scope, agents and its reviewer."""

    reviewer_id, name = await services.store.read(
        lambda conn: access_reviewers.reviewer_of_key(conn, principal.key_id), inline=True
    )
    return Me(
        key_id=principal.key_id,
        scope=principal.scope,
        agents=sorted(principal.agents) if principal.agents is not None else None,
        label=principal.label,
        reviewer_id=reviewer_id,
        reviewer_name=name,
        may_write=principal.scope != "reviewer" or principal.may_write,
    )


@patch(
    "/me",
    operation_id="updateMe",
    tags=["auth"],
    guards=[reviewer_or_admin],
    responses=errors(403, 422),
)
async def update_me(request: Request, services: SharedServices, data: JSONBody[MeIn]) -> Me:
    """Set the name of the reviewer behind this device (History and the audit trail show it)."""
    principal = principal_of(request)

    async def work(conn):
        return await access_reviewers.rename(conn, principal, data.name, services.clock)

    await services.store.write(work)
    return await me_of(services, principal)


class NotificationController(Controller):
    """/api/v1/me/notifications"""

    path = "/me/notifications"
    tags = ["auth"]
    guards = [reviewer_or_admin]

    @get(operation_id="getNotificationSettings", responses=errors(403))
    async def read(self, request: Request, services: SharedServices) -> NotificationSettings:
        """How and when this reviewer is told about beliefs waiting for review."""
        principal = principal_of(request)

        async def work(conn):
            return await preferences.settings_of(conn, principal, services.clock)

        # Writes: a key without a reviewer becomes one on first use.
        return msgspec.convert(await services.store.write(work), NotificationSettings)

    @put(operation_id="putNotificationSettings", responses=errors(403, 422))
    async def replace(
        self, request: Request, services: SharedServices, data: JSONBody[NotificationSettings]
    ) -> NotificationSettings:
        """Replace the settings; a bad value is a 422 naming its field and nothing is saved.
        Shortening or removing quiet hours (or a snooze) delivers what they held at once."""
        principal = principal_of(request)
        raw = msgspec.to_builtins(data)

        async def work(conn):
            return await preferences.save_settings(conn, principal, raw, services.clock)

        saved = await services.store.write(work)
        services.push.wake_planner()
        return msgspec.convert(saved, NotificationSettings)


class ChannelNotificationController(Controller):
    """/api/v1/push/channels/{channel_id}/notifications (admin)"""

    path = "/push/channels/{channel_id:str}/notifications"
    tags = ["push"]
    guards = [admin_only]

    @get(operation_id="getChannelNotificationSettings", responses=errors(403, 404))
    async def read(
        self, services: SharedServices, channel_id: ChannelIdPath
    ) -> NotificationSettings:
        """When an apprise channel is told: the same policy as a reviewer's, set by an admin."""

        async def work(conn):
            return await preferences.channel_settings(conn, channel_id)

        return msgspec.convert(await services.store.read(work), NotificationSettings)

    @put(operation_id="putChannelNotificationSettings", responses=errors(403, 404, 422))
    async def replace(
        self,
        services: SharedServices,
        channel_id: ChannelIdPath,
        data: JSONBody[NotificationSettings],
    ) -> NotificationSettings:
        """Replace a channel's settings; a bad value is a 422 naming its field, nothing saved."""
        raw = msgspec.to_builtins(data)

        async def work(conn):
            return await preferences.save_channel_settings(conn, channel_id, raw, services.clock)

        saved = await services.store.write(work)
        services.push.wake_planner()
        return msgspec.convert(saved, NotificationSettings)


@get(
    "/reviewers",
    operation_id="listReviewers",
    tags=["admin"],
    guards=[admin_only],
    responses=errors(403),
)
async def list_reviewers(services: SharedServices) -> ReviewerPage:
    """Every reviewer with its devices (admin)."""
    rows = await services.store.read(access_reviewers.reviewers_with_devices)
    return ReviewerPage(items=[msgspec.convert(row, Reviewer) for row in rows])


class AgentReviewerController(Controller):
    """/api/v1/agents/{agent_id}/reviewers"""

    path = "/agents/{agent_id:str}/reviewers"
    tags = ["agents"]

    @get(operation_id="listAgentReviewers", guards=[reviewer_or_admin], responses=errors(404))
    async def list_for_agent(
        self, request: Request, services: SharedServices, agent_id: AgentIdPath
    ) -> AgentReviewerPage:
        """Who reviews this agent: every reviewer whose keys cover it, as assigned by admins."""
        principal_of(request).require_agent(agent_id)

        async def work(conn):
            return await access_reviewers.agent_reviewers(conn, agent_id)

        rows = await services.store.read(work)
        return AgentReviewerPage(items=[msgspec.convert(row, AgentReviewer) for row in rows])

    @put(
        "/{reviewer_id:str}",
        operation_id="assignReviewer",
        guards=[admin_only],
        responses=errors(403, 404, 422),
    )
    async def assign(
        self, services: SharedServices, agent_id: AgentIdPath, reviewer_id: ReviewerIdPath
    ) -> AgentReviewerPage:
        """Make a reviewer one of the agent's reviewers (422 when its keys cannot see it)."""
        return await self._set(services, agent_id, reviewer_id, assigned=True)

    @delete(
        "/{reviewer_id:str}",
        operation_id="unassignReviewer",
        guards=[admin_only],
        status_code=200,
        responses=errors(403, 404),
    )
    async def unassign(
        self, services: SharedServices, agent_id: AgentIdPath, reviewer_id: ReviewerIdPath
    ) -> AgentReviewerPage:
        """Stop a reviewer reviewing this agent (its keys keep their scope)."""
        return await self._set(services, agent_id, reviewer_id, assigned=False)

    async def _set(
        self, services: Services, agent_id: str, reviewer_id: str, *, assigned: bool
    ) -> AgentReviewerPage:
        async def work(conn):
            await access_reviewers.assign(
                conn,
                agent_id=agent_id,
                reviewer_id=reviewer_id,
                assigned=assigned,
                clock=services.clock,
            )
            return await access_reviewers.agent_reviewers(conn, agent_id)

        rows = await services.store.write(work)
        return AgentReviewerPage(items=[msgspec.convert(row, AgentReviewer) for row in rows])


HANDLERS = [
    update_me,
    NotificationController,
    ChannelNotificationController,
    list_reviewers,
    AgentReviewerController,
]
__all__ = ["HANDLERS", "me_of"]
