"""Gate reasons: one typed Reason, one codec, round trips for every kind the gate emits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from credence.memory.semantics.gate import BeliefIndex, LiveBelief, Proposal, gate
from credence.models.reasons import (
    REJECTING,
    Reason,
    ReasonChange,
    StructuredReason,
    decode,
    decode_all,
    encode,
    encode_all,
    structured,
    targets,
)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("contradicts:bel_1", Reason("contradicts", "bel_1")),
        ("changes:bel_1:yarn→bun", Reason("changes", "bel_1", "yarn", "bun")),
        ("changes:bel_1:14 days→90 days", Reason("changes", "bel_1", "14 days", "90 days")),
        ("near_duplicate_of:bel_2", Reason("near_duplicate_of", "bel_2")),
        ("previously_forgotten:bel_3", Reason("previously_forgotten", "bel_3")),
        ("duplicate_in_batch:0", Reason("duplicate_in_batch", "0")),
        ("op:supersede", Reason("op", "supersede")),
        ("unsettled:bel_4", Reason("unsettled", "bel_4")),
        ("untrusted_source", Reason("untrusted_source")),
        ("unsourced", Reason("unsourced")),
        ("unsupported_language", Reason("unsupported_language")),
    ],
)
def test_the_codec_round_trips_every_kind(text: str, reason: Reason) -> None:
    assert decode(text) == reason
    assert encode(reason) == text


def test_an_unknown_or_malformed_string_is_kept_whole_so_it_round_trips() -> None:
    for text in ("something:odd", "changes:bel_1", "changes:bel_1:no arrow", "plain"):
        assert decode(text) == Reason(text)
        assert encode(decode(text)) == text


def test_refusal_reasons_decode_to_their_kind_and_target() -> None:
    assert decode("unknown_source_episode:ep_9") == Reason("unknown_source_episode", "ep_9")
    assert decode("missing_target:forget") == Reason("missing_target", "forget")
    assert decode("missing_target") == Reason("missing_target")
    assert decode("target_not_allowed:add") == Reason("target_not_allowed", "add")


def test_targets_read_one_kind_and_encode_all_keeps_order_once() -> None:
    reasons = decode_all(["contradicts:a", "changes:a:x→y", "op:add", "contradicts:b"])
    assert targets(reasons, "contradicts") == ["a", "b"]
    assert "near_duplicate_of" in REJECTING and "contradicts" not in REJECTING
    twice = [Reason("contradicts", "a"), Reason("unsourced"), Reason("contradicts", "a")]
    assert encode_all(twice) == ["contradicts:a", "unsourced"]


def test_the_gate_answers_with_reason_values_that_round_trip() -> None:
    now = datetime(2026, 6, 1, tzinfo=UTC)
    index = BeliefIndex.build(
        [LiveBelief("bel_1", "Use yarn for the frontend", "active", 0.8, now, now)]
    )
    proposals = [
        Proposal(0, "add", "Use bun for the frontend", 0.7, "r", ()),
        Proposal(1, "supersede", "Use bun for the frontend", 0.7, "r", ("ep",), "bel_9"),
    ]
    first, second = gate(proposals, index, frozenset())
    assert first.reasons == (
        Reason("contradicts", "bel_1"),
        Reason("changes", "bel_1", "yarn", "bun"),
        Reason("unsourced"),
    )
    assert second.reasons[:3] == (
        Reason("duplicate_in_batch", "0"),
        Reason("op", "supersede"),
        Reason("unknown_target", "bel_9"),
    )
    for result in (first, second):
        for reason in result.reasons:
            assert isinstance(reason, Reason)
            assert decode(encode(reason)) == reason


def test_the_structured_form_carries_the_change_only_for_changes() -> None:
    reasons = decode_all(["contradicts:b_1", "changes:b_1:yarn→bun", "unsourced"])
    assert structured(reasons) == [
        StructuredReason(kind="contradicts", target="b_1"),
        StructuredReason(kind="changes", target="b_1", change=ReasonChange(old="yarn", new="bun")),
        StructuredReason(kind="unsourced"),
    ]
