"""Tests for the gate: duplicates, contradictions, op routing, provenance and decay."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import numpy
import pytest
from harness.gate_corpus import polarity_conflict

from credence.memory.semantics.gate import (
    BeliefIndex,
    Decayed,
    GateResult,
    LiveBelief,
    Proposal,
    decay_report,
    decayed_confidence,
    gate,
)
from credence.memory.semantics.tokens import analyse, content_tokens, is_negative
from credence.models.reasons import Reason

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def belief(
    belief_id: str,
    content: str,
    status: str = "active",
    confidence: float = 0.8,
    created: datetime = NOW,
    updated: datetime | None = None,
    embedding: numpy.ndarray | None = None,
) -> LiveBelief:
    return LiveBelief(
        id=belief_id,
        content=content,
        status=status,
        confidence=confidence,
        created_at=created,
        updated_at=updated or created,
        embedding=embedding,
    )


def proposal(
    index: int,
    text: str,
    op: str = "add",
    sources: tuple[str, ...] = ("ep_1",),
    target: str | None = None,
) -> Proposal:
    return Proposal(
        index=index,
        op=op,
        belief=text,
        confidence=0.7,
        rationale="because",
        source_episodes=sources,
        target_belief_id=target,
    )


def run(proposals, beliefs, untrusted=frozenset(), embeddings=None) -> list[GateResult]:
    return gate(proposals, BeliefIndex.build(beliefs), untrusted, embeddings)


# --- duplicates -----------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["pending", "active", "forgotten"])
@pytest.mark.parametrize(
    "variant",
    [
        "PDFs over 10MB exhaust the ingester.",
        "pdfs over 10mb exhaust the ingester",
        "  PDFs   over 10MB\texhaust the ingester!!! ",
        "PDFs, over 10MB, exhaust the ingester?",
    ],
)
def test_duplicate_of_a_live_belief_ignores_case_whitespace_and_punctuation(
    status: str, variant: str
) -> None:
    beliefs = [belief("bel_1", "PDFs over 10MB exhaust the ingester", status=status)]
    [result] = run([proposal(0, variant)], beliefs)
    assert result == GateResult(
        index=0, gate="duplicate", reasons=(Reason("duplicate_of", "bel_1"),)
    )


def test_a_different_text_is_not_a_duplicate() -> None:
    beliefs = [belief("bel_1", "PDFs over 10MB exhaust the ingester")]
    [result] = run([proposal(0, "Scanned receipts need a second approver")], beliefs)
    assert result.gate == "safe"
    assert result.reasons == ()


def test_a_changed_value_is_a_contradiction_that_names_the_change() -> None:
    beliefs = [belief("bel_1", "PDFs over 10MB exhaust the ingester")]
    [result] = run([proposal(0, "PDFs over 20MB exhaust the ingester")], beliefs)
    assert result == GateResult(
        index=0,
        gate="needs_review",
        reasons=(Reason("contradicts", "bel_1"), Reason("changes", "bel_1", "10MB", "20MB")),
    )


def test_duplicate_names_the_active_belief_before_pending_and_forgotten() -> None:
    beliefs = [
        belief("bel_forgotten", "Ask before deleting", status="forgotten"),
        belief("bel_pending", "ask before deleting.", status="pending"),
        belief("bel_active", "Ask before deleting!", status="active"),
    ]
    [result] = run([proposal(0, "ASK BEFORE DELETING")], beliefs)
    assert result.reasons == (Reason("duplicate_of", "bel_active"),)


def test_batch_local_duplicates_point_at_the_earlier_index() -> None:
    proposals = [
        proposal(3, "Use metric units"),
        proposal(5, "Summarise in English"),
        proposal(7, "use metric units."),
        proposal(9, "USE   METRIC UNITS"),
    ]
    results = run(proposals, [])
    assert [(r.index, r.gate, r.reasons) for r in results] == [
        (3, "safe", ()),
        (5, "safe", ()),
        (7, "duplicate", (Reason("duplicate_in_batch", "3"),)),
        (9, "duplicate", (Reason("duplicate_in_batch", "3"),)),
    ]


def test_ops_that_restate_their_target_are_not_duplicates() -> None:
    beliefs = [belief("bel_1", "Use metric units"), belief("bel_2", "Use metric units!")]
    for op in ("strengthen", "weaken", "forget"):
        [result] = run([proposal(0, "Use metric units", op=op, target="bel_1")], beliefs)
        assert result == GateResult(index=0, gate="needs_review", reasons=(Reason("op", op),))


def test_a_supersede_into_existing_wording_is_a_duplicate() -> None:
    beliefs = [belief("bel_1", "Use imperial units"), belief("bel_2", "Use metric units")]
    [result] = run([proposal(0, "use metric units", op="supersede", target="bel_1")], beliefs)
    assert result == GateResult(
        index=0,
        gate="duplicate",
        reasons=(Reason("duplicate_of", "bel_2"), Reason("op", "supersede")),
    )


def test_batch_duplicates_of_non_add_ops_compare_op_and_target() -> None:
    beliefs = [belief("bel_1", "Use metric units"), belief("bel_2", "Use metric units!")]
    proposals = [
        proposal(0, "Use metric units", op="forget", target="bel_1"),
        proposal(1, "Use metric units", op="forget", target="bel_2"),
        proposal(2, "Use metric units", op="strengthen", target="bel_1"),
        proposal(3, "Use metric units.", op="forget", target="bel_1"),
    ]
    results = run(proposals, beliefs)
    assert [(r.gate, r.reasons) for r in results] == [
        ("needs_review", (Reason("op", "forget"),)),
        ("needs_review", (Reason("op", "forget"),)),
        ("needs_review", (Reason("op", "strengthen"),)),
        ("duplicate", (Reason("duplicate_in_batch", "0"), Reason("op", "forget"))),
    ]


# --- contradictions -------------------------------------------------------------------------


def test_negation_in_one_side_with_enough_overlap_is_a_contradiction() -> None:
    beliefs = [belief("bel_1", "Retry failed uploads over 10MB")]
    [result] = run([proposal(0, "Never retry failed uploads over 10MB")], beliefs)
    assert result == GateResult(
        index=0, gate="needs_review", reasons=(Reason("contradicts", "bel_1"),)
    )


def test_negative_belief_contradicted_by_a_positive_proposal() -> None:
    beliefs = [belief("bel_1", "Don't cache API responses", status="pending")]
    [result] = run([proposal(0, "Cache the API responses")], beliefs)
    assert result.reasons == (Reason("contradicts", "bel_1"),)


def test_both_negative_pairs_agree_and_are_not_flagged() -> None:
    beliefs = [belief("bel_1", "Never retry failed uploads over 10MB")]
    [result] = run([proposal(0, "Do not retry failed uploads over 10MB")], beliefs)
    # They agree: the same lesson in other words, never a contradiction.
    assert result == GateResult(
        index=0, gate="duplicate", reasons=(Reason("near_duplicate_of", "bel_1"),)
    )


def test_both_positive_pairs_are_not_contradictions() -> None:
    beliefs = [belief("bel_1", "Retry failed uploads over 10MB")]
    [result] = run([proposal(0, "Retry failed uploads over 10MB twice")], beliefs)
    assert result.gate == "safe"


def test_low_overlap_is_not_a_contradiction() -> None:
    # {deploy, friday} vs {deploy, monday}: Jaccard 1/3, below the 0.4 floor.
    beliefs = [belief("bel_1", "Never deploy on Fridays")]
    [result] = run([proposal(0, "Deploy on Mondays")], beliefs)
    assert result.gate == "safe"


def test_jaccard_exactly_at_the_threshold_is_flagged() -> None:
    # {retry, upload} vs {retry, upload, nightly, backup, log}: 2 / 5 = 0.4.
    beliefs = [belief("bel_1", "Retry uploads nightly, backups and logs")]
    [result] = run([proposal(0, "Never retry uploads")], beliefs)
    assert result.reasons == (Reason("contradicts", "bel_1"),)


def test_forgotten_beliefs_are_never_contradicted() -> None:
    beliefs = [belief("bel_1", "Retry failed uploads", status="forgotten")]
    [result] = run([proposal(0, "Never retry failed uploads")], beliefs)
    assert result.gate == "safe"


def test_at_most_three_contradictions_are_named_strongest_first() -> None:
    beliefs = [
        belief("bel_a", "Retry failed uploads"),
        belief("bel_b", "Retry failed uploads nightly"),
        belief("bel_c", "Retry failed uploads nightly with backoff"),
        belief("bel_d", "Retry failed uploads nightly with backoff quietly"),
    ]
    [result] = run([proposal(0, "Never retry failed uploads")], beliefs)
    assert result.reasons == (
        Reason("contradicts", "bel_a"),
        Reason("contradicts", "bel_b"),
        Reason("contradicts", "bel_c"),
    )


def test_contradiction_inside_the_batch() -> None:
    results = run(
        [proposal(0, "Retry failed uploads"), proposal(1, "Never retry failed uploads")], []
    )
    assert results[0].gate == "safe"
    assert results[1].reasons == (Reason("contradicts_in_batch", "0"),)


def test_a_supersede_does_not_contradict_its_own_target() -> None:
    beliefs = [belief("bel_1", "Retry failed uploads"), belief("bel_2", "Retry failed uploads!")]
    [result] = run(
        [proposal(0, "Never retry failed uploads", op="supersede", target="bel_1")], beliefs
    )
    assert result.reasons == (Reason("op", "supersede"), Reason("contradicts", "bel_2"))


def unit(*values: float) -> numpy.ndarray:
    vector = numpy.asarray(values, dtype=numpy.float32)
    return vector / numpy.linalg.norm(vector)


def test_embeddings_flag_a_paraphrased_contradiction_below_the_lexical_floor() -> None:
    # {indent, tab} vs {tab, indentation}: Jaccard 1/3 < 0.4, but the texts embed close.
    beliefs = [belief("bel_1", "Indent with tabs", embedding=unit(1, 0, 0))]
    text = "Do not use tabs for indentation"
    near = unit(0.75, 0.66, 0)[None, :]
    assert run([proposal(0, text)], beliefs)[0].gate == "safe"
    [result] = run([proposal(0, text)], beliefs, embeddings=near)
    assert result.reasons == (Reason("contradicts", "bel_1"),)


def test_embeddings_never_flag_two_negative_texts() -> None:
    beliefs = [belief("bel_1", "Never indent with tabs", embedding=unit(1, 0, 0))]
    [result] = run(
        [proposal(0, "Do not use tabs for indentation")], beliefs, embeddings=unit(1, 0, 0)[None]
    )
    # Same polarity and the same vector: a near-duplicate, never a contradiction.
    assert result == GateResult(
        index=0, gate="duplicate", reasons=(Reason("near_duplicate_of", "bel_1"),)
    )


def test_a_moderate_cosine_needs_some_word_overlap() -> None:
    beliefs = [belief("bel_1", "Never deploy on Fridays", embedding=unit(1, 0, 0))]
    moderate = unit(0.75, 0.66, 0)[None, :]  # cosine ≈ 0.75, no shared content token
    assert run([proposal(0, "Ship releases on Mondays")], beliefs, embeddings=moderate)[0].gate == (
        "safe"
    )
    strong = unit(0.95, 0.3, 0)[None, :]  # cosine ≈ 0.95: a paraphrase despite the wording
    [result] = run([proposal(0, "Ship releases on Fridays")], beliefs, embeddings=strong)
    assert result.reasons == (Reason("contradicts", "bel_1"),)


def test_opposite_polarity_alone_is_not_a_contradiction_without_a_shared_action() -> None:
    # Even a strong cosine needs the same action on the same object: one shared word is a
    # shared topic ("receipt"), not opposite advice.
    beliefs = [belief("bel_1", "Never approve a refund without a receipt", embedding=unit(1, 0, 0))]
    strong = unit(0.95, 0.3, 0)[None, :]
    text = "Receipts are stored in the billing folder"
    assert run([proposal(0, text)], beliefs, embeddings=strong)[0].gate == "safe"


def test_embeddings_must_match_the_proposals() -> None:
    beliefs = [belief("bel_1", "Indent with tabs", embedding=unit(1, 0, 0))]
    with pytest.raises(ValueError, match="rows"):
        run([proposal(0, "x"), proposal(1, "y")], beliefs, embeddings=unit(1, 0, 0)[None])
    with pytest.raises(ValueError, match="dimension"):
        run([proposal(0, "x")], beliefs, embeddings=unit(1, 0)[None])


# --- routing and provenance -----------------------------------------------------------------


def test_safe_and_needs_review_split_with_op_routing() -> None:
    beliefs = [belief("bel_1", "Use metric units"), belief("bel_2", "Cite sources", "forgotten")]
    proposals = [
        proposal(0, "Ask before deleting files"),
        proposal(1, "Use metric units in every answer", op="strengthen", target="bel_1"),
        proposal(2, "Prefer SI units", op="weaken", target="bel_1"),
        proposal(3, "Use metric units", op="forget", target="bel_1"),
        proposal(4, "Use SI units everywhere", op="supersede", target="bel_1"),
        proposal(5, "Cite sources always", op="strengthen", target="bel_2"),
        proposal(6, "Keep it short", op="weaken", target="bel_missing"),
        proposal(7, "Keep it short please", op="weaken"),
    ]
    results = run(proposals, beliefs)
    assert [(r.gate, r.reasons) for r in results] == [
        ("safe", ()),
        ("needs_review", (Reason("op", "strengthen"),)),
        ("needs_review", (Reason("op", "weaken"),)),
        ("needs_review", (Reason("op", "forget"),)),
        ("needs_review", (Reason("op", "supersede"),)),
        ("needs_review", (Reason("op", "strengthen"), Reason("target_forgotten", "bel_2"))),
        ("needs_review", (Reason("op", "weaken"), Reason("unknown_target", "bel_missing"))),
        ("needs_review", (Reason("op", "weaken"), Reason("missing_target"))),
    ]


def test_untrusted_source_needs_review() -> None:
    proposals = [
        proposal(0, "Ask before deleting files", sources=("ep_clean", "ep_web")),
        proposal(1, "Summarise in English", sources=("ep_clean",)),
    ]
    results = run(proposals, [], untrusted=frozenset({"ep_web"}))
    assert results[0] == GateResult(
        index=0, gate="needs_review", reasons=(Reason("untrusted_source"),)
    )
    assert results[1].gate == "safe"


def test_reasons_accumulate() -> None:
    beliefs = [belief("bel_1", "Retry failed uploads"), belief("bel_2", "Retry failed uploads.")]
    [result] = run(
        [proposal(0, "Never retry failed uploads", "supersede", ("ep_web",), "bel_1")],
        beliefs,
        untrusted=frozenset({"ep_web"}),
    )
    assert result.reasons == (
        Reason("op", "supersede"),
        Reason("contradicts", "bel_2"),
        Reason("untrusted_source"),
    )
    assert result.gate == "needs_review"


def test_duplicates_keep_their_other_reasons_but_stay_duplicates() -> None:
    beliefs = [belief("bel_1", "Use metric units")]
    [result] = run(
        [proposal(0, "use metric units", sources=("ep_web",))], beliefs, frozenset({"ep_web"})
    )
    assert result == GateResult(
        index=0,
        gate="duplicate",
        reasons=(Reason("duplicate_of", "bel_1"), Reason("untrusted_source")),
    )


def test_index_build_ignores_unknown_statuses() -> None:
    index = BeliefIndex.build([belief("bel_1", "Use metric units", status="deleted")])
    assert len(index) == 0
    assert gate([proposal(0, "Use metric units")], index, frozenset())[0].gate == "safe"


# --- decay ----------------------------------------------------------------------------------


def test_decay_of_thirty_days_at_the_default_rate() -> None:
    anchor = NOW - timedelta(days=30)
    assert decayed_confidence(1.0, anchor, NOW, 0.02) == pytest.approx(0.5488, abs=1e-4)
    assert decayed_confidence(0.8, anchor, NOW, 0.02) == pytest.approx(0.8 * math.exp(-0.6))


def test_half_life_is_about_34_7_days() -> None:
    anchor = NOW - timedelta(days=math.log(2) / 0.02)
    assert decayed_confidence(0.9, anchor, NOW, 0.02) == pytest.approx(0.45)


def test_non_positive_lambda_disables_decay_and_the_report() -> None:
    old = belief("bel_1", "Use metric units", created=NOW - timedelta(days=400))
    assert decayed_confidence(0.8, old.created_at, NOW, 0.0) == 0.8
    assert decayed_confidence(0.8, old.created_at, NOW, -1.0) == 0.8
    assert decay_report([old], NOW, lambda_per_day=0.0) == []
    assert decay_report([old], NOW, lambda_per_day=-0.5) == []


def test_a_future_anchor_does_not_raise_confidence() -> None:
    assert decayed_confidence(0.8, NOW + timedelta(days=3), NOW, 0.02) == 0.8


def test_decay_report_only_covers_active_beliefs_and_anchors_at_the_later_timestamp() -> None:
    long_ago = NOW - timedelta(days=30)
    beliefs = [
        belief("bel_active", "a", "active", 1.0, created=long_ago),
        belief("bel_pending", "b", "pending", 1.0, created=long_ago),
        belief("bel_forgotten", "c", "forgotten", 1.0, created=long_ago),
        belief("bel_renewed", "d", "active", 1.0, created=long_ago, updated=NOW),
        belief("bel_skewed", "e", "active", 1.0, created=NOW - timedelta(days=1), updated=long_ago),
    ]
    [report] = decay_report(beliefs, NOW)
    assert report.belief_id == "bel_active"
    assert report.confidence == 1.0
    assert report.decayed_confidence == pytest.approx(0.5488, abs=1e-4)
    assert report.age_days == pytest.approx(30.0)


def test_decay_report_keeps_drops_of_at_least_min_drop_largest_first() -> None:
    # 1.0 × exp(−0.02 × d) drops by 0.05 at d ≈ 2.565 days.
    beliefs = [
        belief("bel_small", "a", confidence=1.0, created=NOW - timedelta(days=2)),
        belief("bel_edge", "b", confidence=1.0, created=NOW - timedelta(days=2.6)),
        belief("bel_big", "c", confidence=1.0, created=NOW - timedelta(days=60)),
    ]
    report = decay_report(beliefs, NOW, lambda_per_day=0.02, min_drop=0.05)
    assert [item.belief_id for item in report] == ["bel_big", "bel_edge"]
    assert all(isinstance(item, Decayed) for item in report)
    assert decay_report(beliefs, NOW, min_drop=0.7) == []


def test_the_prefix_index_finds_exactly_what_comparing_every_pair_finds() -> None:
    rng = random.Random(5)
    vocabulary = [f"w{n}" for n in range(40)]

    def sentence() -> str:
        words = rng.sample(vocabulary[: rng.choice([8, 20, 40])], rng.randint(1, 7))
        return ("Never " if rng.random() < 0.4 else "") + " ".join(words)

    beliefs = [belief(f"bel_{n}", sentence()) for n in range(400)]
    for threshold in (0.25, 0.4, 0.7):
        index = BeliefIndex.build(beliefs, jaccard_threshold=threshold)
        for _probe in range(100):
            _, tokens, negative = analyse(sentence())
            expected = {
                b.id
                for b in beliefs
                if polarity_conflict(
                    tokens, negative, content_tokens(b.content), is_negative(b.content), threshold
                )
            }
            assert set(index.lexical_conflicts(tokens, negative)) == expected


def test_a_belief_restated_with_a_negative_clause_of_its_own_is_no_reversal() -> None:
    # The words overlap and the polarity differs, but the proposal says the belief word for
    # word and then adds a clause: a refinement, not "contradicts".
    said = "Review the monthly credit card statement."
    beliefs = [belief("bel_1", said, embedding=unit(1, 0, 0))]
    near = unit(0.8, 0.6, 0)[None, :]
    added = "Review the monthly credit card statement and flag charges the user doesn't know."
    [result] = run([proposal(0, added)], beliefs, embeddings=near)
    assert Reason("contradicts", "bel_1") not in result.reasons
    # Said with its negation where the belief's own words are, it still reverses them.
    reversed_ = "Don't review the monthly credit card statement."
    [result] = run([proposal(0, reversed_)], beliefs, embeddings=near)
    assert Reason("contradicts", "bel_1") in result.reasons
