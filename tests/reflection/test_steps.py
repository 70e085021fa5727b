"""The typed steps: submit's pure parts, the job output, and submit sending check's verdicts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import msgspec
import pytest

from credence.clock import fixed_clock, rfc3339
from credence.memory.lifecycle.beliefs import belief_from_row
from credence.memory.semantics.decay import Decayed
from credence.memory.semantics.gate import GateResult, Proposal
from credence.memory.semantics.tokens import normalise
from credence.models import EpisodeIn, JobInput, JobOutput, JobResult, JobUsage, ReflectionSettings
from credence.models.reasons import Reason, decode
from credence.reflection import steps
from credence.reflection.checkpoints import CheckCheckpoint, ProposeCheckpoint, SubmitCheckpoint
from credence.reflection.deps import ReflectionDeps
from credence.reflection.parse import Dropped, ParseResult
from credence.services import open_services
from credence.settings import Settings

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def proposal(
    index: int, belief: str, rationale: str = "The user said so.", source: str = "ep_1"
) -> Proposal:
    return Proposal(
        index=index,
        op="add",
        belief=belief,
        confidence=0.6,
        rationale=rationale,
        source_episodes=(source,),
    )


def gated(
    index: int, belief: str, gate: str = "safe", *reasons: str, source: str = "ep_1"
) -> steps.Gated:
    verdict = GateResult(index, gate, tuple(decode(r) for r in reasons))
    return steps.Gated(proposal(index, belief, source=source), verdict)


def proposed(
    proposals: tuple[Proposal, ...], dropped: tuple[Dropped, ...] = (), **meta
) -> steps.Proposed:
    checkpoint = ProposeCheckpoint(
        reflector="stub",
        considered=["ep_1", "ep_2"],
        valid=len(proposals),
        dropped=len(dropped),
        **meta,
    )
    return steps.Proposed(checkpoint, ReflectionSettings(), "[]", ParseResult(proposals, dropped))


def checked(pairs: tuple[steps.Gated, ...], decayed: tuple[Decayed, ...] = ()) -> steps.Checked:
    counts = steps.check_checkpoint(pairs, live_beliefs=7, gated_against=2, decayed=len(decayed))
    return steps.Checked(
        counts,
        proposed(tuple(p.proposal for p in pairs), (Dropped(3, "empty_belief"),)),
        pairs,
        decayed,
    )


# --- pure parts -------------------------------------------------------------------------------


def test_check_counts_each_verdict_once() -> None:
    pairs = (
        gated(0, "A."),
        gated(1, "B.", "needs_review", "unsourced"),
        gated(2, "C.", "duplicate", "duplicate_of:b_1"),
        gated(3, "D."),
    )
    assert steps.check_checkpoint(pairs, 10, 4, 1) == CheckCheckpoint(
        safe=2, needs_review=1, duplicate=1, live_beliefs=10, gated_against=4, decayed=1
    )


def test_a_duplicate_is_settled_with_its_duplicate_reason() -> None:
    pair = gated(0, "Use grams.", "duplicate", "unsourced", "near_duplicate_of:b_9")
    assert steps.settled_without_sending(pair, {}) == steps.Outcome(
        False, None, "near_duplicate_of:b_9"
    )
    bare = gated(0, "Use grams.", "duplicate")
    assert steps.settled_without_sending(bare, {}) == steps.Outcome(False, None, "duplicate")


def test_a_belief_an_earlier_attempt_made_is_reported_not_sent_again() -> None:
    already = {normalise("Use grams."): "b_made"}
    assert steps.settled_without_sending(gated(0, "Use  GRAMS."), already) == steps.Outcome(
        True, "b_made"
    )
    assert steps.settled_without_sending(gated(1, "Use cups."), already) is None


def test_a_needs_review_proposal_says_why_in_its_rationale() -> None:
    flagged = steps.proposal_in(gated(0, "Use grams.", "needs_review", "unsourced", "op:edit"))
    assert flagged.rationale == "[needs human review] unsourced, op:edit. The user said so."
    assert flagged.source_episodes == ["ep_1"] and flagged.belief == "Use grams."
    long = steps.Gated(proposal(0, "Use grams.", "r" * 5000), GateResult(0, "safe", ()))
    assert steps.proposal_in(long).rationale == "r" * steps.MAX_RATIONALE


def test_review_reasons_are_bounded() -> None:
    verdict = GateResult(0, "needs_review", tuple(Reason("unsettled", f"b_{n}") for n in range(30)))
    bounded = steps.bounded_verdict(verdict)
    assert bounded.reasons == verdict.reasons[: steps.MAX_REVIEW_REASONS]


def test_results_line_up_with_the_gated_proposals() -> None:
    pairs = (gated(0, "A."), gated(2, "C.", "duplicate", "duplicate_of:b_1"))
    outcomes = (steps.Outcome(True, "b_new"), steps.Outcome(False, None, "duplicate_of:b_1"))
    results = steps.job_results(pairs, outcomes)
    assert [(r.index, r.accepted, r.belief_id, r.rejected_reason) for r in results] == [
        (0, True, "b_new", None),
        (2, False, None, "duplicate_of:b_1"),
    ]
    assert results[1].reasons == ["duplicate_of:b_1"] and results[1].gate == "duplicate"
    with pytest.raises(ValueError):
        steps.job_results(pairs, outcomes[:1])


def test_the_job_output_is_assembled_from_the_step_outputs() -> None:
    usage = JobUsage(
        attempts=1, prompt_tokens=10, completion_tokens=5, token_cap=100, finish_reason="stop"
    )
    pairs = (gated(0, "A."),)
    decayed = (Decayed("b_old", 0.9, 0.81234567891, 5.123456789),)
    check = checked(pairs, decayed)
    check = msgspec.structs.replace(
        check,
        proposed=msgspec.structs.replace(
            check.proposed,
            checkpoint=msgspec.structs.replace(check.proposed.checkpoint, usage=usage),
        ),
    )
    result = JobResult(
        index=0,
        op="add",
        belief="A.",
        confidence=0.6,
        gate="safe",
        reasons=[],
        accepted=True,
        belief_id="b_new",
        rejected_reason=None,
    )
    submitted = steps.Submitted(SubmitCheckpoint(accepted=1, rejected=0), check, (result,))
    output = steps.job_output(submitted)
    assert msgspec.json.decode(msgspec.json.encode(output), type=JobOutput) == output
    assert msgspec.to_builtins(output) == {
        "episodes_considered": 2,
        "proposed": 2,
        "results": [msgspec.to_builtins(result)],
        "dropped": [{"index": 3, "reason": "empty_belief"}],
        "decayed": [
            {
                "belief_id": "b_old",
                "confidence": 0.9,
                "decayed_confidence": 0.812346,
                "age_days": 5.1235,
            }
        ],
        "reflector": "stub",
        "partial": None,
        "usage": msgspec.to_builtins(usage),
    }


# --- submit against a real store --------------------------------------------------------------


@pytest.fixture
async def deps(settings: Settings) -> AsyncIterator[ReflectionDeps]:
    """The reflection dependencies of a fresh store (either engine) with agent ada."""
    async with open_services(settings, clock=fixed_clock(T0)) as services:

        async def agent(conn):
            await conn.run(
                "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('ada', 'Ada', ?, ?)",
                (rfc3339(T0), rfc3339(T0)),
            )

        await services.store.write(agent)
        await services.episodes.ingest("ada", [EpisodeIn(session_id="s", summary="Baked bread.")])
        yield services.reflection


def _run(deps: ReflectionDeps) -> steps.JobRun:
    return steps.JobRun(
        job_id="job_test",
        agent_id="ada",
        owner="wrk_test",
        input=JobInput(agent_id="ada"),
        clock=deps.clock,
        sleep=asyncio.sleep,
    )


async def test_submit_applies_checks_verdicts_and_never_gates_again(deps: ReflectionDeps) -> None:
    # The gate would call both proposals safe in an empty memory; these verdicts are check's
    # alone, so what the beliefs carry shows submit used them.
    (episode,) = await deps.store.fetchall("SELECT id FROM episodes")
    source = episode["id"]
    pairs = (
        gated(0, "Weigh flour in grams.", "needs_review", "unsupported_language", source=source),
        gated(1, "Ask before deleting.", "duplicate", "duplicate_of:b_elsewhere", source=source),
    )
    submitted = await steps.submit(deps, _run(deps), checked(pairs))
    first, second = submitted.results
    assert first.accepted and first.gate == "needs_review"
    assert first.reasons == ["unsupported_language"]
    assert not second.accepted and second.rejected_reason == "duplicate_of:b_elsewhere"
    assert submitted.checkpoint == SubmitCheckpoint(accepted=1, rejected=1)
    assert first.belief_id is not None
    belief = belief_from_row(await deps.beliefs.get_row(first.belief_id))
    assert belief.review_reasons == ["unsupported_language"]
    assert belief.rationale.startswith("[needs human review] unsupported_language.")
    assert belief.proposed_by.job_id == "job_test" and belief.proposed_by.reflector == "stub"
    rows = await deps.beliefs.list_rows(agent_ids=["ada"], status=None, limit=10, cursor=None)
    assert [row["id"] for row in rows[0]] == [first.belief_id]  # the duplicate was never sent
