"""Tests for parsing a reflector's raw answer into proposals."""

from __future__ import annotations

import json

import pytest

from credence.memory.semantics.gate import Proposal
from credence.reflection.parse import Dropped, ParseError, ParseResult, parse_proposals

SOURCES = frozenset({"ep_1", "ep_2", "ep_3"})


def entry(**overrides) -> dict:
    base = {
        "op": "add",
        "belief": "Use metric units.",
        "confidence": 0.75,
        "rationale": "The user corrected units twice.",
        "source_episodes": ["ep_1", "ep_2"],
    }
    base.update(overrides)
    return {key: value for key, value in base.items() if value is not ...}


def parse(raw: str, max_items: int = 10) -> ParseResult:
    return parse_proposals(raw, allowed_sources=SOURCES, max_items=max_items)


EXPECTED = Proposal(
    index=0,
    op="add",
    belief="Use metric units.",
    confidence=0.75,
    rationale="The user corrected units twice.",
    source_episodes=("ep_1", "ep_2"),
    target_belief_id=None,
)


def test_bare_array() -> None:
    assert parse(json.dumps([entry()])) == ParseResult(proposals=(EXPECTED,), dropped=())


@pytest.mark.parametrize("fence", ["```json", "```JSON", "```"])
def test_fenced_block_with_prose_around(fence: str) -> None:
    raw = f"Here is what I learned:\n\n{fence}\n{json.dumps([entry()], indent=2)}\n```\nDone!"
    assert parse(raw).proposals == (EXPECTED,)


def test_brackets_fences_and_escaped_quotes_inside_strings() -> None:
    tricky = 'Wrap code in ``` fences, quote "[x]" and never leave a ] or [ unbalanced \\'
    raw = "Sure [see below]:\n" + json.dumps([entry(belief=tricky, rationale='a "]" b')])
    [proposal] = parse(raw).proposals
    assert proposal.belief == tricky
    assert proposal.rationale == 'a "]" b'


def test_empty_array_is_a_legitimate_nothing() -> None:
    assert parse("[]") == ParseResult(proposals=(), dropped=())
    assert parse("Nothing durable this time.\n```json\n[]\n```") == ParseResult((), ())


def test_an_array_of_objects_beats_an_empty_one_and_numbers_in_prose() -> None:
    raw = "If nothing, I would say []. Step [1] done. Answer: " + json.dumps([entry()])
    assert parse(raw).proposals == (EXPECTED,)


def test_a_fenced_array_beats_an_earlier_example_in_prose() -> None:
    example = json.dumps([entry(belief="Example only")])
    raw = f"The format is {example}.\n```json\n{json.dumps([entry()])}\n```"
    assert parse(raw).proposals == (EXPECTED,)


def test_unbalanced_prose_bracket_before_the_array() -> None:
    raw = 'Step [1 of 2: the user said "stop\n```json\n' + json.dumps([entry()]) + "\n```"
    assert parse(raw).proposals == (EXPECTED,)


def test_wrapped_in_an_object_and_trailing_commas_are_forgiven() -> None:
    body = json.dumps(entry())
    assert parse('{"proposals": [' + body + "]}").proposals == (EXPECTED,)
    assert parse("[" + body[:-1] + ",},]").proposals == (EXPECTED,)


def test_a_leading_think_block_is_ignored() -> None:
    raw = (
        "<think>maybe [" + json.dumps(entry(belief="Draft")) + "]</think>\n" + json.dumps([entry()])
    )
    assert parse(raw).proposals == (EXPECTED,)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "I could not find anything worth remembering.",
        "[1, 2, 3]",
        '["ep_1"]',
        '[{"op": "add", "belief": "truncated',
        "{}",
        "[" * 5000,
    ],
)
def test_no_decodable_array_raises_and_quotes_the_answer(raw: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(raw)
    assert repr(raw[:200]) in str(caught.value)


def test_the_error_quotes_only_the_first_200_characters() -> None:
    raw = "x" * 150 + "y" * 500
    with pytest.raises(ParseError) as caught:
        parse(raw)
    assert repr("x" * 150 + "y" * 50) in str(caught.value)
    assert "y" * 51 not in str(caught.value)


def test_entries_beyond_max_items_are_dropped() -> None:
    raw = json.dumps([entry(belief=f"Lesson {n}") for n in range(5)])
    result = parse(raw, max_items=3)
    assert [p.belief for p in result.proposals] == ["Lesson 0", "Lesson 1", "Lesson 2"]
    assert result.dropped == (Dropped(3, "too_many:3"), Dropped(4, "too_many:3"))


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("not a dict", "not_an_object"),
        (entry(op=...), "missing_field:op"),
        (entry(belief=...), "missing_field:belief"),
        (entry(confidence=...), "missing_field:confidence"),
        (entry(rationale=...), "missing_field:rationale"),
        (entry(source_episodes=...), "missing_field:source_episodes"),
        (entry(op="merge"), "unknown_op:merge"),
        (entry(op=3), "bad_type:op"),
        (entry(belief=42), "bad_type:belief"),
        (entry(belief="   "), "empty_belief"),
        (entry(belief="x" * 2001), "belief_too_long"),
        (entry(belief="nul\u0000byte"), "invalid_text:belief"),
        (entry(rationale=None), "bad_type:rationale"),
        (entry(confidence="0.7"), "bad_type:confidence"),
        (entry(confidence=True), "bad_type:confidence"),
        (entry(confidence=1.2), "confidence_out_of_range"),
        (entry(confidence=-0.1), "confidence_out_of_range"),
        (entry(source_episodes="ep_1"), "bad_type:source_episodes"),
        (entry(source_episodes=["ep_1", 2]), "bad_type:source_episodes"),
        (entry(source_episodes=[]), "no_source_episodes"),
        (entry(source_episodes=["ep_1", "ep_9"]), "unknown_source:ep_9"),
        (entry(op="strengthen"), "missing_target"),
        (entry(op="forget", target_belief_id=None), "missing_target"),
        (entry(op="weaken", target_belief_id="  "), "missing_target"),
        (entry(op="supersede", target_belief_id=7), "bad_type:target_belief_id"),
        (entry(op="supersede", target_belief_id="b" * 65), "bad_value:target_belief_id"),
    ],
)
def test_invalid_entries_are_dropped_alone(bad: object, reason: str) -> None:
    raw = json.dumps([entry(), bad, entry(belief="Second")])
    result = parse(raw)
    assert result.dropped == (Dropped(1, reason),)
    assert [(p.index, p.belief) for p in result.proposals] == [
        (0, "Use metric units."),
        (2, "Second"),
    ]


def test_non_finite_confidence_is_dropped() -> None:
    raw = "[" + json.dumps(entry()) + ', {"op": "add", "belief": "b", "confidence": NaN, '
    raw += '"rationale": "", "source_episodes": ["ep_1"]}]'
    result = parse(raw)
    assert result.dropped == (Dropped(1, "confidence_out_of_range"),)


def test_a_lone_surrogate_is_dropped_not_stored() -> None:
    raw = "[" + json.dumps(entry()) + ", " + json.dumps(entry(belief="bad \ud800 text")) + "]"
    assert "\\ud800" in raw
    assert parse(raw).dropped == (Dropped(1, "invalid_text:belief"),)


def test_values_are_tidied() -> None:
    raw = json.dumps(
        [
            entry(
                op=" Strengthen ",
                belief="  Use   metric\nunits.  ",
                confidence=1,
                source_episodes=["ep_2", "ep_1", "ep_2"],
                target_belief_id=" bel_1 ",
                extra="ignored",
            ),
            entry(target_belief_id="bel_ignored_for_add"),
        ]
    )
    first, second = parse(raw).proposals
    assert first == Proposal(
        index=0,
        op="strengthen",
        belief="Use metric units.",
        confidence=1.0,
        rationale="The user corrected units twice.",
        source_episodes=("ep_2", "ep_1"),
        target_belief_id="bel_1",
    )
    assert second.target_belief_id is None


def test_long_rationales_are_cut() -> None:
    [proposal] = parse(json.dumps([entry(rationale="r" * 5000)])).proposals
    assert len(proposal.rationale) == 3000
    assert proposal.rationale.endswith("…")


def test_pathological_input_is_refused_quickly() -> None:
    with pytest.raises(ParseError):
        parse('"[' * 50_000)
    with pytest.raises(ParseError, match="characters long"):
        parse("[" + " " * 200_001 + "]")
