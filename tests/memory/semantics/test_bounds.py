"""Bounds on a value: one bound found, its complement, the value it bounds, the same limit."""

from __future__ import annotations

from credence.memory.semantics.bounds import bounded_value, complemented, same_limit, the_bound
from credence.memory.semantics.wording import meaning


def test_one_bound_is_found_and_two_are_none() -> None:
    assert the_bound(meaning("Keep lines under 72 characters")) == "<"
    assert the_bound(meaning("Lines may be at most 72 characters")) == "<="
    assert the_bound(meaning("Keep lines tidy")) is None
    assert the_bound(meaning("Between at least 2 and at most 5 reviewers")) is None


def test_a_negated_bound_is_its_complement() -> None:
    assert complemented([">", "#72"]) == ["<=", "#72"]
    assert complemented(["<", "#5"]) == [">=", "#5"]
    assert complemented(["keep", "lin"]) == ["keep", "lin"]


def test_the_bounded_value_is_the_one_after_the_bound_else_the_one_before() -> None:
    assert bounded_value(meaning("Spend at most $50 on gifts"), "<=") == "#50usd"
    assert bounded_value(meaning("Keep meetings to 30 minutes or less"), "<=") == "#1800time"
    assert bounded_value(["<", "lin"], "<") is None


def test_the_same_limit_may_differ_in_whether_its_end_is_included() -> None:
    negated = meaning("No line should be longer than 72 characters")
    assert same_limit(negated, meaning("Keep lines under 72 characters"))
    assert same_limit(negated, meaning("Keep each line to 72 characters or fewer"))
    # The same side as the negated bound is the opposite advice; another value another limit.
    assert not same_limit(negated, meaning("Make lines longer than 72 characters"))
    assert not same_limit(negated, meaning("Keep lines under 80 characters"))
