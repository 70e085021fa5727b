"""A part named where the other side claims all of a thing."""

from __future__ import annotations

import pytest

from credence.memory.semantics.quantified import part_named_for_all
from credence.memory.semantics.relation import relate
from credence.memory.semantics.wording import words_of


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Use British spelling in all documents",
            "Use British spelling in client-facing documents",
        ),
        (
            "Squash commits before merging any branch",
            "Squash commits before merging feature branches",
        ),
        ("The freeze applies to the payments service", "The freeze applies to all services"),
        ("Label every ticket in the queue", "Label the security tickets in the queue"),
    ],
)
def test_a_part_named_for_all_of_a_thing_is_found(old: str, new: str) -> None:
    assert part_named_for_all(words_of(old), words_of(new))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Both claim all, or a word before the thing the other side has too.
        ("All new endpoints need tests", "Every new endpoint needs tests"),
        ("Every README the team writes needs a setup section", "The team's README files need one"),
        # "any" under a negation claims none; "of all" opens a superlative; "every day" recurs.
        ("Don't book any meetings before 10 am", "Never book team meetings before 10 am"),
        ("Of all cuisines, the user likes Thai food best", "The user's favourite cuisine is Thai"),
        ("Logs rotate every day", "Logs rotate on a daily schedule"),
        ("Every second Saturday, the user drives", "On alternate Saturdays the user drives"),
    ],
)
def test_no_part_is_named_where_none_is_narrowed(old: str, new: str) -> None:
    assert not part_named_for_all(words_of(old), words_of(new))


def test_a_part_named_for_all_goes_to_a_reviewer_flagged() -> None:
    relation = relate(
        "The user wants British spelling in client-facing documents.",
        "The user wants British spelling in all documents.",
        0.9,
    )
    assert (relation.kind, relation.settled, relation.evidence) == (
        "compatible",
        False,
        "a scope differs",
    )
