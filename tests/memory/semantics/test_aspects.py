"""Tense and hedges: what was so against what is, and what might be against what is."""

from __future__ import annotations

import pytest

from credence.memory.semantics.aspects import (
    aspect_differs,
    hedged,
    recurrence_differs,
    tense_shift,
    wish_differs,
)
from credence.memory.semantics.wording import words_of


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The user's manager is Alice", "The user's manager was Alice"),
        ("The user has a dog", "The user had a dog"),
        ("The user owns a car", "The user owned a car"),
        ("The user keeps a diary", "The user kept a diary"),
        ("The user will move to Lisbon", "The user moved to Lisbon"),
        ("The user wants to learn Spanish", "The user learned Spanish"),
        ("Backups should run nightly", "Backups should have run nightly"),
        ("The user would like tea", "The user would have liked tea"),
        ("The billing service runs on Kubernetes", "The billing service will run on Kubernetes"),
        # A modal's perfect did not happen: "would have taken" against "took".
        ("The user would have taken the job", "The user took the job"),
        ("The team could have shipped on Friday", "The team shipped on Friday"),
        # A bare base between the same two words as the other side's past is a verb now.
        ("The user's parents live in Tucson", "The user's parents lived in Tucson"),
        ("The kids walk to school", "The kids walked to school"),
    ],
)
def test_what_was_so_is_not_what_is(old: str, new: str) -> None:
    assert tense_shift(words_of(old), words_of(new))
    assert tense_shift(words_of(new), words_of(old))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Passives and perfects are no past tense; a bare base may be a noun.
        ("The lawyer reviews the contracts", "The contracts are reviewed by the lawyer"),
        ("Format Python code with black", "Python code gets formatted by black"),
        ("Don't rename files in the archive", "Never rename archived files"),
        ("Summaries should be bullet points", "Use a bulleted list for summaries"),
        ("Show prices including tax", "Display prices with tax included"),
        ("The user owns a car", "The user has owned a car"),
        ("Backups should run nightly", "Backups must run nightly"),
        # "have" is the verb here, not a perfect's auxiliary.
        ("Limit coffee to two cups a day", "The user should have at most two cups a day"),
        # A bare base after a determiner or before another word is a noun; "has" is present.
        ("Keep the archive files", "Keep the archived files"),
        ("The car needs an oil change every 5,000 miles", "The car needs its oil changed"),
        ("The user canceled her gym membership", "The user cancelled her gym membership"),
        ("Only Ana and the user have admin access", "Nobody but Ana and the user has admin access"),
    ],
)
def test_participles_and_nouns_set_no_tense(old: str, new: str) -> None:
    assert not tense_shift(words_of(old), words_of(new))


def test_a_hedge_puts_a_statement_as_possible() -> None:
    assert hedged(words_of("The user might be allergic to nuts"))
    assert hedged(words_of("The user probably prefers email"))
    assert not hedged(words_of("The user is allergic to nuts"))


@pytest.mark.parametrize(
    ("not_yet", "done"),
    [
        ("The user is moving to Denver", "The user has moved to Denver"),
        ("The team is migrating to Postgres", "The team has migrated to Postgres"),
        ("The user plans to adopt a cat", "The user has adopted a cat"),
        ("The team will migrate to Postgres", "The team has migrated to Postgres"),
        # Participles spelled as their base, or irregular, say done too.
        ("The user is quitting coffee", "The user has quit drinking coffee"),
        ("The user is writing a novel", "The user has written a novel"),
    ],
)
def test_what_is_under_way_or_planned_is_not_what_is_done(not_yet: str, done: str) -> None:
    assert aspect_differs(words_of(not_yet), words_of(done))
    assert aspect_differs(words_of(done), words_of(not_yet))


def test_what_is_not_yet_done_on_both_sides_or_on_one_alone_is_no_difference() -> None:
    # Both under way, planned against under way, or only one saying either, is no difference.
    assert not aspect_differs(
        words_of("The user will move to Oslo"), words_of("The user is moving to Oslo")
    )
    assert not aspect_differs(
        words_of("The user is learning Go"), words_of("The user is studying Go")
    )
    assert not aspect_differs(
        words_of("The user has moved to Denver"), words_of("The user lives in Denver")
    )


def _read(old: str, new: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return words_of(old), words_of(new)


def test_a_thing_wanted_is_not_a_thing_so() -> None:
    assert wish_differs(
        *_read("The user is able to read Arabic", "The user wants to be able to read Arabic")
    )
    assert wish_differs(*_read("The user reads Arabic", "The user hopes to read Arabic"))
    # Wanted on both sides, in whatever words, or an instruction: no difference.
    assert not wish_differs(
        *_read("The user wants to learn Italian", "The user would like to learn Italian")
    )
    assert not wish_differs(*_read("The user wants to be woken at 6:30", "Wake the user at 6:30"))


def test_a_past_form_that_describes_a_noun_is_no_past_tense() -> None:
    assert not tense_shift(
        words_of("The user's preferred airline is KLM"),
        words_of("KLM is the airline the user prefers"),
    )
    assert tense_shift(words_of("The user preferred KLM"), words_of("The user prefers KLM"))


def test_a_day_named_once_is_not_a_day_every_week() -> None:
    assert recurrence_differs(
        *_read("The office is closed on Monday", "The office is closed on Mondays")
    )
    assert not recurrence_differs(*_read("Standup is on Mondays", "Standup is every Monday"))
    assert not recurrence_differs(*_read("Never deploy on Fridays", "Never deploy on a Friday"))
    assert not recurrence_differs(
        *_read("The weekly sync is on Tuesday", "The sync is on Tuesdays")
    )
    # A weekday's part of day in the plural is every week too.
    assert not recurrence_differs(
        *_read("The user plays tennis on Saturday mornings", "… every Saturday morning")
    )
    assert recurrence_differs(
        *_read("The user plays tennis on Saturday morning", "… every Saturday morning")
    )
