"""The decision rules on decide() alone: no store, no server."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from credence.db.beliefs import BeliefRecord, Subject
from credence.errors import (
    Conflict,
    PreconditionFailed,
    PreconditionRequired,
    Unprocessable,
    status_of,
)
from credence.memory.lifecycle.audit import content_hash
from credence.memory.lifecycle.decisions import (
    Decision,
    Edit,
    Embedded,
    Forget,
    Keep,
    Reopen,
    Transition,
    decide,
    parse_if_match,
)
from credence.models.reasons import Reason

NOW = "2030-01-02T00:00:00.000000Z"
ACTOR = "key:k_admin"


def record(belief_id: str = "b_1", **fields: Any) -> BeliefRecord:
    """A belief as the store reads it (pending, clean, op add, version 1 unless told)."""
    base: dict[str, Any] = {
        "id": belief_id,
        "agent_id": "ada",
        "role": None,
        "content": f"Lesson {belief_id}",
        "content_key": f"lesson {belief_id}",
        "status": "pending",
        "confidence": 0.7,
        "op": "add",
        "target_belief_id": None,
        "rationale": "",
        "source_episodes": ["ep_1"],
        "provenance": "clean",
        "review_reasons": [],
        "proposed_by": {"key_id": "k"},
        "version": 1,
        "created_at": "2030-01-01T00:00:00.000000Z",
        "updated_at": "2030-01-01T00:00:00.000000Z",
        "decided_by": None,
        "decided_at": None,
        "forgotten_reason": None,
        "embedding": b"\x00" * 8,
        "injection_count": 0,
        "last_injected_at": None,
        "superseded_by": None,
        "proposed_content": None,
    }
    return BeliefRecord(**{**base, **fields})


def subject(
    belief: BeliefRecord, *related: BeliefRecord, retired: tuple[BeliefRecord, ...] = ()
) -> Subject:
    return Subject(belief=belief, related={r.id: r for r in related}, retired=list(retired))


def applied(outcome: Transition | Exception) -> Transition:
    assert isinstance(outcome, Transition), outcome
    return outcome


def run(s: Subject, decision: Decision, if_match: str | None = '"1"', **kw: Any) -> Any:
    return decide(s, decision, NOW, actor=ACTOR, if_match=if_match, **kw)


def test_keep_makes_a_pending_belief_active_with_one_audit_entry() -> None:
    transition = applied(run(subject(record()), Keep()))
    after = transition.state.after
    assert (after.status, after.version, after.decided_by, after.decided_at) == (
        "active",
        2,
        ACTOR,
        NOW,
    )
    assert transition.retirements == () and transition.notify == ("ada",)
    entry = transition.state.audit
    assert (entry.action, entry.before_status, entry.after_status, entry.version) == (
        "kept",
        "pending",
        "active",
        2,
    )
    assert entry.before_hash == entry.after_hash == content_hash("Lesson b_1")


@pytest.mark.parametrize(
    ("if_match", "error", "status"),
    [
        (None, PreconditionRequired, 428),
        ('"2"', PreconditionFailed, 412),
        ("W/1", PreconditionFailed, 412),
    ],
)
def test_if_match_is_required_and_must_name_the_current_version(
    if_match: str | None, error: type[Exception], status: int
) -> None:
    refused = run(subject(record()), Keep(), if_match=if_match)
    assert type(refused) is error and status_of(refused) == status
    assert refused.extra == {"current_etag": '"1"'}


def test_keep_refuses_what_is_not_pending_and_untrusted_text() -> None:
    assert isinstance(run(subject(record(status="active")), Keep()), Conflict)
    refused = run(subject(record(provenance="untrusted")), Keep())
    assert isinstance(refused, Conflict) and "edit it into your own words" in refused.detail


def test_retire_names_only_flagged_beliefs_that_exist_and_are_active() -> None:
    old = record("b_old", status="active")
    flagged = record(
        review_reasons=[Reason("contradicts", "b_old"), Reason("contradicts", "b_gone")]
    )
    kept = applied(run(subject(flagged, old), Keep(("b_old",))))
    (retired,) = kept.retirements
    assert (retired.after.status, retired.after.superseded_by, retired.audit.detail) == (
        "superseded",
        "b_1",
        "superseded_by:b_1",
    )
    unflagged = run(subject(flagged, old), Keep(("b_other",)))
    assert isinstance(unflagged, Unprocessable) and unflagged.extra == {
        "not_retirable": ["b_other"]
    }
    missing = run(subject(flagged, old), Keep(("b_gone",)))
    assert isinstance(missing, Unprocessable) and missing.extra == {"not_retirable": ["b_gone"]}
    inactive = run(subject(flagged, record("b_old", status="forgotten")), Keep(("b_old",)))
    assert isinstance(inactive, Conflict) and inactive.extra == {
        "not_active": {"b_old": "forgotten"}
    }


def test_a_strengthen_retires_the_target_it_restates_without_being_told() -> None:
    target = record("b_target", status="active")
    restating = record(op="strengthen", target_belief_id="b_target")
    kept = applied(run(subject(restating, target), Keep()))
    assert [w.after.id for w in kept.writes] == ["b_1", "b_target"]
    assert kept.retirements[0].after.status == "superseded"
    # An already retired target is left alone.
    gone = applied(run(subject(restating, record("b_target", status="forgotten")), Keep()))
    assert gone.retirements == ()


def test_keeping_a_forget_proposal_forgets_its_target_first() -> None:
    target = record("b_target", status="active")
    forgetting = record(op="forget", target_belief_id="b_target")
    kept = applied(run(subject(forgetting, target), Keep()))
    assert [(w.after.id, w.after.status, w.audit.action) for w in kept.writes] == [
        ("b_target", "forgotten", "superseded"),
        ("b_1", "forgotten", "kept"),
    ]
    # The machinery's facts are columns; forgotten_reason stays for the reviewer's words.
    target_after, request_after = kept.writes[0].after, kept.state.after
    assert (target_after.forgotten_by, target_after.retired_by) == ("b_1", None)
    assert (request_after.forgotten_by, request_after.retired_by) == (None, "b_1")
    assert target_after.forgotten_reason is None and request_after.forgotten_reason is None
    # The audit trail reads as before.
    assert [w.audit.detail for w in kept.writes] == ["forgotten_by:b_1", "applied:forget:b_target"]
    assert isinstance(run(subject(forgetting, target), Keep(("b_target",))), Unprocessable)


def test_forget_keeps_the_trimmed_reason_and_refuses_twice() -> None:
    forgotten = applied(run(subject(record(status="active")), Forget("  too broad ")))
    assert forgotten.state.after.forgotten_reason == "too broad"
    assert forgotten.state.audit.detail == "too broad"
    blank = applied(run(subject(record()), Forget("   ")))
    assert blank.state.after.forgotten_reason is None
    assert isinstance(run(subject(record(status="forgotten")), Forget()), Conflict)


def test_edit_is_the_owners_text_with_its_new_embedding() -> None:
    embedded = Embedded(b"\x01" * 8, "model-x")
    edited = applied(
        run(subject(record(provenance="untrusted")), Edit("Split PDFs first"), embedded=embedded)
    )
    write = edited.state
    assert (write.after.status, write.after.provenance, write.after.content) == (
        "active",
        "owner",
        "Split PDFs first",
    )
    assert write.after.proposed_content == "Lesson b_1"
    assert (write.new_embedding, write.embedding_model, write.after.embedding) == (
        True,
        "model-x",
        b"\x01" * 8,
    )
    assert write.audit.after_hash == content_hash("Split PDFs first")
    # A second edit keeps the proposal's own words, not the first edit's.
    again = applied(run(subject(write.after), Edit("Split big PDFs first"), if_match='"2"'))
    assert again.state.after.proposed_content == "Lesson b_1"


def test_reopen_undoes_a_decision_and_restores_what_it_retired() -> None:
    kept = record(status="active", decided_by=ACTOR, decided_at=NOW)
    superseded = record("b_old", status="superseded", superseded_by="b_1")
    untrusted = record("b_web", status="forgotten", provenance="untrusted", forgotten_by="b_1")
    reopened = applied(run(subject(kept, retired=(superseded, untrusted)), Reopen()))
    assert (reopened.state.after.status, reopened.state.after.decided_by) == ("pending", None)
    assert [(w.after.id, w.after.status, w.after.superseded_by) for w in reopened.retirements] == [
        ("b_old", "active", None),
        ("b_web", "pending", None),
    ]
    assert {w.audit.action for w in reopened.retirements} == {"restored"}
    assert [w.after.forgotten_by for w in reopened.retirements] == [None, None]
    assert isinstance(run(subject(record()), Reopen()), Conflict)


def test_decisions_decode_from_their_tag_and_fingerprint_their_content() -> None:
    decision = msgspec.convert({"type": "keep", "retire": ["b_2", "b_1", "b_2"]}, Decision)
    assert decision == Keep(("b_2", "b_1", "b_2"))
    assert decision.payload() == {"retire": ["b_1", "b_2"]}
    assert Keep().payload() == {} and Reopen().payload() == {}
    assert Edit("x").payload() == {"content": "x"}
    assert Forget().payload() == {"reason": None}


@pytest.mark.parametrize(
    ("header", "version"), [('"3"', 3), ("3", 3), (' "12" ', 12), ('W/"3"', None), ("", None)]
)
def test_parse_if_match(header: str, version: int | None) -> None:
    assert parse_if_match(header) == version
