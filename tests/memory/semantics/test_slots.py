"""Slots structure alone misses: a name opening the sentence, a value under a paraphrase."""

from __future__ import annotations

from credence.memory.semantics.slots import opening_swap, synonyms_agree, value_swap
from credence.memory.semantics.statements import statement, stem
from credence.memory.semantics.thesaurus import synonym_sets
from credence.memory.semantics.wording import words_of


def _swap(old: str, new: str):
    return opening_swap(words_of(old), words_of(new), statement(old), statement(new))


def test_a_name_opening_both_sentences_swapped_is_a_change() -> None:
    change = _swap(
        "Sofia is the product owner for the app", "Liam is the product owner for the app"
    )
    assert change is not None
    assert (change.old, change.new, change.kind) == ("Sofia", "Liam", "name")
    tool = _swap("Jira tracks all the team's bugs", "Linear tracks all the team's bugs")
    assert tool is not None and (tool.old, tool.new) == ("Jira", "Linear")


def test_an_imperative_verb_or_a_determiner_is_never_read_as_a_name() -> None:
    assert (
        _swap("Store invoices in the finance folder", "Record invoices in the finance folder")
        is None
    )
    assert _swap("The cat eats dry food daily", "The dog eats dry food daily") is None
    # What follows is no verb: not a subject.
    assert (
        _swap("Maria budget reports go out monthly", "Jonas budget reports go out monthly") is None
    )


def test_a_value_swapped_under_a_paraphrase_is_found_with_the_rest_to_compare() -> None:
    old, new = "The flight to Lisbon departs at 7:45 pm", "The Lisbon flight leaves at 07:45"
    a, b = statement(old), statement(new)
    marked_a = frozenset(w.canon for w in a.words if w.kind != "word")
    marked_b = frozenset(w.canon for w in b.words if w.kind != "word")
    found = value_swap(marked_a, marked_b, a, b, a.canons, b.canons)
    assert found is not None
    change, rest = found
    assert (change.old, change.new, change.kind) == ("7:45 pm", "07:45", "time")
    assert synonyms_agree(
        ([w for w in rest[0] if w not in ("to", "at")], [w for w in rest[1] if w != "at"]),
        synonym_sets(stem),
    )


def test_two_values_changed_or_kinds_that_differ_are_no_swap() -> None:
    a, b = statement("Ship 3 boxes at 9am"), statement("Ship 4 boxes at 10am")
    marked = lambda s: frozenset(w.canon for w in s.words if w.kind != "word")  # noqa: E731
    assert value_swap(marked(a), marked(b), a, b, a.canons, b.canons) is None
    c, d = statement("Ship 3 boxes"), statement("Ship boxes at 9am")
    assert value_swap(marked(c), marked(d), c, d, c.canons, d.canons) is None


def test_two_changes_around_a_shared_verb_are_no_opening_swap() -> None:
    assert _swap("Tom prefers morning meetings", "Sara prefers afternoon meetings") is None
