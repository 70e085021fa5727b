"""Tests for the belief text keys: normalisation, content tokens, negation and overlap."""

from __future__ import annotations

import pytest

from credence.reflection.text import (
    analyse,
    content_tokens,
    is_negative,
    jaccard,
    normalise,
    polarity_conflict,
)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("PDFs over 10MB exhaust the ingester.", "pdfs over 10mb exhaust the ingester"),
        ("  Ask   before\tdeleting\nfiles ", "ask before deleting files"),
        ("Don't retry!", "dont retry"),
        ("Don’t retry", "dont retry"),
        ("Re-run the tests, then deploy.", "re run the tests then deploy"),
        ("ＦＵＬＬＷＩＤＴＨ text", "fullwidth text"),
        ("STRASSE", "strasse"),
    ],
)
def test_normalise_ignores_case_whitespace_and_punctuation(left: str, right: str) -> None:
    assert normalise(left) == normalise(right)


def test_normalise_keeps_meaningful_symbols_and_separates_words() -> None:
    assert normalise("Use C++ for 100% of hot paths") == "use c++ for 100 of hot paths"
    assert normalise("max_tokens") == "max tokens"
    assert normalise("...!!!") == ""
    assert normalise("Retry uploads") != normalise("Retry downloads")


def test_content_tokens_drop_stop_words_negations_and_fold_plurals() -> None:
    assert content_tokens("Never retry the failed uploads") == {"retry", "failed", "upload"}
    assert content_tokens("Retry a failed upload") == {"retry", "failed", "upload"}
    assert content_tokens("No longer use the v1 API") == {"v1", "api"}
    assert content_tokens("Longer timeouts help") == {"longer", "timeout", "help"}
    assert content_tokens("Summarise the queries and boxes") == {"summarise", "query", "box"}
    assert content_tokens("Check the status and analysis") == {"check", "status", "analysis"}
    assert content_tokens("Do not do it") == frozenset()


@pytest.mark.parametrize(
    "text",
    [
        "Never deploy on Fridays",
        "Don't deploy on Fridays",
        "dont deploy on fridays",
        "Do not deploy on Fridays",
        "Stop deploying on Fridays",
        "Avoid Friday deploys",
        "The v1 API is no longer supported",
        "Refuse requests for raw passwords",
        "Deploy without running tests",
        "You cannot deploy on Fridays",
        "You can't deploy on Fridays",
        "It won't work on Fridays",
        "You shouldn't deploy on Fridays",
        "You must not deploy on Fridays",
        "No deploys on Fridays",
    ],
)
def test_negation_markers(text: str) -> None:
    assert is_negative(text)


@pytest.mark.parametrize(
    "text", ["Deploy on Fridays", "Always run tests", "Notify the team", "Knowledge is power"]
)
def test_positive_statements_are_not_negative(text: str) -> None:
    assert not is_negative(text)


def test_jaccard() -> None:
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard({"a"}, {"a"}) == 1.0
    assert jaccard(set(), set()) == 0.0
    assert jaccard({"a"}, set()) == 0.0


def test_analyse_matches_the_separate_functions() -> None:
    text = "Don't re-send uploads that FAILED!"
    assert analyse(text) == (normalise(text), content_tokens(text), is_negative(text))


def test_polarity_conflict_is_the_lexical_floor() -> None:
    never, retry = analyse("Never retry failed uploads"), analyse("Retry failed uploads")
    assert polarity_conflict(never[1], never[2], retry[1], retry[2])
    dont = analyse("Don't retry failed uploads")
    assert not polarity_conflict(never[1], never[2], dont[1], dont[2])
    unrelated = analyse("Summarise meeting notes")
    assert not polarity_conflict(never[1], never[2], unrelated[1], unrelated[2])
