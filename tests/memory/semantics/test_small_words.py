"""Small words that change a statement: "and" / "or", quantifiers, directions, swapped roles."""

from __future__ import annotations

from credence.memory.semantics.small_words import (
    alternation_differs,
    connective_differs,
    degree_differs,
    in_or_out_differs,
    people_counted_differently,
    qualifier_added,
    quantifier_differs,
    relation_swapped,
    roles_exchanged,
)
from credence.memory.semantics.wording import meaning, words_of


def _pair(old: str, new: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return words_of(old), words_of(new)


def test_and_against_or_differs() -> None:
    assert connective_differs(*_pair("Use Python and Go", "Use Python or Go"))
    assert not connective_differs(*_pair("Use Python and Go", "Use Go and Python"))


def test_quantifiers_differ_only_when_both_quantify() -> None:
    assert quantifier_differs(*_pair("All invoices need approval", "Most invoices need approval"))
    assert not quantifier_differs(*_pair("All invoices need approval", "Every invoice needs it"))
    assert not quantifier_differs(*_pair("Invoices need approval", "Most invoices need approval"))
    # "at most" bounds a value; "every month" is no claim about how many.
    assert not quantifier_differs(*_pair("Spend at most $200 a month", "Spend $200 every month"))


def test_a_relation_word_swapped_alone_differs() -> None:
    assert relation_swapped(
        *_pair("Send the invoice to the client", "Send the invoice from the client")
    )
    assert relation_swapped(*_pair("Raise the limit by 10", "Raise the limit to 10"))
    assert relation_swapped(
        *_pair("Deploy Tuesdays and Thursdays", "Deploy Tuesdays through Thursdays")
    )
    assert not relation_swapped(*_pair("Send the invoice to the client", "Send it to the client"))


def test_two_words_apart_that_swap_places_are_exchanged_roles() -> None:
    old = meaning("The user's sister lives with their mother")
    assert roles_exchanged(old, meaning("The user's mother lives with their sister"))
    # Neighbours that swap are a rewording: "schedule meetings" / "meetings … scheduled".
    assert not roles_exchanged(
        meaning("Don't schedule meetings before 9am"),
        meaning("No meetings should be scheduled before 9am"),
    )
    assert not roles_exchanged(old, old)


def test_degrees_differ_only_when_both_grade() -> None:
    assert degree_differs(*_pair("The user likes food mildly spicy", "… likes food very spicy"))
    assert not degree_differs(*_pair("The user likes spicy food", "The user likes very spicy food"))


def test_every_other_is_not_every() -> None:
    assert alternation_differs(*_pair("The cleaner comes every Tuesday", "… every other Tuesday"))
    assert alternation_differs(*_pair("Water it every day", "Water it every second day"))
    assert not alternation_differs(*_pair("Water it every day", "Water it each day"))


def test_in_is_not_out_of() -> None:
    assert in_or_out_differs(*_pair("Dr. Kim is in network", "Dr. Kim is out of network"))
    assert not in_or_out_differs(*_pair("Dr. Kim is in network", "Dr. Kim is in the network"))


def test_kin_counted_otherwise_differs_and_roles_do_not() -> None:
    assert people_counted_differently(
        *_pair("The user's brother lives in Chicago", "The user's brothers live in Chicago")
    )
    assert people_counted_differently(*_pair("The child eats early", "The children eat early"))
    # "customer complaints" / "complaints from customers": one meaning, counted either way.
    assert not people_counted_differently(
        *_pair("Answer customer complaints", "Answer complaints from customers")
    )


def test_a_word_that_holds_a_rule_back_is_found() -> None:
    assert qualifier_added(*_pair("Tests run on every push", "Tests run on every push except main"))
    assert qualifier_added(*_pair("The user checks Slack", "The user rarely checks Slack")) == (
        "rarely"
    )
    assert qualifier_added(*_pair("All members work remotely", "Some members work remotely"))
    assert qualifier_added(*_pair("Use tabs", "Use tabs in Go files")) == ""
