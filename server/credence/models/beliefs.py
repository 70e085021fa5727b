"""Belief models: proposals, decisions (keep, edit, forget) and the audit trail."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta, Struct

from credence.models.common import (
    NO_NUL,
    SLUG_PATTERN,
    BeliefOp,
    BeliefStatus,
    BeliefText,
    Confidence,
    ObjectId,
    Provenance,
    TimestampText,
)
from credence.models.reasons import StructuredReason


class ProposedBy(Struct, frozen=True, kw_only=True):
    """Who proposed a belief."""

    key_id: str | None = None
    job_id: str | None = None
    reflector: str | None = None


class Belief(Struct, frozen=True, kw_only=True):
    """A belief: pending, active memory, forgotten (refused), or superseded by another."""

    id: str
    agent_id: str
    role: str | None
    content: str
    status: BeliefStatus
    confidence: float
    op: BeliefOp
    target_belief_id: str | None
    rationale: str
    source_episodes: list[str]
    provenance: Provenance
    review_reasons: Annotated[
        list[str],
        Meta(
            description="Deprecated: the gate's reasons as strings (`kind`, `kind:target` or"
            " `changes:target:old→new`); read `reasons` instead."
        ),
    ]
    reasons: Annotated[
        list[StructuredReason],
        Meta(
            description="Why the gate flagged this belief: each reason's `kind`"
            " (`contradicts`, `changes`, `near_duplicate_of`, `unsettled`, …), the belief id"
            " it is about in `target`, and for `changes` the value that changed."
        ),
    ]
    proposed_by: ProposedBy
    version: int
    created_at: TimestampText
    updated_at: TimestampText
    decided_by: str | None
    decided_at: TimestampText | None
    forgotten_reason: Annotated[
        str | None,
        Meta(
            description="The reviewer's own words when they forgot this belief. Deprecated"
            " for one release: a belief the machinery forgot still shows its old marker here"
            " (`forgotten_by:<id>`, `applied:forget:<id>`, `superseded_by:<id>`); read"
            " `forgotten_by` and `retired_by` instead."
        ),
    ]
    injection_count: int
    last_injected_at: TimestampText | None
    superseded_by: str | None
    note: str | None = None
    forgotten_by: Annotated[
        str | None,
        Meta(description="The kept forget request that forgot this belief, if one did."),
    ] = None
    retired_by: Annotated[
        str | None,
        Meta(
            description="The kept belief that retired this forgotten one without a refusal:"
            " a forget request that was carried out names itself; a belief forgotten as"
            " superseded before superseded_by existed names its successor."
        ),
    ] = None


class BeliefPage(Struct, frozen=True):
    """A page of beliefs, newest first."""

    items: list[Belief]
    next_cursor: str | None = None


class ProposalIn(Struct, frozen=True, kw_only=True):
    """One proposed change to an agent's memory."""

    op: BeliefOp
    belief: BeliefText
    confidence: Confidence
    rationale: Annotated[str, Meta(max_length=4000, pattern=NO_NUL)] = ""
    source_episodes: Annotated[list[ObjectId], Meta(max_length=200)] = msgspec.field(
        default_factory=list
    )
    target_belief_id: ObjectId | None = None
    role: Annotated[str, Meta(pattern=SLUG_PATTERN)] | None = None
    review_reasons: Annotated[
        list[Annotated[str, Meta(max_length=200)]],
        Meta(
            max_length=20,
            description=(
                "Set by the gate. Only an admin key may send them (seeding, tests): any other"
                " key gets 403. Put your own words in `note`."
            ),
        ),
    ] = msgspec.field(default_factory=list)
    note: (
        Annotated[
            str,
            Meta(
                max_length=1000,
                pattern=NO_NUL,
                description=(
                    "Free text from the proposer, shown to the reviewer as the proposer's own"
                    " words (quoted), never as a flag"
                ),
            ),
        ]
        | None
    ) = None


class ProposalsIn(Struct, frozen=True):
    """Up to 10 proposals at once."""

    proposals: Annotated[list[ProposalIn], Meta(max_length=10)]


class ProposalResult(Struct, frozen=True):
    """What became of one proposal."""

    index: int
    accepted: bool
    belief_id: str | None
    rejected_reason: str | None


class ProposalsResult(Struct, frozen=True):
    """What became of each proposal, by index."""

    results: list[ProposalResult]


class ForgetIn(Struct, frozen=True, kw_only=True):
    """Forget a belief, optionally saying why."""

    reason: Annotated[str, Meta(max_length=1000, pattern=NO_NUL)] | None = None


RetireList = Annotated[
    list[ObjectId],
    Meta(
        max_length=20,
        description="Active beliefs to retire (superseded by this one): each must be one this"
        " belief's review_reasons flag as `contradicts:<id>`, or its target when its op is"
        " `supersede`. Omitted or empty: nothing is retired (both stay active).",
    ),
]


class KeepIn(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Keep a pending belief, optionally retiring the beliefs it replaces."""

    retire: RetireList = msgspec.field(default_factory=list)


class EditIn(Struct, frozen=True, forbid_unknown_fields=True):
    """Replace a belief's content with the owner's own words, optionally retiring others."""

    content: BeliefText
    retire: RetireList = msgspec.field(default_factory=list)


class AuditEntry(Struct, frozen=True, kw_only=True):
    """One append-only audit row."""

    seq: int
    belief_id: str
    action: str
    actor: str
    at: TimestampText
    before_status: BeliefStatus | None
    after_status: BeliefStatus
    before_hash: str | None
    after_hash: str
    version: int
    detail: str
    prev_hash: str
    row_hash: str
    actor_label: str = ""
    reviewer_id: str | None = None
    reviewer_name: str | None = None
    device: str | None = None


class AuditPage(Struct, frozen=True):
    """A belief's audit trail, oldest first."""

    items: list[AuditEntry]


class AuditEvent(Struct, frozen=True, kw_only=True):
    """One decision in the history feed: what happened to which belief, by whom (in words)."""

    seq: int
    belief_id: str
    agent_id: str
    content: str
    action: str
    actor: str
    actor_label: str
    at: TimestampText
    before_status: str | None
    after_status: str
    version: int
    detail: str
    reviewer_id: str | None = None
    reviewer_name: str | None = None
    device: str | None = None


class AuditFeed(Struct, frozen=True):
    """Decisions newest first (kept, edited, forgotten, reopened, superseded, restored)."""

    items: list[AuditEvent]
    next_cursor: str | None = None


class AuditVerification(Struct, frozen=True):
    """The result of walking the whole audit chain."""

    ok: bool
    rows: int
    first_broken: int | None
