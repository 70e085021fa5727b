"""Word orders that keep a statement's meaning, and the ones that do not."""

from __future__ import annotations

import pytest

from credence.memory.semantics.order import (
    hands_exchanged,
    owner_named,
    phrases_moved,
    restated,
    swap_middles,
)
from credence.memory.semantics.small_words import runs_exchanged
from credence.memory.semantics.wording import words_of


def _restated(old: str, new: str) -> bool:
    """Asked both ways round: a restatement is one whichever side is in memory."""
    first, second = words_of(old), words_of(new)
    both = restated(first, second), restated(second, first)
    assert both[0] == both[1], (old, new)
    return both[0]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "The user's lease renews on May 1 each year",
            "Each year on May 1, the user's lease renews",
        ),
        ("The backup runs every six hours", "Every six hours the backup runs"),
        ("Call the user before the release", "Before the release, call the user"),
        ("The user eats fish on Fridays", "On Fridays the user eats fish"),
        ("The user keeps eggs and milk in stock", "The user keeps milk and eggs in stock"),
        (
            "The user's son is older than their daughter",
            "The user's daughter is younger than their son",
        ),
        # "shorter" turns around as "taller" and as "longer".
        (
            "The user's commute by bike is shorter than the commute by bus",
            "The user's commute by bus is longer than the commute by bike",
        ),
        ("The office is above the cafeteria", "The cafeteria is below the office"),
        ("The standup comes before the review", "The review comes after the standup"),
        ("The user bought the house in 2018", "The house was bought by the user in 2018"),
        ("The user's sister feeds the cat", "The cat is fed by the user's sister"),
        # A relation that holds both ways.
        (
            "The user's cousin Lena has been married to Dev since 2019",
            "Dev has been married to the user's cousin Lena since 2019",
        ),
        ("The gym is next to the public library", "The public library is next to the gym"),
        ("Ana's desk is opposite Bo's desk", "Bo's desk is opposite Ana's desk"),
        # "their" of a statement about the user is the user's.
        (
            "The user's brother is three years older than the user",
            "The user is three years younger than their brother",
        ),
        (
            "The user earns more than their partner",
            "The user's partner earns less than the user does",
        ),
        # One handing-over said from either end, in the same tense.
        ("The user lent Marco $200", "Marco borrowed $200 from the user"),
        ("The user sold his old bike to Jake", "Jake bought the user's old bike from him"),
        ("Ana teaches the user Spanish", "The user learns Spanish from Ana"),
        # Two exchanged sides of different lengths.
        (
            "The user's brother Sam is older than the user",
            "The user is younger than their brother Sam",
        ),
        ("The big blue van is faster than the bus", "The bus is slower than the big blue van"),
        (
            "The user speaks Portuguese, Spanish and English",
            "The user speaks English, Spanish and Portuguese",
        ),
        ("Pack socks, gloves or scarves", "Pack scarves, socks or gloves"),
    ],
)
def test_the_same_words_reordered_say_the_same(old: str, new: str) -> None:
    assert _restated(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # "only" reaches another word once the phrase moves.
        (
            "The user only drinks coffee in the morning",
            "In the morning the user only drinks coffee",
        ),
        ("Work between 9 and 5", "Work between 5 and 9"),  # a range, not a list
        # Two things each with its own day, not one list.
        (
            "The user plays tennis on Saturdays and golf on Sundays",
            "The user plays golf on Saturdays and tennis on Sundays",
        ),
        ("The user got married and had a child", "The user had a child and got married"),
        (
            "The user's son is older than their daughter",
            "The user's daughter is older than their son",
        ),
        (
            "The user's son is older than their daughter",
            "The user's son is younger than their daughter",
        ),
        (
            "The user's commute by bike is shorter than the commute by bus",
            "The user's commute by bike is longer than the commute by bus",
        ),
        ("The user bought the house in 2018", "The user was bought by the house in 2018"),
        ("The user bought the house in 2018", "The house is bought by the user in 2018"),  # tense
        ("The dog bit the cat", "The cat bit the dog"),
        ("The user sends reports to Ana", "Ana sends reports to the user"),
        # Both ways only around the relation: "Lena's sister" is no "Dev's sister".
        ("Lena's sister is married to Dev", "Dev's sister is married to Lena"),
        ("The user's brother is married to Priya", "The user's brother is married to Dev"),
        ("The user's son manages Ana", "Ana manages the user's son"),
        ("The user's brother is older than the user", "The user is older than their brother"),
        ("Liam is older than his sister", "Liam's sister is younger than the user"),
    ],
)
def test_reorders_that_change_who_what_or_when_are_not_restatements(old: str, new: str) -> None:
    assert not _restated(old, new)


def test_a_phrase_moves_only_whole() -> None:
    old = words_of("Remind the user before the meeting with the client")
    assert not phrases_moved(old, words_of("With the client, remind the user before the meeting"))
    assert phrases_moved(old, words_of("Before the meeting with the client, remind the user"))


def test_swap_middles_names_the_words_between_the_exchanged_runs() -> None:
    old, new = words_of("the dog bit the cat"), words_of("the cat bit the dog")
    assert [old[1:][start:end] for start, end in swap_middles(old, new)] == [("bit", "the")]
    assert list(swap_middles(old, old)) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The user lent Marco $200", "The user borrowed $200 from Marco"),
        ("The user lent Marco $200", "Marco will borrow $200 from the user"),
        ("Ana sold the car to Bo", "Bo bought the car from Cy"),
    ],
)
def test_a_handing_over_with_its_roles_or_tense_changed_is_no_restatement(
    old: str, new: str
) -> None:
    assert not _restated(old, new)


def test_who_gives_and_who_takes_exchanged_is_seen_in_either_construction() -> None:
    assert hands_exchanged(
        words_of("The user lent Marco $200"), words_of("Marco lent $200 to the user")
    )
    assert hands_exchanged(
        words_of("Ana teaches the user Spanish"), words_of("The user teaches Ana Spanish")
    )
    assert not hands_exchanged(
        words_of("The user lent Marco $200"), words_of("The user lent $200 to Marco")
    )


def test_the_user_behind_a_pronoun_is_named_either_way_round() -> None:
    def named(text: str) -> str:
        return " ".join(owner_named(words_of(text)))

    assert named("The user owes his brother $2,000") == "the user owes the users brother 2 000"
    assert named("The user's brother owes him $2,000") == "the users brother owes the user 2 000"
    assert named("The user's manager sends her a summary") == (
        "the users manager sends the user a summary"
    )
    # "her" before a noun is an owner, and a statement about someone else names no user.
    assert named("The user's sister visits her friend") == "the users sister visits her friend"
    assert named("Dana's brother owes him $20") == "danas brother owes him 20"


def test_roles_traded_around_the_user_are_no_restatement() -> None:
    assert runs_exchanged(
        owner_named(words_of("The user's brother owes him $2,000")),
        owner_named(words_of("The user owes his brother $2,000")),
    )
    assert runs_exchanged(
        owner_named(words_of("The user's sister texts her every evening")),
        owner_named(words_of("The user texts her sister every evening")),
    )
