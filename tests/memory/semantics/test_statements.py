"""Canonical statements: abbreviations read as the words they shorten."""

from __future__ import annotations

import pytest

from credence.memory.semantics.statements import statement, stem


def test_common_abbreviations_read_as_the_word_they_shorten() -> None:
    assert statement("Back up the prod DB nightly").canons == (
        statement("Back up the production database nightly").canons
    )
    assert statement("Back up the prod DB").canons != statement("Back up the dev DB").canons
    assert statement("on Industrial Blvd").canons == statement("on Industrial Boulevard").canons
    assert statement("at 412 Oak Ave., Suite 3").canons == (
        statement("at 412 Oak Avenue, Suite 3").canons
    )
    # "St" may be Saint or Street, "Dr" Doctor or Drive: after a street's name they are the
    # street, before a name the saint or the doctor; opening a sentence, left as written.
    assert statement("lives on Elm St").canons == statement("lives on Elm Street").canons
    assert statement("at 42 Maple St., Apt. 3B").canons == (
        statement("at 42 Maple Street, Apartment 3B").canons
    )
    assert statement("lives on Elm Dr").canons == statement("lives on Elm Drive").canons
    assert statement("sees Dr. Amara Singh").canons == statement("sees Doctor Amara Singh").canons
    assert statement("visits St. Louis").canons != statement("visits Street Louis").canons
    assert statement("Main St is closed").canons != statement("Main Street is closed").canons


def test_a_month_cut_short_is_the_month_unless_the_short_form_is_a_word_or_a_name() -> None:
    assert (
        statement("The review is in Dec.").canons == statement("The review is in December").canons
    )
    assert statement("Ship it by Aug").canons == statement("Ship it by August").canons
    assert statement("The review is in Dec").canons != statement("The review is in Nov").canons
    assert "april" not in statement("The card's APR is 19%").canons
    assert "january" not in statement("Jan reviews the budget").canons


def test_an_existential_there_says_what_the_plain_statement_says() -> None:
    assert statement("There is a park near the office").canons == (
        statement("A park is near the office").canons
    )
    assert statement("There's a leak in the faucet").canons == (
        statement("A leak is in the faucet").canons
    )
    # "there" as a place stays: "Put the keys there".
    assert "ther" in statement("Put the keys there").canons


def test_a_year_cut_to_two_digits_is_the_whole_year() -> None:
    assert statement("moved to Denver in '21").canons == statement("moved to Denver in 2021").canons
    assert statement("graduated in ’98").canons == statement("graduated in 1998").canons
    # A quotation or a decade is no year: "the '90s", "'21 Main'".
    assert statement("loves the '90s").canons != statement("loves the 1990s").canons


def test_a_slash_before_a_period_says_per() -> None:
    assert statement("drinks 2 L of water/day").canons == (
        statement("drinks 2 L of water per day").canons
    )
    assert statement("runs 20 km/week").canons == statement("runs 20 km per week").canons
    # A path keeps its slash.
    assert "docs/day.md" in statement("reads docs/day.md").canons


def test_up_after_its_verb_is_a_particle_not_a_bound() -> None:
    assert "<=" not in statement("The photos are backed up to the drive").canons
    assert "<=" in statement("Store up to 5 GB").canons


def test_a_compass_letter_in_an_address_is_the_direction() -> None:
    assert statement("at 200 W. Fifth St.").canons == statement("at 200 West 5th Street").canons
    assert statement("at 200 E 5th St").canons != statement("at 200 West 5th Street").canons


def test_a_phone_number_is_its_digits_however_spelled() -> None:
    canons = statement("Call (555) 214-7789").canons
    assert canons == statement("Call 555.214.7789").canons
    assert canons == statement("Call +1 555 214 7789").canons
    assert canons != statement("Call 555-214-7788").canons


def test_an_acronyms_possessive_is_no_plural() -> None:
    assert statement("The API's rate limit").canons == statement("The API rate limit").canons
    assert statement("The APIs rate limit").canons != statement("The API rate limit").canons


@pytest.mark.parametrize(
    ("form", "base"),
    [
        ("kept", "keep"),
        ("led", "leads"),
        ("forbade", "forbid"),
        ("goes", "go"),
        ("died", "die"),
        ("childrens", "child"),  # "children's", its apostrophe gone
        ("womens", "woman"),
    ],
)
def test_irregular_verb_forms_stem_as_their_base_form(form: str, base: str) -> None:
    assert stem(form) == stem(base)


@pytest.mark.parametrize(
    ("plural", "singular"), [("children", "child"), ("women", "woman"), ("teeth", "tooth")]
)
def test_irregular_plurals_stem_as_their_singular(plural: str, singular: str) -> None:
    assert stem(plural) == stem(singular)


def test_a_noun_ending_in_ie_meets_its_plural() -> None:
    assert stem("movie") == stem("movies") == "movy"
    assert stem("cookies") == stem("cookie")
    assert stem("tie") == "tie"  # too short to touch


@pytest.mark.parametrize(
    ("form", "base"),
    [
        ("cancelled", "cancel"),
        ("travelling", "travels"),
        ("labelled", "labeled"),
        ("spelled", "spell"),
    ],
)
def test_a_doubled_l_in_a_longer_verb_stems_as_its_base(form: str, base: str) -> None:
    assert stem(form) == stem(base)


def test_a_one_syllable_verb_keeps_its_double_l() -> None:
    assert stem("spelled") == "spell" != stem("spelt")
    assert stem("filled") == "fill"


def kinds(text: str) -> dict[str, str]:
    return {word.surface: word.kind for word in statement(text).words}


def test_a_language_that_is_also_an_everyday_word_is_the_language_only_when_capitalised() -> None:
    assert kinds("The payments service is written in Go")["Go"] == "language"
    assert kinds("Billing questions should go to Priya")["go"] == "word"
    assert kinds("Port the parser to Rust")["Rust"] == "language"
    assert kinds("Keep a swift pace in standups")["swift"] == "word"
    assert kinds("Write the scripts in python")["python"] == "language"


def test_an_acronym_is_no_plural() -> None:
    assert statement("Connect over HTTPS").canons != statement("Connect over HTTP").canons
    assert "aws" in statement("Store files on AWS").canons
    # An abbreviation still expands, and a plural in lower case still folds.
    assert statement("Back up the prod DB").canons == statement("Back up the prod database").canons
    assert statement("Restart the servers").canons == statement("Restart the server").canons


@pytest.mark.parametrize(
    "said",
    ["Friday afternoons are off-limits for merging", "Merging on Friday afternoons is forbidden"],
)
def test_what_is_off_limits_or_forbidden_is_said_negatively(said: str) -> None:
    assert statement(said).negative
    assert not statement("Merging on Friday afternoons is allowed").negative


def test_days_of_the_week_shortened_and_the_working_week() -> None:
    assert (
        statement("Piano is on Thu at 5 pm").canons
        == statement("Piano is on Thursday at 5 pm").canons
    )
    assert statement("They meet on Sat").canons == statement("They meet on Saturday").canons
    assert "sit" in statement("The user sat on the couch").canons  # a verb, not a day
    weekdays = statement("The user commutes by train on weekdays").canons
    assert statement("The user commutes by train Monday through Friday").canons[-1] == weekdays[-1]
    assert statement("The user works Mon to Thu").canons[-1] != weekdays[-1]
