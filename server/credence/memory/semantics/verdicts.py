"""What the proposals logic reads from gate verdicts: past decisions named, batch duplicates."""

from __future__ import annotations

from credence.memory.semantics.belief_index import BeliefIndex
from credence.memory.semantics.gate_terms import GateResult
from credence.models.reasons import Reason

PAST_DECISION = {"forgotten": "previously_forgotten", "superseded": "previously_superseded"}


def named_reasons(reasons: tuple[Reason, ...], index: BeliefIndex) -> tuple[Reason, ...]:
    """Gate reasons, naming a duplicate of a retired belief as that past decision."""
    named = []
    for reason in reasons:
        past = PAST_DECISION.get(index.status_of(reason.target or "") or "")
        if reason.kind in ("duplicate_of", "near_duplicate_of") and past:
            reason = Reason(past, reason.target)
        named.append(reason)
    return tuple(named)


def batch_duplicate(verdict: GateResult, accepted: set[int]) -> Reason | None:
    """The gate's ``duplicate_in_batch`` reason when the proposal it restates was accepted.

    If that one was refused for its own reasons (an unknown source, say), this one still gets
    its chance.
    """
    for reason in verdict.reasons:
        if reason.kind == "duplicate_in_batch" and int(reason.target or -1) in accepted:
            return reason
    return None
