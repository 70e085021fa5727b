"""The agent's side: read memory context, report a finished turn, export active memory."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import parse_qsl

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.exceptions import ClientException, NotFoundException
from litestar.openapi.spec import (
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Schema,
)
from litestar.params import JSONBody, QueryParameter
from litestar.types import ASGIApp, Receive, Scope, Send

from credence.access.principal import Principal
from credence.api.agents import load_agent
from credence.api.deps import SharedServices, principal_of, services_of
from credence.api.errors import errors
from credence.api.params import AgentIdPath
from credence.memory.ingest.episodes import AgentMissing, EpisodeRejected, episode_from_row
from credence.memory.ingest.turns import ExtractedTurn, Intervention, TurnError, extract_turn
from credence.memory.lifecycle.report import memory_report
from credence.memory.read.context import DEFAULT_LIMIT, MAX_LIMIT, memory_context
from credence.memory.read.export import export_memory, render_markdown
from credence.models import (
    NO_NUL,
    SLUG_PATTERN,
    EpisodeCreated,
    EpisodeIn,
    MemoryContext,
    MemoryExport,
    TurnIn,
    TurnMessageIn,
)
from credence.services import Services

MAX_INTERVENTIONS = 50

RoleQuery = Annotated[
    str | None,
    QueryParameter(
        pattern=SLUG_PATTERN,
        max_length=64,
        description="Serve beliefs for this role and for all roles (absent: all-role beliefs)",
    ),
]
ContextQuery = Annotated[
    str | None,
    QueryParameter(
        name="query",
        pattern=NO_NUL,
        max_length=1000,
        description=(
            "What the agent is about to do: notes are chosen by relevance to it (fused with"
            " confidence) and recall finds relevant recent episodes"
        ),
    ),
]
ContextLimit = Annotated[
    int,
    QueryParameter(
        ge=1, le=MAX_LIMIT, description=f"At most this many notes and episodes (≤ {MAX_LIMIT})"
    ),
]
IncludeUntrusted = Annotated[
    bool,
    QueryParameter(
        description="Also return episodes third-party content reached (beliefs never change)"
    ),
]
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _clean(text: str) -> str:
    """Text a client sent, made storable: no NUL, no lone surrogates."""
    return _SURROGATE.sub("\ufffd", text.replace("\x00", ""))


def _kept_interventions(interventions: tuple[Intervention, ...]) -> list[Intervention]:
    """At most MAX_INTERVENTIONS, keeping denials and steers over followups, in order."""
    if len(interventions) <= MAX_INTERVENTIONS:
        return list(interventions)
    ranked = sorted(
        range(len(interventions)),
        key=lambda i: (interventions[i].trigger == "followup", i),
    )
    keep = sorted(ranked[:MAX_INTERVENTIONS])
    return [interventions[i] for i in keep]


def message_dict(message: TurnMessageIn) -> dict[str, Any]:
    """A message as the extractor reads it: the fields that were sent (null means absent)."""
    return {
        name: value
        for name in message.__struct_fields__
        if (value := getattr(message, name)) is not None
    }


def episode_for_turn(data: TurnIn, turn: ExtractedTurn) -> EpisodeIn:
    """The episode a turn implies; ingest redacts it like any other episode."""
    metadata: dict[str, Any] = dict(data.metadata)
    metadata["turn"] = {
        "messages": len(data.messages),
        "third_party": list(turn.untrusted_reasons),
    }
    try:
        return msgspec.convert(
            {
                "session_id": data.session_id,
                "summary": _clean(turn.summary),
                "role_label": data.role_label,
                "finished_at": data.finished_at,
                "interventions": [
                    {"trigger": i.trigger, "text": _clean(i.text)}
                    for i in _kept_interventions(turn.interventions)
                ],
                "origin": turn.origin,
                "metadata": metadata,
            },
            EpisodeIn,
        )
    except msgspec.ValidationError as exc:
        raise ClientException(
            f"the turn cannot be stored as an episode: {exc}", status_code=422
        ) from None


_SLUG = re.compile(SLUG_PATTERN)
_LIMIT = re.compile(r"^[1-9][0-9]?$")
_JSON_HEADERS = [(b"content-type", b"application/json")]


def simple_context_params(query_string: bytes) -> dict[str, Any] | None:
    """The context parameters when they are plainly valid, else None (let the handler judge).

    Only inputs whose verdict is certain are taken: every parameter at most once, nothing
    unknown, each within the documented bounds. Everything else goes the documented way, so
    errors and edge cases are answered by the handler and its validation, never guessed here.
    """
    try:
        pairs = parse_qsl(
            query_string.decode("ascii"),
            keep_blank_values=True,
            strict_parsing=False,
            errors="strict",
        )
    except (UnicodeDecodeError, ValueError):
        return None
    params: dict[str, Any] = {"role": None, "query": None, "limit": DEFAULT_LIMIT}
    params["include_untrusted"] = False
    seen: set[str] = set()
    for name, value in pairs:
        if name in seen:
            return None
        seen.add(name)
        if name == "role" and len(value) <= 64 and _SLUG.fullmatch(value):
            params["role"] = value
        elif name == "query" and len(value) <= 1000 and "\x00" not in value:
            params["query"] = _clean(value) if value else None
        elif name == "limit" and _LIMIT.fullmatch(value) and int(value) <= MAX_LIMIT:
            params["limit"] = int(value)
        elif name == "include_untrusted" and value in ("true", "false"):
            params["include_untrusted"] = value == "true"
        else:
            return None
    return params


def fast_context(app: ASGIApp) -> ASGIApp:
    """Route middleware for the hot read: answer a plainly valid context request directly.

    It runs after the router's authentication and rate limiting and inside the security
    headers, and skips only the framework's per-request parameter and response machinery: the
    same service call builds the same body. Anything not plainly valid — unknown agent, foreign
    agent, odd parameters — falls through to the documented handler.
    """

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get("user")
        agent_id = scope.get("path_params", {}).get("agent_id", "")
        params = simple_context_params(scope.get("query_string", b""))
        if (
            params is not None
            and isinstance(principal, Principal)
            and isinstance(agent_id, str)
            and _SLUG.fullmatch(agent_id)
            and principal.sees_agent(agent_id)
        ):
            try:
                result = await memory_context(
                    scope["app"].state.services.context, agent_id, **params
                )
            except AgentMissing:
                result = None
            if result is not None:
                body = msgspec.json.encode(result)
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [*_JSON_HEADERS, (b"content-length", b"%d" % len(body))],
                    }
                )
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
        await app(scope, receive, send)

    return middleware


@dataclass
class MarkdownExportOperation(Operation):
    """The markdown export's 200 is text/markdown, so generated clients read it as text."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        if isinstance(ok, OpenAPIResponse) and ok.content is not None:
            ok.content = {"text/markdown": OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING))}


async def _export(request: Request, agent_id: str) -> MemoryExport:
    principal_of(request).require_agent(agent_id)
    services = services_of(request)
    try:
        exported = await export_memory(services.store, services.clock, agent_id)
        report = await memory_report(services.store, agent_id, services.clock())
        return msgspec.structs.replace(exported, report=report)
    except AgentMissing:
        raise NotFoundException(f"agent {agent_id!r} not found") from None


class ContextController(Controller):
    """/api/v1/agents/{agent_id}/memory/context, /memory/export and /turns"""

    path = "/agents/{agent_id:str}"
    tags = ["agent integration"]

    @get(
        "/memory/context",
        operation_id="getMemoryContext",
        responses=errors(404),
        middleware=[fast_context],
    )
    async def get_context(
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentIdPath,
        role: RoleQuery = None,
        search: ContextQuery = None,
        limit: ContextLimit = DEFAULT_LIMIT,
        include_untrusted: IncludeUntrusted = False,
    ) -> MemoryContext:
        """The agent's reviewed memory and relevant recent episodes, with a ready prompt block.

        Put ``prompt_block`` in the user message (the system prompt stays a cacheable prefix).
        Only active beliefs a human kept or wrote are served. Without ``query`` the notes are
        the most confident; with one, the notes it chooses come first (``for_query``). Each
        section of the block is fenced by a line carrying a per-response nonce, and each item is
        one escaped line, so stored text cannot end a section, pose as a header or give orders.
        """
        principal_of(request).require_agent(agent_id)
        try:
            return await memory_context(
                services.context,
                agent_id,
                role=role,
                query=_clean(search) if search else None,
                limit=limit,
                include_untrusted=include_untrusted,
            )
        except AgentMissing:
            raise NotFoundException(f"agent {agent_id!r} not found") from None

    @get("/memory/export", operation_id="exportMemory", responses=errors(404))
    async def export(self, request: Request, agent_id: AgentIdPath) -> MemoryExport:
        """Active beliefs with provenance and an audit summary, for backups or a memory file.

        The same export as markdown, for agents that load memory from a file, is at
        ``/memory/export/markdown``.
        """
        return await _export(request, agent_id)

    @get(
        "/memory/export/markdown",
        operation_id="exportMemoryMarkdown",
        operation_class=MarkdownExportOperation,
        media_type="text/markdown; charset=utf-8",
        responses=errors(404),
    )
    async def export_markdown(self, request: Request, agent_id: AgentIdPath) -> Response[str]:
        """The export as a markdown memory file (``text/markdown``), one section per belief."""
        exported = await _export(request, agent_id)
        return Response(
            render_markdown(exported),
            media_type="text/markdown; charset=utf-8",
            headers={"Content-Disposition": f'inline; filename="{agent_id}-memory.md"'},
        )

    @post(
        "/turns", operation_id="createTurn", status_code=201, responses=errors(403, 404, 422, 507)
    )
    async def create_turn(
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentIdPath,
        data: JSONBody[TurnIn],
    ) -> EpisodeCreated:
        """Report a finished turn as the framework has it; the server derives the episode.

        Deterministic, no LLM: a summary (request, what was done, outcome), the user's later
        messages classified as steer / denial / followup, and origin ``untrusted`` when tool or
        third-party content was part of the turn. Secrets are redacted before anything is stored.
        A reviewer key needs an admin's write grant (403 otherwise).
        """
        await load_agent(request, agent_id)
        principal_of(request).require_writer()
        return await record_turn(services, agent_id, data)


async def record_turn(services: Services, agent_id: str, data: TurnIn) -> EpisodeCreated:
    """Extract a finished turn and store its episode (REST and MCP both call this)."""
    try:
        turn = extract_turn([message_dict(m) for m in data.messages])
    except TurnError as exc:
        raise ClientException(f"messages: {exc}", status_code=422) from None
    episode = episode_for_turn(data, turn)
    try:
        rows, redacted = await services.episodes.ingest(agent_id, [episode])
    except EpisodeRejected as exc:
        raise ClientException(str(exc).replace("episodes[0].", ""), status_code=422) from None
    except AgentMissing:
        raise NotFoundException(f"agent {agent_id!r} not found") from None
    return EpisodeCreated(episode=episode_from_row(rows[0]), redacted=redacted)
