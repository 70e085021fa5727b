"""The four decisions as types, and the pure rule that turns one into a belief's transition."""

from __future__ import annotations

from typing import Any

import msgspec

from credence.db.audit import AuditEntry
from credence.db.beliefs import BeliefRecord, BeliefWrite, Subject
from credence.errors import (
    Conflict,
    DomainError,
    PreconditionFailed,
    PreconditionRequired,
    Unprocessable,
)
from credence.memory.lifecycle.audit import content_hash
from credence.memory.semantics.tokens import normalise
from credence.models.common import BeliefStatus
from credence.models.reasons import targets

__all__ = [
    "RESTATING_OPS",
    "RETIRED",
    "Decision",
    "Edit",
    "Embedded",
    "Forget",
    "Keep",
    "Reopen",
    "Transition",
    "decide",
    "etag",
    "parse_if_match",
]

RETIRED = ("forgotten", "superseded")
# Ops whose kept belief restates its target with a new confidence: the target is retired with it.
# A `supersede` target is retired only when the reviewer names it in `retire`.
RESTATING_OPS = ("strengthen", "weaken")


class Keep(msgspec.Struct, frozen=True, tag="keep"):
    """Make a pending belief active memory, retiring the beliefs named in ``retire``."""

    retire: tuple[str, ...] = ()

    def payload(self) -> dict[str, Any]:
        """The request's content as its Idempotency-Key fingerprint sees it."""
        return {"retire": sorted(set(self.retire))} if self.retire else {}


class Forget(msgspec.Struct, frozen=True, tag="forget"):
    """Refuse a belief, with the reviewer's reason."""

    reason: str | None = None

    def payload(self) -> dict[str, Any]:
        """The request's content as its Idempotency-Key fingerprint sees it."""
        return {"reason": self.reason}


class Edit(msgspec.Struct, frozen=True, tag="edit"):
    """Rewrite a belief in the owner's words (active, provenance owner), retiring ``retire``."""

    content: str
    retire: tuple[str, ...] = ()

    def payload(self) -> dict[str, Any]:
        """The request's content as its Idempotency-Key fingerprint sees it."""
        return {"content": self.content, **Keep(self.retire).payload()}


class Reopen(msgspec.Struct, frozen=True, tag="reopen"):
    """Undo a decision: the belief is pending again and what it retired comes back."""

    def payload(self) -> dict[str, Any]:
        """The request's content as its Idempotency-Key fingerprint sees it."""
        return {}


Decision = Keep | Forget | Edit | Reopen


class Embedded(msgspec.Struct, frozen=True):
    """An edited text's embedding (little-endian float32 bytes) and the model that made it."""

    vector: bytes
    model: str


class Transition(msgspec.Struct, frozen=True, kw_only=True):
    """What one decision does: the belief's new state with its audit entry, the beliefs it
    retires (or restores) with theirs, and the agents whose caches and notification queues
    learn of it after commit. Nothing is written until the store applies it."""

    state: BeliefWrite
    retirements: tuple[BeliefWrite, ...] = ()
    # A kept `forget` proposal forgets its target first: the audit chain keeps that order.
    retirements_first: bool = False

    @property
    def writes(self) -> tuple[BeliefWrite, ...]:
        """Every row to write, in audit order."""
        if self.retirements_first:
            return (*self.retirements, self.state)
        return (self.state, *self.retirements)

    @property
    def notify(self) -> tuple[str, ...]:
        """The agents whose beliefs changed (one, the decided belief's)."""
        return (self.state.after.agent_id,)


def etag(version: int) -> str:
    """The strong ETag of a belief version."""
    return f'"{version}"'


def parse_if_match(value: str | None) -> int | None:
    """The version an If-Match header names, or None when it names none we accept."""
    if value is None:
        return None
    value = value.strip()
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        value = value[1:-1]
    if not value.isdigit() or len(value) > 15:
        return None
    return int(value)


def decide(
    subject: Subject,
    decision: Decision,
    now: str,
    *,
    actor: str,
    if_match: str | None,
    embedded: Embedded | None = None,
) -> Transition | DomainError:
    """Apply one decision's rules to a belief read at ``if_match``; nothing is written.

    ``subject`` is the belief as read for this decision (the caller answers NotFound when the
    caller may not see it); ``embedded`` is the new embedding of an Edit's content.
    """
    row = subject.belief
    current = etag(row.version)
    if if_match is None:
        return PreconditionRequired(
            "If-Match with the belief's ETag is required", extra={"current_etag": current}
        )
    if parse_if_match(if_match) != row.version:
        return PreconditionFailed(
            "the belief changed since you loaded it; reload and decide again",
            extra={"current_etag": current},
        )
    move = _Mover(actor, now)
    match decision:
        case Keep(retire=retire):
            return _keep(subject, retire, move)
        case Forget(reason=reason):
            if row.status == "forgotten":
                return Conflict("this belief is already forgotten")
            reason = (reason or "").strip() or None
            return Transition(
                state=move(row, "forgotten", "forgotten", forgotten_reason=reason),
            )
        case Edit(content=content, retire=retire):
            retiring = _retirable(subject, retire)
            if isinstance(retiring, DomainError):
                return retiring
            if row.status == "pending":
                retiring = _with_restated(subject, retiring)
            state = move(row, "active", "edited", content=content, embedded=embedded)
            return Transition(state=state, retirements=_retire(retiring, row.id, move))
        case Reopen():
            if row.status == "pending":
                return Conflict("this belief is already pending")
            restored = tuple(
                move(r, "pending" if r.provenance == "untrusted" else "active", "restored")
                for r in subject.retired
            )
            return Transition(state=move(row, "pending", "reopened"), retirements=restored)


def _keep(subject: Subject, retire: tuple[str, ...], move: _Mover) -> Transition | DomainError:
    row = subject.belief
    if row.status != "pending":
        return Conflict(f"only a pending belief can be kept; this one is {row.status}")
    if row.provenance == "untrusted":
        return Conflict(
            "this belief came from third-party content and cannot be kept as is;"
            " edit it into your own words to activate it"
        )
    retiring = _retirable(subject, retire)
    if isinstance(retiring, DomainError):
        return retiring
    if row.op == "forget":
        target = subject.related.get(row.target_belief_id or "")
        forgotten: tuple[BeliefWrite, ...] = ()
        if target is not None and target.status not in RETIRED:
            forgotten = (
                move(
                    target,
                    "forgotten",
                    "superseded",
                    detail=f"forgotten_by:{row.id}",
                    forgotten_by=row.id,
                ),
            )
        # The request is carried out, not refused: it retires itself (retired_by its own id).
        state = move(
            row,
            "forgotten",
            "kept",
            detail=f"applied:forget:{row.target_belief_id}",
            retired_by=row.id,
        )
        return Transition(state=state, retirements=forgotten, retirements_first=True)
    retiring = _with_restated(subject, retiring)
    return Transition(
        state=move(row, "active", "kept"), retirements=_retire(retiring, row.id, move)
    )


def _retirable(subject: Subject, retire: tuple[str, ...]) -> list[BeliefRecord] | DomainError:
    """The beliefs ``retire`` names, or the error that refuses the whole decision.

    Only what the belief itself says it replaces may be retired: an id its review reasons flag
    as ``contradicts:<id>``, or its target when its op is ``supersede``.
    """
    if not retire:
        return []
    row = subject.belief
    if row.op == "forget":
        return Unprocessable("a forget proposal retires only its target; retire does not apply")
    allowed = set(targets(row.review_reasons, "contradicts"))
    if row.op == "supersede" and row.target_belief_id is not None:
        allowed.add(row.target_belief_id)
    unflagged = [belief_id for belief_id in retire if belief_id not in allowed]
    if unflagged:
        return Unprocessable(
            "retire may name only beliefs this one contradicts or supersedes",
            extra={"not_retirable": unflagged},
        )
    missing = [belief_id for belief_id in retire if belief_id not in subject.related]
    if missing:
        return Unprocessable(
            "retire names beliefs that do not exist", extra={"not_retirable": missing}
        )
    found = [subject.related[belief_id] for belief_id in retire]
    inactive = {r.id: r.status for r in found if r.status != "active"}
    if inactive:
        return Conflict("only an active belief can be retired", extra={"not_active": inactive})
    return found


def _with_restated(subject: Subject, retiring: list[BeliefRecord]) -> list[BeliefRecord]:
    """``retiring`` plus the target a strengthen / weaken proposal restates, if still live."""
    row = subject.belief
    if row.op not in RESTATING_OPS or row.target_belief_id is None:
        return retiring
    if any(r.id == row.target_belief_id for r in retiring):
        return retiring
    target = subject.related.get(row.target_belief_id)
    if target is None or target.status in RETIRED:
        return retiring
    return [*retiring, target]


def _retire(targets_: list[BeliefRecord], by: str, move: _Mover) -> tuple[BeliefWrite, ...]:
    """Each target superseded by belief ``by`` (audited as ``superseded``)."""
    return tuple(
        move(t, "superseded", "superseded", detail=f"superseded_by:{by}", superseded_by=by)
        for t in targets_
    )


class _Mover:
    """Moves one belief to a new status (bumping its version) with the audit entry for it."""

    def __init__(self, actor: str, now: str) -> None:
        self.actor = actor
        self.now = now

    def __call__(
        self,
        row: BeliefRecord,
        new_status: BeliefStatus,
        action: str,
        *,
        forgotten_reason: str | None = None,
        content: str | None = None,
        embedded: Embedded | None = None,
        detail: str = "",
        superseded_by: str | None = None,
        forgotten_by: str | None = None,
        retired_by: str | None = None,
    ) -> BeliefWrite:
        version = row.version + 1
        new_content = content if content is not None else row.content
        decided_by = self.actor if action != "reopened" else None
        after = msgspec.structs.replace(
            row,
            status=new_status,
            version=version,
            updated_at=self.now,
            decided_by=decided_by,
            decided_at=self.now if decided_by is not None else None,
            forgotten_reason=forgotten_reason if new_status == "forgotten" else None,
            content=new_content,
            content_key=normalise(new_content),
            provenance="owner" if content is not None else row.provenance,
            embedding=embedded.vector if embedded is not None else row.embedding,
            superseded_by=superseded_by if new_status == "superseded" else None,
            forgotten_by=forgotten_by if new_status == "forgotten" else None,
            retired_by=retired_by if new_status == "forgotten" else None,
            proposed_content=(
                (row.proposed_content if row.proposed_content is not None else row.content)
                if content is not None
                else row.proposed_content
            ),
        )
        entry = AuditEntry(
            belief_id=row.id,
            agent_id=row.agent_id,
            action=action,
            actor=self.actor,
            at=self.now,
            before_status=row.status,
            after_status=new_status,
            before_hash=content_hash(row.content),
            after_hash=content_hash(new_content),
            version=version,
            detail=detail or (forgotten_reason or ""),
        )
        return BeliefWrite(
            before=row,
            after=after,
            audit=entry,
            new_embedding=embedded is not None,
            embedding_model=embedded.model if embedded is not None else None,
        )
