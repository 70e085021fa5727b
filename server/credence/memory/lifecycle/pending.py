"""A proposal written as a pending belief, inside the transaction that proposes it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from credence.clock import parse_rfc3339, rfc3339
from credence.db import beliefs as rows_of
from credence.db.beliefs import BeliefRecord
from credence.ids import new_id
from credence.memory.ingest.provenance import (
    RECENT_THIRD_PARTY,
    UNSOURCED_WINDOW,
    proposal_provenance,
)
from credence.memory.lifecycle import audit
from credence.memory.lifecycle.proposers import proposed_by_json
from credence.memory.semantics import gate as gate_rules
from credence.memory.semantics.tokens import normalise, older_keys
from credence.memory.semantics.verdicts import PAST_DECISION
from credence.models import ProposalIn, ProposedBy
from credence.models.reasons import Reason, encode_all

if TYPE_CHECKING:
    from credence.db.engine import Connection


def no_nul(text: str) -> str:
    """PostgreSQL text cannot hold NUL; a reflector's output may (the API refuses it already)."""
    return text.replace("\x00", "")


async def rejection(
    conn: Connection, agent_id: str, proposal: ProposalIn, key: str
) -> Reason | None:
    """Why this proposal cannot become pending whatever the gate says, or None.

    The exact-text check runs again here, inside the writing transaction, so two concurrent
    submissions of one lesson cannot both land.
    """
    known = await rows_of.agent_episodes(conn, agent_id, proposal.source_episodes)
    for episode_id in proposal.source_episodes:
        if episode_id not in known:
            return Reason("unknown_source_episode", episode_id)
    target = proposal.target_belief_id
    if proposal.op == "add" and target is not None:
        return Reason("target_not_allowed", "add")
    if proposal.op != "add":
        if target is None:
            return Reason("missing_target", proposal.op)
        if await rows_of.target_status(conn, agent_id, target) is None:
            return Reason("unknown_target", target)
    # Rows stored under an older key (see ``older_keys``) are found by it, then compared anew.
    stored = await rows_of.with_key(conn, agent_id, (key, *older_keys(key)))
    exact = [
        (i, status) for i, status, content in stored if i != target and normalise(content) == key
    ]
    if exact:
        first_id, first_status = exact[0]
        return Reason(PAST_DECISION.get(first_status, "duplicate_of"), first_id)
    return None


async def insert_pending(
    conn: Connection,
    agent_id: str,
    proposal: ProposalIn,
    key: str,
    embedding: np.ndarray,
    model: str,
    proposer: ProposedBy,
    actor: str,
    now: str,
    *,
    flags: Sequence[Reason] = (),
    imported: bool = False,
) -> BeliefRecord:
    """Insert one proposal as a pending belief with its review reasons (the gate's ``flags``
    and what its sources and op add) and its audit row; the record of the new belief."""
    untrusted = await rows_of.any_untrusted_episode(conn, proposal.source_episodes)
    recent = not proposal.source_episodes and await rows_of.untrusted_episode_between(
        conn, agent_id, rfc3339(parse_rfc3339(now) - UNSOURCED_WINDOW), now
    )
    reasons = list(flags)
    if proposal.op != "add":
        reasons.append(Reason("op", proposal.op))
    if untrusted or recent:
        reasons.append(Reason("untrusted_source"))
    if recent:
        reasons.append(Reason(RECENT_THIRD_PARTY))
    if not proposal.source_episodes:
        reasons.append(Reason(gate_rules.UNSOURCED))
    belief_id = new_id("b")
    row = {
        "id": belief_id,
        "agent_id": agent_id,
        "role": proposal.role,
        "content": proposal.belief,
        "content_key": key,
        "status": "pending",
        "confidence": proposal.confidence,
        "op": proposal.op,
        "target_belief_id": proposal.target_belief_id,
        "rationale": proposal.rationale,
        "source_episodes": json.dumps(list(dict.fromkeys(proposal.source_episodes))),
        "provenance": proposal_provenance(
            cited_untrusted=untrusted,
            sourced=bool(proposal.source_episodes),
            recent_untrusted=recent,
            imported=imported,
        ),
        "review_reasons": json.dumps(encode_all(reasons)),
        "proposed_by": proposed_by_json(proposer, proposal.note),
        "created_at": now,
        "updated_at": now,
        "embedding": np.asarray(embedding, dtype="<f4").tobytes(),
        "embedding_model": model,
    }
    belief = await rows_of.insert_pending(conn, row)
    await audit.append(
        conn,
        belief_id=belief_id,
        agent_id=agent_id,
        action="proposed",
        actor=actor,
        at=now,
        before_status=None,
        after_status="pending",
        before_content=None,
        after_content=proposal.belief,
        version=1,
        detail=proposal.op,
    )
    return belief
