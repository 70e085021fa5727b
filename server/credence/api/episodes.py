"""Episodes: an agent reports each finished turn; reviewers can page through them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from litestar import Controller, Request, get, post
from litestar.exceptions import ClientException, NotFoundException, ValidationException
from litestar.params import JSONBody, QueryParameter

from credence.api.agents import load_agent
from credence.api.deps import SharedServices, principal_of, services_of
from credence.api.errors import errors
from credence.api.params import AgentIdPath, EpisodeIdPath, Limit
from credence.clock import rfc3339
from credence.memory.ingest.episodes import (
    AgentMissing,
    EpisodeRecord,
    EpisodeRejected,
    episode_from_row,
)
from credence.models import (
    END,
    Episode,
    EpisodeBatchCreated,
    EpisodeBatchIn,
    EpisodeCreated,
    EpisodeIn,
    EpisodePage,
)

Since = Annotated[
    str | None,
    QueryParameter(
        description="Only episodes finished at or after this RFC 3339 time",
        max_length=64,
        schema_extra={"format": "date-time"},
    ),
]
_RFC3339 = msgspec.json.Decoder(Annotated[datetime, msgspec.Meta(tz=True)], strict=True)
Reflected = Annotated[bool | None, QueryParameter(description="Filter by reflected state")]
SeqCursor = Annotated[
    str | None, QueryParameter(pattern=r"^[0-9]{1,15}" + END, description="Opaque cursor")
]


async def _ingest(
    request: Request, agent_id: str, items: list[EpisodeIn]
) -> tuple[list[EpisodeRecord], int]:
    await load_agent(request, agent_id)
    principal_of(request).require_writer()
    try:
        return await services_of(request).episodes.ingest(agent_id, items)
    except EpisodeRejected as exc:
        raise ClientException(status_code=422, detail=str(exc)) from None
    except AgentMissing:
        raise NotFoundException(f"agent {agent_id!r} not found") from None


class EpisodeController(Controller):
    """/api/v1/agents/{agent_id}/episodes"""

    path = "/agents/{agent_id:str}/episodes"
    tags = ["episodes"]

    @post(operation_id="createEpisode", status_code=201, responses=errors(403, 404, 422, 507))
    async def create(
        self, request: Request, agent_id: AgentIdPath, data: JSONBody[EpisodeIn]
    ) -> EpisodeCreated:
        """Store one finished turn (secrets are redacted before anything is stored)."""
        rows, redacted = await _ingest(request, agent_id, [data])
        return EpisodeCreated(episode=episode_from_row(rows[0]), redacted=redacted)

    @post(
        "/batch",
        operation_id="createEpisodes",
        status_code=201,
        responses=errors(403, 404, 422, 507),
    )
    async def create_batch(
        self, request: Request, agent_id: AgentIdPath, data: JSONBody[EpisodeBatchIn]
    ) -> EpisodeBatchCreated:
        """Store up to 500 episodes, all or nothing."""
        rows, redacted = await _ingest(request, agent_id, data.episodes)
        return EpisodeBatchCreated(ids=[r.id for r in rows], redacted=redacted)

    @get("/{episode_id:str}", operation_id="getEpisode", responses=errors(404))
    async def get_episode(
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentIdPath,
        episode_id: EpisodeIdPath,
    ) -> Episode:
        """One episode of the agent (the evidence behind a belief)."""
        await load_agent(request, agent_id)
        row = await services.episodes.get_row(agent_id, episode_id)
        if row is None:
            raise NotFoundException(f"episode {episode_id!r} not found")
        return episode_from_row(row)

    @get(operation_id="listEpisodes", responses=errors(404, 422))
    async def list_episodes(
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentIdPath,
        since: Since = None,
        reflected: Reflected = None,
        limit: Limit = 50,
        cursor: SeqCursor = None,
    ) -> EpisodePage:
        """An agent's episodes, oldest first."""
        await load_agent(request, agent_id)
        since_text = None
        if since is not None:
            try:
                moment = _RFC3339.decode(msgspec.json.encode(since))
            except msgspec.ValidationError as exc:
                raise ValidationException(f"since: {exc} (e.g. 2026-11-01T08:00:00Z)") from None
            try:
                since_text = rfc3339(moment)
            except (ValueError, OverflowError) as exc:
                raise ClientException(status_code=422, detail=f"since: {exc}") from None
        rows, next_cursor = await services.episodes.list_rows(
            agent_id,
            since=since_text,
            reflected=reflected,
            limit=limit,
            cursor=int(cursor) if cursor is not None else None,
        )
        return EpisodePage(items=[episode_from_row(r) for r in rows], next_cursor=next_cursor)
