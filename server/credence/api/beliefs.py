"""Beliefs: list, read with ETag, audit trail, proposals, and the four decisions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, cast

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.exceptions import NotFoundException, PermissionDeniedException
from litestar.params import JSONBody, QueryParameter

from credence.access.principal import Principal
from credence.api.agents import load_agent
from credence.api.decisions import Decisions, fast_decision
from credence.api.deps import SharedServices, principal_of, services_of
from credence.api.errors import errors
from credence.api.params import AgentIdPath, BeliefIdPath, Cursor, IdempotencyKey, IfMatch, Limit
from credence.db.idempotency import Remembered
from credence.memory.lifecycle import audit
from credence.memory.lifecycle.beliefs import belief_from_row
from credence.memory.lifecycle.decisions import Decision, Edit, Forget, Keep, Reopen, etag
from credence.models import (
    END,
    SLUG_PATTERN,
    AuditEntry,
    AuditEvent,
    AuditFeed,
    AuditPage,
    Belief,
    BeliefPage,
    BeliefStatus,
    EditIn,
    ForgetIn,
    KeepIn,
    ProposalIn,
    ProposalsIn,
    ProposalsResult,
    ProposedBy,
)
from credence.services import Services

StatusFilter = Annotated[BeliefStatus | None, QueryParameter(description="Filter by status")]
AgentFilter = Annotated[
    str | None,
    QueryParameter(pattern=SLUG_PATTERN, description="Only this agent's beliefs"),
]
AuditCursor = Annotated[
    str | None,
    QueryParameter(pattern=r"^[0-9]{1,18}" + END, description="Opaque cursor from next_cursor"),
]
# How an agent key sees the reviewer behind a decision.
REVIEWER_LABEL = "a reviewer"
ETAG_HEADER = [
    ResponseHeader(
        name="ETag", description="The belief's version as a strong ETag", documentation_only=True
    )
]


async def load_belief(request: Request, belief_id: str) -> Any:
    """The belief row if this key may see it, else 404."""
    row = await services_of(request).beliefs.get_row(belief_id)
    if row is None or not principal_of(request).sees_agent(row["agent_id"]):
        raise NotFoundException(f"belief {belief_id!r} not found")
    return row


def decision(action: str, description: str | None = None, bodiless: Decision | None = None) -> Any:
    """The route decorator shared by the four decision endpoints; ``bodiless`` is the
    decision a request without a body makes, answered on the fast path when plainly valid."""
    return post(
        f"/beliefs/{{belief_id:str}}/{action}",
        operation_id=f"{action}Belief",
        status_code=200,
        responses=errors(403, 404, 409, 412, 422, 428),
        response_headers=ETAG_HEADER,
        description=description,
        middleware=[fast_decision(bodiless)] if bodiless is not None else None,
    )


RETIRE_RULES = (
    " `retire` names active beliefs to retire in the same transaction: each becomes"
    " `superseded` with `superseded_by` set to this belief, audited as `superseded`. Only ids"
    " this belief's `review_reasons` flag as `contradicts:<id>`, or its `target_belief_id` when"
    " its op is `supersede`, may be named (422 otherwise); each must be active (409 otherwise)."
    " Without `retire` (no body, or an empty list) nothing is retired: a contradicted or"
    " superseded belief stays active beside this one. Whatever the body, a `strengthen` /"
    " `weaken` belief retires the target it restates, and a `forget` belief forgets its"
    " target (retire is a 422 there). Reopen undoes all of it."
)


def retire_list(retire: list[str]) -> tuple[str, ...]:
    """The retire list of a decision: ordered and deduplicated, so a bare Keep and
    `{"retire": []}` are one request for Idempotency-Key."""
    return tuple(sorted(set(retire)))


# What a Keep, Forget or Reopen without a body decides (an Edit always has one).
BARE_KEEP = Keep(())
BARE_FORGET = Forget(None)
BARE_REOPEN = Reopen()


def _unlabelled(entries: list[Any]) -> list[Any]:
    """Audit rows with every key's label (often a reviewer's device) replaced by words, and
    the reviewer and device who decided left out."""
    return [
        msgspec.structs.replace(
            e, actor_label=REVIEWER_LABEL, reviewer_id=None, reviewer_name=None, device=None
        )
        if e.actor.startswith("key:")
        else e
        for e in entries
    ]


def outcome_response(outcome: Remembered) -> Response[Belief]:
    """Send a decision's answer (stored for replay) as it was first computed."""
    # The stored body is the Belief's JSON, sent as the bytes first encoded.
    return Response(
        content=cast("Belief", outcome.body),
        status_code=outcome.status_code,
        headers=outcome.headers,
        media_type="application/json",
    )


class BeliefController(Controller):
    """/api/v1/beliefs and /api/v1/agents/{agent_id}/memory/beliefs"""

    tags = ["beliefs"]

    @get(
        "/agents/{agent_id:str}/memory/beliefs",
        operation_id="listAgentBeliefs",
        responses=errors(404),
    )
    async def list_for_agent(
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentIdPath,
        status: StatusFilter = None,
        limit: Limit = 50,
        cursor: Cursor = None,
    ) -> BeliefPage:
        """An agent's beliefs, newest first."""
        await load_agent(request, agent_id)
        rows, next_cursor = await services.beliefs.list_rows(
            agent_ids=[agent_id], status=status, limit=limit, cursor=cursor
        )
        return BeliefPage(items=[belief_from_row(r) for r in rows], next_cursor=next_cursor)

    @get("/beliefs", operation_id="listBeliefs", responses=errors())
    async def list_all(
        self,
        request: Request,
        services: SharedServices,
        status: StatusFilter = None,
        agent_id: AgentFilter = None,
        limit: Limit = 50,
        cursor: Cursor = None,
    ) -> BeliefPage:
        """Beliefs across every agent this key can see, newest first (the review queue)."""
        agent_ids = principal_of(request).visible_agents(agent_id)
        if agent_ids == []:
            return BeliefPage(items=[], next_cursor=None)
        rows, next_cursor = await services.beliefs.list_rows(
            agent_ids=agent_ids, status=status, limit=limit, cursor=cursor
        )
        return BeliefPage(items=[belief_from_row(r) for r in rows], next_cursor=next_cursor)

    @get(
        "/beliefs/{belief_id:str}",
        operation_id="getBelief",
        responses=errors(404),
        response_headers=ETAG_HEADER,
    )
    async def get_belief(self, request: Request, belief_id: BeliefIdPath) -> Response[Belief]:
        """One belief; its ETag is the version to send in If-Match."""
        belief = belief_from_row(await load_belief(request, belief_id))
        return Response(belief, headers={"ETag": etag(belief.version)})

    @get("/audit", operation_id="listDecisions", responses=errors())
    async def list_decisions(
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentFilter = None,
        limit: Limit = 50,
        cursor: AuditCursor = None,
    ) -> AuditFeed:
        """Every decision on beliefs this key can see, newest first, each actor named by its
        key's label (the History view): kept, edited, forgotten, reopened, superseded, restored.

        An agent key sees its own agent's decisions only, and a reviewer's key label (often a
        device name) as "a reviewer": the agent learns what was decided, not by whose phone.
        """
        principal = principal_of(request)
        agent_ids = principal.visible_agents(agent_id)
        if agent_ids == []:
            return AuditFeed(items=[], next_cursor=None)
        rows, next_cursor = await audit.decisions(
            services.store,
            agent_ids=agent_ids,
            limit=limit,
            cursor=int(cursor) if cursor else None,
        )
        events = [msgspec.convert(r, AuditEvent) for r in rows]
        if principal.scope == "agent":
            events = _unlabelled(events)
        return AuditFeed(items=events, next_cursor=next_cursor)

    @get("/beliefs/{belief_id:str}/audit", operation_id="getBeliefAudit", responses=errors(404))
    async def get_audit(
        self, request: Request, services: SharedServices, belief_id: BeliefIdPath
    ) -> AuditPage:
        """Every recorded change of one belief, oldest first (reviewers unnamed for agent keys)."""
        await load_belief(request, belief_id)
        rows = await audit.trail(services.store, belief_id)
        entries = [msgspec.convert(r, AuditEntry) for r in rows]
        if principal_of(request).scope == "agent":
            entries = _unlabelled(entries)
        return AuditPage(items=entries)

    @post(
        "/agents/{agent_id:str}/memory/beliefs/proposals",
        operation_id="proposeBeliefs",
        status_code=200,
        responses=errors(403, 404),
    )
    async def propose(
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentIdPath,
        data: JSONBody[ProposalsIn],
    ) -> ProposalsResult:
        """Submit up to 10 proposed beliefs; accepted ones become pending review."""
        await load_agent(request, agent_id)
        return await submit_proposals(services, principal_of(request), agent_id, data.proposals)

    async def _decide(
        self,
        request: Request,
        belief_id: str,
        decision: Decision,
        if_match: str | None,
        idempotency_key: str | None,
    ) -> Response[Belief]:
        principal = principal_of(request)
        principal.require_decider()
        outcome = await Decisions(services_of(request).beliefs).decide(
            belief_id, decision, principal, if_match=if_match, idempotency_key=idempotency_key
        )
        return outcome_response(outcome)

    @decision(
        "keep",
        "Keep a pending belief: it becomes active memory (an untrusted one is a 409: edit it)."
        + RETIRE_RULES,
        bodiless=BARE_KEEP,
    )
    async def keep(
        self,
        request: Request,
        belief_id: BeliefIdPath,
        data: JSONBody[KeepIn | None] = None,
        if_match: IfMatch = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Belief]:
        """Keep a pending belief: it becomes active memory."""
        keep = Keep(retire_list(data.retire)) if data is not None else BARE_KEEP
        return await self._decide(request, belief_id, keep, if_match, idempotency_key)

    @decision("forget", bodiless=BARE_FORGET)
    async def forget(
        self,
        request: Request,
        belief_id: BeliefIdPath,
        data: JSONBody[ForgetIn | None] = None,
        if_match: IfMatch = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Belief]:
        """Forget a belief; it stays remembered as refused, with the reason."""
        forget = Forget(data.reason) if data is not None else BARE_FORGET
        return await self._decide(request, belief_id, forget, if_match, idempotency_key)

    @decision(
        "edit",
        "Rewrite a belief in the owner's words: it becomes active with provenance owner."
        + RETIRE_RULES,
    )
    async def edit(
        self,
        request: Request,
        belief_id: BeliefIdPath,
        data: JSONBody[EditIn],
        if_match: IfMatch = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Belief]:
        """Rewrite a belief in the owner's words: it becomes active with provenance owner."""
        edit = Edit(data.content, retire_list(data.retire))
        return await self._decide(request, belief_id, edit, if_match, idempotency_key)

    @decision("reopen", bodiless=BARE_REOPEN)
    async def reopen(
        self,
        request: Request,
        belief_id: BeliefIdPath,
        if_match: IfMatch = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Belief]:
        """Undo a decision: the belief goes back to pending (and what it retired comes back)."""
        return await self._decide(request, belief_id, BARE_REOPEN, if_match, idempotency_key)


async def submit_proposals(
    services: Services, principal: Principal, agent_id: str, proposals: Sequence[ProposalIn]
) -> ProposalsResult:
    """Run proposals through the gate as pending beliefs (REST and MCP both call this).

    Review reasons come from the gate: a client other than an admin may not send any (403),
    since a planted ``contradicts:<id>`` would offer to retire a belief the agent chose. A
    reviewer key proposes only with an admin's write grant (403 otherwise).
    """
    principal.require_writer()
    if principal.scope != "admin":
        for index, proposal in enumerate(proposals):
            if proposal.review_reasons:
                raise PermissionDeniedException(
                    f"proposals[{index}].review_reasons: set by the gate only; put your own"
                    " words in note"
                )
    results = await services.beliefs.propose(
        agent_id, proposals, ProposedBy(key_id=principal.key_id), principal.actor
    )
    return ProposalsResult(results=results)
