"""Tests for turning a user's intervention into a clean, general lesson."""

from __future__ import annotations

import pytest

from credence.reflection.wording import (
    imperative,
    in_third_person,
    is_complaint,
    is_directive,
    is_one_off,
    lesson_sentences,
    main_clause_negative,
)


@pytest.mark.parametrize(
    ("said", "lesson"),
    [
        ("no, use metric units please", "Use metric units."),
        ("Can you please cite your sources?", "Cite your sources."),
        # A request in question form beside a rule is part of the lesson, not a question.
        ("can we not print() in here? use the logger", "Don't print() in here. Use the logger."),
        ("Why are we flying? Book the train.", "Book the train."),
        ("Can we deploy on Fridays? Tag the release first.", "Tag the release first."),
        # Chat shorthand is read as the words it stands for.
        ("can u put the prep time next to each meal?", "Put the prep time next to each meal."),
        ("I told you, ask before deleting files!", "Ask before deleting files."),
        ("You should run the tests first", "Run the tests first."),
        ("Ok. Make sure to pin versions, thanks", "Pin versions."),
        ("Stop apologising", "Stop apologising."),
        ("No. Never push to main.", "Never push to main."),
        ("whoa. never push straight to main", "Never push straight to main."),
        ("hold on, ask for a photo first", "Ask for a photo first."),
        ("thanks", "Thanks."),
        ("From now on, keep the list sorted by aisle.", "Keep the list sorted by aisle."),
        (
            "Remember this: hotels have to include free cancellation.",
            "Hotels have to include free cancellation.",
        ),
        (
            "No, that's far too long, keep emails under five sentences.",
            "Keep emails under five sentences.",
        ),
        (
            "Always put my number on bookings and tell me",
            "Always put the user's number on bookings and tell the user.",
        ),
        ("Two decimals on every figure, I keep telling you.", "Two decimals on every figure."),
        ("Actually I prefer an aisle seat now", "The user prefers an aisle seat now."),
        (
            "I don't want layovers, I only fly nonstop",
            "The user doesn't want layovers, the user only flies nonstop.",
        ),
        (
            "Never use emoji in anything I send, I'm serious",
            "Never use emoji in anything the user sends, the user is serious.",
        ),
    ],
)
def test_imperative_lessons_from_the_users_words(said: str, lesson: str) -> None:
    assert imperative(said) == lesson


def test_imperative_picks_the_sentence_about_the_cluster() -> None:
    said = "That is wrong. Please use metric units in recipes."
    assert imperative(said, frozenset({"metric", "unit"})) == "Use metric units in recipes."


def test_contrastive_tails_do_not_flip_polarity() -> None:
    assert not main_clause_negative("Indent with spaces, not tabs")
    assert not main_clause_negative("Use spaces instead of tabs")
    assert main_clause_negative("Don't indent with tabs")


def test_a_lesson_keeps_every_rule_sentence_and_leaves_questions_and_asides_out() -> None:
    said = (
        "Cups again? I weigh everything, so list the ingredients in grams. By the way, Jo visits."
    )
    assert imperative(said) == "The user weighs everything, so list the ingredients in grams."
    both = "No. Never commit directly to main. Always open a PR, even for a one-line fix."
    assert (
        imperative(both)
        == "Never commit directly to main. Always open a PR, even for a one-line fix."
    )


def test_a_reason_stays_when_it_shares_the_rules_words_and_goes_when_it_does_not() -> None:
    said = "Never touch vendor/. The vendor tree is generated. My cat is called Tom."
    assert lesson_sentences(said) == ["Never touch vendor/", "The vendor tree is generated"]


def test_with_no_request_at_all_every_statement_stays() -> None:
    said = "I moved to Seattle last month. I fly out of SEA now, not SFO."
    assert imperative(said) == (
        "The user moved to Seattle last month. The user flies out of SEA now, not SFO."
    )


def test_only_scolding_leaves_the_best_sentence_as_it_was() -> None:
    assert lesson_sentences("Way too long. That's wrong again.") == []
    assert imperative("Way too long. That's wrong again.") == "That's wrong again."


@pytest.mark.parametrize(
    ("sentence", "directive"),
    [
        ("Round percentages to one decimal", True),
        ("No flights before 9", True),
        ("Invoices have to be numbered", True),
        ("I prefer an aisle seat", True),
        ("Don't add print statements", True),
        ("Jonas moved to the partnerships team", False),
        ("npm leaves a package-lock behind", False),
        ("The meeting is at 3", False),
        ("Use tabs?", False),
        ("Celsius!", True),
        ("Aisle seats only", True),
        ("Jo is visiting on Saturday", False),
        ("She's here on Saturday", False),
        ("The Feb one", False),
        # Any common instruction verb opens an imperative, not only the reflector's own few.
        ("greet people by their first name", True),
        ("Water the plants on Sundays", True),
        # A verb of feeling opens praise or a complaint, not a request.
        ("Love the new layout", False),
        ("Hate that font", False),
    ],
)
def test_directives(sentence: str, directive: bool) -> None:
    assert is_directive(sentence) is directive


def test_complaints_and_one_off_scopes() -> None:
    assert is_complaint("Way too wordy")
    assert is_complaint("That's far too long")
    assert not is_complaint("That's travel")
    assert not is_complaint("That's too long, keep it under five sentences, always")
    assert is_one_off("just for today")
    assert is_one_off("Skip the gym this week")
    assert not is_one_off("Skip the gym on Sundays")


@pytest.mark.parametrize(
    ("text", "one_off"),
    [
        ("for this one only go super stiff and polite", True),
        ("just this one, skip the risk ratings", True),
        ("on this one use the long form", True),
        # "this one" naming the thing the agent offered is the subject, not a scope.
        ("this one has a pool, hard pass. we dont want the upkeep", False),
        ("this one is way too far from the station", False),
    ],
)
def test_this_one_is_a_scope_only_after_for_on_or_just_or_before_only(
    text: str, one_off: bool
) -> None:
    assert is_one_off(text) is one_off


def test_past_tenses_stay_past_in_the_third_person() -> None:
    assert imperative("I need a flat pan, I moved house and I flew home") == (
        "The user needs a flat pan, the user moved house and the user flew home."
    )


def test_the_user_in_the_third_person() -> None:
    assert in_third_person("I don't drink my coffee") == "the user doesn't drink the user's coffee"


def test_an_aside_is_dropped_unless_it_says_a_fact_changed() -> None:
    assert lesson_sentences("btw my second shooter is going on leave in june") == []
    reported = "fyi we ditched pixieset last month, everything goes on shootproof now"
    assert lesson_sentences(reported) == [reported]
