"""Wakes: the cron schedules and event names that submit reflection jobs."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, delete, get, patch, post
from litestar.params import JSONBody, PathParameter

from credence.access.principal import admin_only, reviewer_or_admin
from credence.api.deps import SharedServices, principal_of, services_of
from credence.api.errors import errors
from credence.errors import Forbidden, NotFound
from credence.models import SLUG_PATTERN, Wake, WakeIn, WakePage, WakePatch
from credence.reflection import wakes

WakeIdPath = Annotated[
    str, PathParameter(pattern=SLUG_PATTERN, max_length=64, description="Wake id")
]


def _key_agents(request: Request) -> frozenset[str] | None:
    principal = principal_of(request)
    return None if principal.scope == "admin" else principal.agents


async def _visible_wake(request: Request, wake_id: str) -> Wake:
    """The wake as this key sees it; 404 when it has none of the key's agents (like beliefs)."""
    services = services_of(request)
    wake = await wakes.get_wake(services.store, wake_id, services.clock())
    seen = wakes.as_seen_by(wake, _key_agents(request)) if wake is not None else None
    if seen is None:
        raise NotFound(f"wake {wake_id!r} not found")
    return seen


def _require_admin(request: Request) -> None:
    if principal_of(request).scope != "admin":
        raise Forbidden("this needs an admin key")


class WakeController(Controller):
    """/api/v1/wakes"""

    path = "/wakes"
    tags = ["jobs"]

    @get(operation_id="listWakes", guards=[reviewer_or_admin], responses=errors(403))
    async def list_wakes(self, request: Request, services: SharedServices) -> WakePage:
        """The wakes of this key's agents, with the next time each cron wake fires."""
        agents = _key_agents(request)
        every = await wakes.list_wakes(services.store, services.clock())
        seen = (wakes.as_seen_by(wake, agents) for wake in every)
        return WakePage(items=[wake for wake in seen if wake is not None])

    @get(
        "/{wake_id:str}",
        operation_id="getWake",
        guards=[reviewer_or_admin],
        responses=errors(403, 404),
    )
    async def get_wake(self, request: Request, wake_id: WakeIdPath) -> Wake:
        """One wake."""
        return await _visible_wake(request, wake_id)

    @post(
        operation_id="createWake",
        status_code=201,
        guards=[admin_only],
        responses=errors(403, 409, 422),
    )
    async def create_wake(
        self, request: Request, services: SharedServices, data: JSONBody[WakeIn]
    ) -> Wake:
        """Create a cron or event wake (admin)."""
        return await wakes.create_wake(services.store, data, services.clock())

    @patch(
        "/{wake_id:str}",
        operation_id="updateWake",
        guards=[reviewer_or_admin],
        responses=errors(403, 404, 422),
    )
    async def update_wake(
        self,
        request: Request,
        services: SharedServices,
        wake_id: WakeIdPath,
        data: JSONBody[WakePatch],
    ) -> Wake:
        """Edit a wake's schedule, event, agents, input or enabled flag (admin)."""
        await _visible_wake(request, wake_id)
        _require_admin(request)
        wake = await wakes.update_wake(services.store, wake_id, data, services.clock())
        if wake is None:
            raise NotFound(f"wake {wake_id!r} not found")
        return wake

    @delete(
        "/{wake_id:str}",
        operation_id="deleteWake",
        status_code=204,
        guards=[reviewer_or_admin],
        responses=errors(403, 404),
    )
    async def delete_wake(
        self, request: Request, services: SharedServices, wake_id: WakeIdPath
    ) -> None:
        """Delete a wake (admin); jobs it submitted stay."""
        await _visible_wake(request, wake_id)
        _require_admin(request)
        if not await wakes.delete_wake(services.store, wake_id):
            raise NotFound(f"wake {wake_id!r} not found")
