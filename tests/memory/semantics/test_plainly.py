"""Phrasings said plainly before comparison: contrast, exceptions, purpose, preference."""

from __future__ import annotations

from credence.memory.semantics.plainly import plainly_worded


def test_a_not_that_sets_one_thing_against_another_negates_nothing() -> None:
    assert plainly_worded("Use tabs, not spaces") == "Use tabs rather than spaces"
    assert plainly_worded("Use tabs,not spaces") == "Use tabs rather than spaces"


def test_a_purpose_is_said_with_to_not_as_a_permission() -> None:
    assert plainly_worded("Leave early so they can beat traffic") == "Leave early to beat traffic"
    assert plainly_worded("Leave early in order to beat traffic") == "Leave early to beat traffic"
    assert plainly_worded("It is urgent, so the user can't wait") == (
        "It is urgent, so the user can't wait"
    )


def test_would_rather_have_and_reports_to_are_said_plainly() -> None:
    assert plainly_worded("The user would rather have tea than coffee") == (
        "The user prefers tea than coffee"
    )
    # A verb that says more stays, for the phrase fold to read with "would rather".
    assert plainly_worded("The user would rather sit by the aisle") == (
        "The user would rather sit by the aisle"
    )
    assert plainly_worded("The user reports to Rachel Kim") == "The user's manager is Rachel Kim"
    assert plainly_worded("The person the user reports to is Kim") == (
        "The person the user reports to is Kim"
    )


def test_nobody_but_and_except_when_are_said_plainly() -> None:
    assert plainly_worded("Nobody but Ana may merge") == "only Ana may merge"
    assert plainly_worded("No one except Ana may merge") == "only Ana may merge"
    assert plainly_worded("Reply in German except when asked") == "Reply in German unless asked"
    assert plainly_worded("Nobody may merge") == "Nobody may merge"
    assert plainly_worded("The user can't stand jazz") == "The user hate jazz"
    assert plainly_worded("The user cannot tolerate noise") == "The user hate noise"
    # "not even" and "not only" still intensify a negation; a "not" without a comma negates.
    assert plainly_worded("Never use tabs, not even in Makefiles") == (
        "Never use tabs, not even in Makefiles"
    )
    assert plainly_worded("Do not use tabs") == "Do not use tabs"
