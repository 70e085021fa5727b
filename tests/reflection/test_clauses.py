"""Tests for the sentences and clauses the heuristic reflector links interventions by."""

from __future__ import annotations

from credence.reflection.clauses import clauses_link, clauses_of, sentence_texts, sentences_of


def test_sentences_keep_questions_and_flatten_in_order() -> None:
    assert sentences_of("Cups again?  I weigh  everything. List grams!") == [
        "Cups again?",
        "I weigh everything.",
        "List grams!",
    ]
    assert sentence_texts(["One. Two?", "Three"]) == ["One.", "Two?", "Three"]
    assert sentences_of("   ") == []


def test_clauses_leave_out_questions_scolding_and_one_off_scopes() -> None:
    clauses = clauses_of("Where's the warm up? Way too rushed. Not today, start slowly")
    assert clauses == ((frozenset({"start", "slowly"}), False),)


def test_each_clause_has_its_own_polarity() -> None:
    clauses = clauses_of("train tickets aren't subsistence, that's travel")
    assert [negative for _, negative in clauses] == [True, False]


def test_clauses_link_on_shared_words_of_one_polarity() -> None:
    said = clauses_of("train tickets aren't subsistence, that's travel")
    assert clauses_link(said, clauses_of("Those are travel costs."))
    assert not clauses_link(said, clauses_of("Those aren't travel costs."))
    assert not clauses_link(clauses_of("No, use metric units"), clauses_of("Use the template"))
