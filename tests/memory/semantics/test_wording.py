"""How the pair judgement reads a text: phrasal verbs in any tense, numbered compounds, days."""

from __future__ import annotations

import pytest

from credence.memory.semantics.wording import (
    differing_values,
    hard_difference,
    joined_compounds,
    meaning,
    numbered_compounds,
    opposed_words,
    permits,
    reordered,
    same_meaning,
    scope_of,
    without_named_days,
    words_of,
)


def test_a_phrasal_verb_folds_in_any_tense() -> None:
    assert "disable" in words_of("Notifications are turned off for builds")
    assert "enable" in words_of("Keep turning on the alerts")
    assert "enable" in words_of("Switch on dark mode")


def test_looking_after_and_taking_care_of_are_handling() -> None:
    assert same_meaning(
        "The user looks after the neighbour's cat.", "The user takes care of the neighbour's cat."
    )
    assert same_meaning(
        "The user handles the car repairs.", "The user takes care of the car repairs."
    )
    assert not same_meaning("The user looks after the cat.", "The user looks at the cat.")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The team consists of 12 engineers.", "The team is made up of 12 engineers."),
        ("The offsite happens in June.", "The offsite takes place in June."),
        ("The user skips dairy because of an allergy.", "The user skips dairy due to an allergy."),
        ("The user grew up in Ghana.", "The user was raised in Ghana."),
        ("The user is an early riser.", "The user is an early bird."),
        ("The spare tyre is in the trunk.", "The spare tyre is in the boot."),
        ("The user wakes up at 6:30.", "The user gets up at half past six."),
        ("Remind the user a day before each bill.", "Remind the user a day ahead of each bill."),
        ("Never feed the dog grapes.", "Never give the dog grapes."),
    ],
)
def test_a_whole_an_event_a_cause_and_an_upbringing_in_two_words(first: str, second: str) -> None:
    assert same_meaning(first, second)


def test_a_folded_phrase_keeps_what_it_is_said_of() -> None:
    assert not same_meaning("The team consists of 12 engineers.", "The team is made up of 9.")
    assert not same_meaning("The user grew up in Ghana.", "The user was raised in Kenya.")


def test_turned_on_and_turned_off_are_opposites() -> None:
    old = "The user wants notifications turned on for build failures."
    new = "The user wants notifications turned off for build failures."
    assert opposed_words(old, new)
    assert hard_difference(old, new)


def test_an_idiom_means_what_its_phrase_in_wordnet_means_but_a_particle_still_counts() -> None:
    assert same_meaning(
        "The user usually hits the sack around 10:30 pm.",
        "The user usually goes to bed around 10:30 pm.",
    )
    assert not same_meaning(
        "The product launch was moved up a week.", "The product launch was moved back a week."
    )


@pytest.mark.parametrize(
    "said",
    [
        "The user's lunch break lasts 30 minutes.",
        "The user's lunch break is half an hour long.",
        "The user's lunch break takes 30 minutes.",
    ],
)
def test_a_length_of_time_means_the_same_however_its_lasting_is_said(said: str) -> None:
    assert sorted(meaning(said)) == sorted(meaning("The user's lunch break is 30 minutes long."))


def test_the_last_minutes_and_an_instruction_to_take_them_are_no_length() -> None:
    assert "last" in meaning("Questions take up the last 30 minutes of the meeting.")
    assert "long" not in meaning("Take 30 minutes of rest between sets.")


def test_opposites_are_found_by_count_when_the_word_also_stands_on_both_sides() -> None:
    # "lock" is the noun on both sides; the second one became "unlocked".
    old = "Keep the smart lock locked when the cleaners leave."
    new = "Keep the smart lock unlocked when the cleaners leave."
    assert opposed_words(old, new) == (("lock", "unlock"),)
    assert opposed_words(old, old) == ()


def test_a_compound_holding_a_number_is_read_with_its_number_in_digits() -> None:
    assert numbered_compounds("Frontend code uses two-space indentation.") == frozenset({"2-spac"})
    assert numbered_compounds("Use 2-space indents") == numbered_compounds("Use two-space indents")
    assert numbered_compounds("Use force-push sparingly") == frozenset()


def test_compounds_with_other_numbers_are_a_hard_difference() -> None:
    why = hard_difference(
        "Frontend code uses two-space indentation.", "Backend code uses four-space indentation."
    )
    assert "2-spac" in why
    assert "4-spac" in why
    assert hard_difference("Work in two-week sprints", "Work in two-week cycles") == ""


def test_weekends_are_saturday_and_sunday_and_weekdays_monday_to_friday() -> None:
    assert differing_values(
        "Do not send invoices on weekends", "Never send out invoices on a Saturday or Sunday"
    ) == (frozenset(), frozenset())
    weekdays = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday"})
    assert without_named_days(weekdays, frozenset({"weekday"})) == (frozenset(), frozenset())


def test_part_of_a_day_set_is_still_a_changed_value() -> None:
    gone, added = without_named_days(frozenset({"weekend"}), frozenset({"saturday"}))
    assert gone == frozenset({"weekend"})
    assert added == frozenset({"saturday"})


def test_an_order_word_answered_by_its_synonym_is_no_reordering() -> None:
    assert not reordered(
        "Don't schedule meetings before 9am.", "No meetings should be booked earlier than 9am."
    )
    assert reordered(
        "Put the conclusion first, then the details.", "Give the details first, end with it."
    )


def test_a_permission_is_denied_only_by_a_negation_next_to_it() -> None:
    assert permits("Expense claims under $20 can be approved without receipts.")
    assert permits("Merging without tests is okay for documentation-only changes.")
    assert permits("Deploying on Fridays is fine in an emergency.")
    assert not permits("It is not allowed to deploy on Fridays.")
    assert not permits("No one can deploy on Fridays.")
    assert not permits("Nothing may be merged without review.")
    assert not permits("Dependencies may not be pinned loosely.")
    assert not permits("Deploying on Fridays isn't okay.")
    assert not permits("Never deploy on Fridays.")


def test_a_condition_or_exception_sets_a_scope() -> None:
    assert scope_of("Answer in Spanish when the user writes in Spanish") == {"if"}
    assert scope_of("Deploy on Fridays once the release is signed off") == {"if"}
    assert scope_of("Never deploy on Fridays unless it is a hotfix") == {"unless"}
    assert scope_of("Run only the smoke tests for patch releases") == {"only"}


def test_once_that_counts_sets_no_scope() -> None:
    assert scope_of("Water the fiddle-leaf fig once a week") == frozenset()
    assert scope_of("Rotate the keys once per quarter") == frozenset()
    assert scope_of("Ask for a review once") == frozenset()


def test_when_before_an_activity_sets_no_scope() -> None:
    assert scope_of("Use a formal tone when writing to the legal team") == frozenset()
    assert scope_of("When flying, the user would rather sit in an aisle seat") == frozenset()
    # An "-ing" noun opens a condition of its own.
    assert scope_of("Send the digest when morning comes") == {"if"}


def test_where_after_a_verb_of_telling_is_what_is_told() -> None:
    assert scope_of("Don't disclose where the user lives") == frozenset()
    assert scope_of("Use tabs where the linter allows them") == {"if"}


def test_a_compound_written_apart_on_one_side_is_joined_when_the_other_writes_it_whole() -> None:
    assert joined_compounds("Ask which timezone they are in", "Ask what time zone they are in") == (
        "Ask which timezone they are in",
        "Ask what timezone they are in",
    )
    assert joined_compounds("Hold the daily stand-up at 9", "Hold the daily standup at 9")[0] == (
        "Hold the daily standup at 9"
    )
    # A hyphen on one side and a space on the other: one compound, joined on both.
    assert joined_compounds("Check the time-zone", "Check the time zone") == (
        "Check the timezone",
        "Check the timezone",
    )
    # One capital may open a compound ("O negative" / "O-negative"); a small letter may not.
    assert joined_compounds("Blood type O negative", "O-negative blood") == (
        "Blood type onegative",
        "onegative blood",
    )
    assert joined_compounds("plan a trip", "plan a-trip")[0] == "plan a trip"


def test_words_that_change_meaning_when_joined_stay_apart() -> None:
    for old, new in [
        ("Wear everyday clothes", "Wear clothes every day"),
        ("Maybe call the user", "May be call the user"),
        ("Log overtime", "Log hours over time"),
        ("Set up the build", "Keep the setup"),
        ("Book a check-in", "Book a check in"),
    ]:
        assert joined_compounds(old, new) == (old, new)


def test_a_word_the_polarity_counts_is_no_opposite_besides() -> None:
    # "forbidden" negates the statement already; paired with "allowed" it would count twice.
    assert opposed_words("Pets are not allowed here", "Pets are forbidden here") == ()
    assert opposed_words("Pets are allowed here", "Pets are banned here") == ()
    # The verb is no negation word: "forbade" stays the opposite of "allowed".
    assert opposed_words("The landlord allowed pets", "The landlord forbade pets") == (
        ("allow", "forbid"),
    )
