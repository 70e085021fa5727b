"""Paraphrase coverage: answered words, word families, adverbs, one slot rewritten, rewording."""

from __future__ import annotations

import pytest

from credence.memory.semantics.coverage import (
    adjectives_of,
    answers,
    one_family,
    one_slot_rewritten,
    opens,
    reworded,
    unanswered,
)
from credence.memory.semantics.statements import stem
from credence.memory.semantics.wording import SYNONYMS, meaning


@pytest.mark.parametrize(
    ("first", "second"),
    [("allergic", "allergy"), ("invit", "invitation"), ("approv", "approval")],
)
def test_words_sharing_most_of_a_real_stem_are_one_family(first: str, second: str) -> None:
    assert one_family(first, second)
    assert one_family(second, first)


@pytest.mark.parametrize(
    ("first", "second"),
    [("internal", "international"), ("convert", "convey"), ("public", "publish"), ("#5", "#50")],
)
def test_short_or_partial_openings_are_not_one_family(first: str, second: str) -> None:
    assert not one_family(first, second)


def test_an_adverb_reads_as_the_adjectives_it_may_come_from() -> None:
    assert "full" in adjectives_of(stem("fully"))
    assert adjectives_of("directly") == frozenset({"direct"})
    assert stem("easy") in adjectives_of("easily")
    # Too short to be an adverb: left as it is.
    assert adjectives_of("only") == frozenset({"only"})
    assert adjectives_of("water") == frozenset({"water"})


def test_a_word_is_answered_by_itself_a_synonym_a_family_or_its_adjectives_synonym() -> None:
    assert answers("brief", "concis", SYNONYMS)
    assert answers("allergic", "allergy", SYNONYMS)
    assert answers(stem("fully"), stem("whole"), SYNONYMS)
    assert not answers("upbeat", "calm", SYNONYMS)
    assert not answers(stem("quickly"), stem("slow"), SYNONYMS)


def test_unanswered_names_the_positions_the_other_side_does_not_say() -> None:
    first, second = ["play", "upbeat", "music"], ["play", "slow", "calm", "music"]
    assert unanswered(first, second, SYNONYMS) == [1]
    assert unanswered(second, first, SYNONYMS) == [1, 2]


def test_a_value_rewritten_in_place_is_one_slot() -> None:
    old = meaning("Play upbeat music during the user's work sessions.")
    new = meaning("Play slow, calming music during the user's work sessions.")
    assert one_slot_rewritten(old, new, SYNONYMS)
    # The run may move when what stands beside it is the same word on both sides.
    assert one_slot_rewritten(["a", "b", "x", "c"], ["b", "y", "z", "c", "a"], SYNONYMS)


def test_rewording_spread_over_the_sentence_is_not_one_slot() -> None:
    old = meaning("Label spreadsheet columns in plain English.")
    new = meaning("Column headers in spreadsheets should be written in everyday English.")
    assert not one_slot_rewritten(old, new, SYNONYMS)


def test_every_word_answered_is_reworded() -> None:
    old = meaning("Recommend crypto investments")
    new = meaning("Suggest crypto to invest in")
    assert reworded(old, new, SYNONYMS)


def test_a_paraphrase_keeping_half_its_words_and_rewording_the_rest_is_reworded() -> None:
    old = meaning("Label spreadsheet columns in plain English.")
    new = meaning("Column headers in spreadsheets should be written in everyday English.")
    assert reworded(old, new, SYNONYMS)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # One slot rewritten in place: a correction's shape.
        (
            "Play upbeat music during the user's work sessions.",
            "Play slow, calming music during the user's work sessions.",
        ),
        # Words added on one side only: a refinement.
        ("Write commit messages in English", "Write commit messages in English in imperative mood"),
        # Less than half of one side kept.
        ("Explain code changes in depth in PR descriptions.", "Keep PR descriptions minimal."),
    ],
)
def test_corrections_refinements_and_distant_rewrites_are_not_reworded(old: str, new: str) -> None:
    assert not reworded(meaning(old), meaning(new), SYNONYMS)


def test_nothing_is_reworded_from_nothing() -> None:
    assert not reworded([], ["user"], SYNONYMS)
    assert not reworded(["user"], [], SYNONYMS)


def test_a_word_opening_another_is_its_family_unless_the_ending_makes_it_smaller() -> None:
    assert opens("indent", "indentation")
    assert not opens("novel", "novella")
    assert not opens("book", "booklet")
