"""Tests for what a user's intervention signals to the heuristic reflector."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy
import pytest

from credence.memory.semantics.gate import LiveBelief
from credence.reflection.signals import (
    BELIEF_COSINE,
    confirms,
    denies,
    is_question,
    is_retraction,
    outdated_belief,
    says_changed,
    says_something,
    states_rule,
    teaches_nothing,
)

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def belief(belief_id: str, content: str, status: str = "active") -> LiveBelief:
    return LiveBelief(belief_id, content, status, 0.7, NOW, NOW)


@pytest.mark.parametrize(
    "text",
    [
        "Always put my frequent flyer number on bookings.",
        "Never use exclamation marks.",
        "Invoices must be numbered sequentially.",
        "Commit messages have to be in the imperative mood.",
        "Remember this: hotels need free cancellation.",
        "From now on, sort the list by aisle.",
        "Make sure to run the type checker first.",
        "Please don't delete transactions.",
        "Whenever you book a table, ask for a quiet corner.",
        "Never mention competitors by name. No exceptions.",
    ],
)
def test_explicit_rules_in_the_users_words(text: str) -> None:
    assert states_rule(text)


@pytest.mark.parametrize(
    "text",
    [
        "use metric units",
        "The meeting is at 3pm.",
        "Thanks!",
        # What the user cannot do is no rule for the agent.
        "my neighbour went keto, i could never give up bread tho",
    ],
)
def test_plain_requests_and_facts_are_not_explicit_rules(text: str) -> None:
    assert not states_rule(text)


def test_questions_and_passing_failures_teach_nothing() -> None:
    assert is_question("How full is the NAS right now?")
    # In chat a question may come without its mark, behind filler.
    assert is_question("ok but whats the difference between por and para, i never get it")
    assert is_question("How much protein is in an egg")
    # "when …" opens an instruction as often as a question: it needs the mark.
    assert not is_question("when you write these up, paste the exact commands")
    assert not is_question("Whats wrong with you. Use metric units.")
    assert teaches_nothing("Which file holds the defaults?")
    assert teaches_nothing("The grocery site timed out, just try again.")
    assert teaches_nothing("pip failed with a network error, run it once more.")
    assert not is_question("Cups again? I weigh everything, so list grams.")
    assert not teaches_nothing("Can you use metric units?")
    # A rule about retrying is a rule, not a passing failure.
    assert not teaches_nothing("Never retry failed uploads.")


def test_confirmations() -> None:
    assert confirms("Yes, the list sorted by aisle was perfect, keep doing it that way.")
    assert confirms("Glad you took a snapshot first, that saved us.")
    assert not confirms("No, give me the amounts in grams.")


def test_a_close_correction_saying_a_belief_changed_finds_it() -> None:
    active = [belief("bel_ci", "CI runs on Travis."), belief("bel_py", "Python 3.11.")]
    vectors = numpy.array([[1.0, 0.0], [0.0, 1.0]])
    close = numpy.array([0.9, 0.1])
    found = outdated_belief("We moved off Travis, CI runs on Actions now.", close, active, vectors)
    assert found is not None and found[0].id == "bel_ci" and found[1] > BELIEF_COSINE
    # The same words far from every belief, or with no sign of change, retire nothing.
    far = numpy.array([0.1, -0.9])
    assert outdated_belief("CI runs on Actions now.", far, active, vectors) is None
    assert outdated_belief("CI runs on Travis, good.", close, active, vectors) is None
    assert outdated_belief("CI runs on Actions now.", None, active, vectors) is None


def test_a_change_offering_a_new_value_finds_that_belief_over_one_sharing_a_word() -> None:
    # "museum" is a word of the opening-hours belief; the new code replaces the dates' one.
    active = [
        belief("bel_hours", "The museum is closed on Mondays."),
        belief("bel_dates", "Object dates are written with BC/AD."),
    ]
    vectors = numpy.array([[1.0, 0.0], [0.0, 1.0]])
    text = "we switched to BCE/CE across the whole museum"
    sentence = numpy.array([0.5, 0.6])
    found = outdated_belief(text, sentence, active, vectors, [(text, sentence)])
    assert found is not None and found[0].id == "bel_dates"


def test_only_active_beliefs_are_retired() -> None:
    pending = [belief("bel_ci", "CI runs on Travis.", status="pending")]
    vectors = numpy.array([[1.0, 0.0]])
    assert outdated_belief("CI is on Actions now.", vectors[0], pending, vectors) is None


def test_a_retraction_names_no_replacement() -> None:
    assert is_retraction("That's not true anymore", "The user drives to work.")
    assert not is_retraction("We report in euros now, not dollars.", "We report in dollars.")


def test_confirmations_in_the_users_words() -> None:
    assert confirms("yes, like I said, no dairy for Leo")
    assert confirms("Yes, sentence case, as I said before. Good.")
    assert confirms("yep, that's the rule I gave you")
    assert not confirms("As a rule, use metric units.")
    assert not confirms("Great, she'll love that")


def test_a_change_of_fact_is_said_in_a_statement() -> None:
    assert says_changed("We ripped out the gas hob, it's an induction top now.")
    assert says_changed("Jonas left the company in May.")
    assert says_changed("Backups don't go to the NAS anymore.")
    assert says_changed("the nest is gone, we put in an ecobee last week.")
    assert says_changed("still says northwind, i left in august.")
    assert says_changed("we moved release day to thursday last month")
    assert says_changed("fyi we ditched pixieset last month, everything goes on shootproof")
    # Clause by clause: "always" in another clause does not make the change a request.
    assert says_changed("interviews are an hour now, 45 min was always too tight")
    assert not says_changed("Book it now, and always use the corporate card.")
    assert not says_changed("Book me a flight to Berlin now.")
    assert not says_changed("Is the CI still on Travis now?")
    assert not says_changed("The CI runs on Travis.")
    assert not says_changed("Turn left at the station.")
    assert not says_changed("Has the parcel gone out yet?")


def test_praise_and_scolding_say_nothing_to_learn() -> None:
    assert not says_something("great, thanks!")
    assert not says_something("No, that's wrong again.")
    assert says_something("Use metric units.")


def test_a_request_for_one_occasion_teaches_nothing() -> None:
    assert teaches_nothing("Skip the gym today, I'm sick.")
    assert not teaches_nothing("Never book the gym before 7, not even today.")
    assert not teaches_nothing("As of today we bill in euros, not dollars.")


def test_a_sentence_saying_a_belief_changed_finds_it_when_the_whole_is_far() -> None:
    active = [belief("bel_stove", "The user cooks on a gas stove."), belief("bel_x", "Tea.")]
    vectors = numpy.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    text = "We ripped out the gas hob, it's induction now. Also, fewer onions."
    far = numpy.array([0.2, 0.98, 0.0])
    near = numpy.array([0.32, 0.95, 0.0])
    named = [("We ripped out the gas hob, it's induction now.", near)]
    found = outdated_belief(text, far, active, vectors, named)
    assert found is not None and found[0].id == "bel_stove"
    # Without the shared word the sentence must be closer; without a change, nothing.
    unnamed = [("It's an induction top now.", near)]
    assert outdated_belief("It's an induction top now.", far, active, vectors, unnamed) is None
    still = [("We cook on the gas hob.", numpy.array([0.9, 0.1, 0.0]))]
    assert outdated_belief("We cook on the gas hob.", far, active, vectors, still) is None


def test_a_change_naming_two_of_a_beliefs_words_needs_less_closeness_than_one() -> None:
    active = [belief("bel_bank", "Pay suppliers from the Barclays business account.")]
    vectors = numpy.array([[1.0, 0.0, 0.0]])
    at_035 = numpy.array([0.35, (1 - 0.35**2) ** 0.5, 0.0])
    two = "We moved to Monzo last month, the barclays business thing is closed."
    assert outdated_belief(two, at_035, active, vectors) is not None
    one = "We moved to Monzo last month, the barclays thing is closed."
    assert outdated_belief(one, at_035, active, vectors) is None
    far = numpy.array([0.25, (1 - 0.25**2) ** 0.5, 0.0])
    assert outdated_belief(two, far, active, vectors) is None


def test_a_change_naming_the_beliefs_own_value_needs_only_not_to_be_unrelated() -> None:
    active = [belief("bel_crm", "Deals and activities are tracked in Salesforce.")]
    vectors = numpy.array([[1.0, 0.0, 0.0]])
    at_022 = numpy.array([0.22, (1 - 0.22**2) ** 0.5, 0.0])
    said = "we migrated to hubspot, salesforce is dead to us"
    found = outdated_belief(said, at_022, active, vectors, [(said, at_022)])
    assert found is not None and found[0].id == "bel_crm"
    # An ordinary word of the belief is not its value, and a name is named whole.
    plain = "we migrated the deals to a new board"
    assert outdated_belief(plain, at_022, active, vectors, [(plain, at_022)]) is None
    york = [belief("bel_law", "Our standard governing law is New York.")]
    new = "we switched to delaware in the new templates"
    assert outdated_belief(new, at_022, york, vectors, [(new, at_022)]) is None


def test_saying_the_opposite_of_a_belief_about_the_same_things_denies_it() -> None:
    kept = "The user drinks coffee every morning."
    assert denies("No, I don't drink coffee at all.", kept)
    assert not denies("I drink coffee black.", kept)  # same polarity
    assert not denies("I don't drink tea.", kept)  # one shared word is not the same thing


def test_a_denial_close_to_a_belief_retires_it_without_a_change_word() -> None:
    active = [belief("bel_coffee", "The user drinks coffee every morning.")]
    vectors = numpy.array([[1.0, 0.0]])
    close = numpy.array([0.5, 0.866])  # cosine 0.5: under BELIEF_COSINE, over the denial floor
    found = outdated_belief("No, I don't drink coffee at all.", close, active, vectors)
    assert found is not None and found[0].id == "bel_coffee"
    assert outdated_belief("I don't drink tea.", close, active, vectors) is None
