"""Small words that change a statement: "and" / "or", quantifiers, directions, swapped roles."""

from __future__ import annotations

from credence.memory.semantics.small_words import (
    connective_differs,
    direction_differs,
    quantifier_differs,
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


def test_a_preposition_of_direction_swapped_alone_differs() -> None:
    assert direction_differs(
        *_pair("Send the invoice to the client", "Send the invoice from the client")
    )
    assert direction_differs(*_pair("Raise the limit by 10", "Raise the limit to 10"))
    assert not direction_differs(*_pair("Send the invoice to the client", "Send it to the client"))


def test_two_words_apart_that_swap_places_are_exchanged_roles() -> None:
    old = meaning("The user's sister lives with their mother")
    assert roles_exchanged(old, meaning("The user's mother lives with their sister"))
    # Neighbours that swap are a rewording: "schedule meetings" / "meetings … scheduled".
    assert not roles_exchanged(
        meaning("Don't schedule meetings before 9am"),
        meaning("No meetings should be scheduled before 9am"),
    )
    assert not roles_exchanged(old, old)
