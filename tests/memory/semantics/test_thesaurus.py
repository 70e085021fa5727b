"""The general thesaurus: synonym lines, words in several senses, phrase folds, bag matching."""

from __future__ import annotations

from credence.memory.semantics.statements import stem
from credence.memory.semantics.thesaurus import (
    COMMON_VERBS,
    ORDER_WORDS,
    PHRASE_FOLDS,
    fold_phrases,
    same_bag,
    synonym_sets,
    synonymous,
)

SETS = synonym_sets(stem)


def test_a_word_with_two_senses_sits_in_both_lines() -> None:
    # "complete" is "whole" as an adjective and "finish" as a verb.
    assert synonymous(stem("completed"), stem("finished"), SETS)
    assert synonymous(stem("complete"), stem("whole"), SETS)
    assert not synonymous(stem("whole"), stem("finished"), SETS)


def test_family_words_and_their_familiar_forms_are_synonyms_but_not_each_other() -> None:
    assert synonymous(stem("mom"), stem("mother"), SETS)
    assert synonymous(stem("dad"), stem("father"), SETS)
    assert synonymous(stem("kids"), stem("children"), SETS)
    assert not synonymous(stem("mom"), stem("dad"), SETS)
    assert not synonymous(stem("mother"), stem("father"), SETS)
    assert synonymous(stem("films"), stem("movies"), SETS)


def test_words_of_one_sense_in_every_context_are_synonyms() -> None:
    assert synonymous(stem("luggage"), stem("baggage"), SETS)
    assert synonymous(stem("migrated"), stem("moved"), SETS)
    assert synonymous(stem("acetaminophen"), stem("paracetamol"), SETS)
    # A line is no chain: "run" is "execute", and neither is "manage".
    assert not synonymous(stem("execute"), stem("manage"), SETS)


def test_unlisted_words_and_opposites_are_not_synonyms() -> None:
    assert synonymous("python", "python", SETS)
    assert not synonymous("python", "java", SETS)
    assert not synonymous(stem("allow"), stem("forbid"), SETS)


def test_bags_match_one_to_one_synonym_for_synonym() -> None:
    assert same_bag(["keep", "reply", "short"], ["brief", "keep", "answer"], SETS)
    assert not same_bag(["keep", "reply", "short"], ["keep", "reply"], SETS)
    # One synonym cannot stand for two words.
    assert not same_bag(["short", "brief"], ["concis", "long"], SETS)


def test_phrasal_verbs_fold_to_the_word_they_mean() -> None:
    folds = {("talk", "about"): "discuss", ("get", "rid", "of"): "remove"}
    assert fold_phrases(["talk", "about", "salary"], folds) == ["discuss", "salary"]
    assert fold_phrases(["get", "rid", "of", "log"], folds) == ["remove", "log"]
    assert fold_phrases(["talk", "to", "them"], folds) == ["talk", "to", "them"]
    stemmed = {tuple(stem(word) for word in phrase): word for phrase, word in PHRASE_FOLDS.items()}
    gave_up = [stem(word) for word in ("gave", "up", "smoking")]
    assert fold_phrases(gave_up, stemmed) == ["quit", "smok"]


def test_no_synonym_line_holds_an_order_word_with_its_opposite() -> None:
    for line in (frozenset(lines) for lines in SETS.lines.values()):
        assert line
    assert {"first", "last", "before", "after"} <= ORDER_WORDS
    assert {"store", "fix", "send"} <= COMMON_VERBS
    assert "sofia" not in COMMON_VERBS


def test_answers_are_remembered_per_pair_and_the_memo_is_bounded(monkeypatch) -> None:
    sets = synonym_sets(stem)
    assert synonymous(stem("adores"), stem("loves"), sets)
    assert sets.known[stem("adores"), stem("loves")] is True
    monkeypatch.setattr("credence.memory.semantics.thesaurus.MAX_KNOWN_PAIRS", 1)
    assert not synonymous("python", "java", sets)
    assert list(sets.known) == [("python", "java")]  # full: started again
