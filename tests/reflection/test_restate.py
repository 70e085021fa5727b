"""Tests for restating a kept belief with the value a correction replaces."""

from __future__ import annotations

import pytest

from credence.reflection.restate import names_a_value_of, offers_a_value_for, with_new_value


@pytest.mark.parametrize(
    ("belief", "correction", "restated"),
    [
        (
            "The user's home airport is SFO.",
            "I moved to Seattle last month, I fly in and out of SEA now, not SFO.",
            "The user's home airport is SEA.",
        ),
        (
            "The local API dev server listens on port 8080.",
            "The dev API isn't on 8080 anymore, it moved to port 3001. 8080 is the old server.",
            "The local API dev server listens on port 3001.",
        ),
        (
            "Escalate billing disputes to Jonas.",
            "Jonas moved teams, he doesn't handle billing anymore. Those go to Priya now.",
            "Escalate billing disputes to Priya.",
        ),
        (
            "The project's CI runs on Travis.",
            "We moved off Travis, CI runs on GitHub Actions now.",
            "The project's CI runs on GitHub Actions.",
        ),
        # A name corrected to a code when no name is on offer, and the article follows it.
        (
            "Orders ship with Royal Mail.",
            "we're on DPD now. Royal Mail links won't work",
            "Orders ship with DPD.",
        ),
        (
            "The thermostat is a Nest.",
            "the Nest is gone, we put in an Ecobee",
            "The thermostat is an Ecobee.",
        ),
    ],
)
def test_a_single_swapped_value_is_restated_in_the_kept_belief(
    belief: str, correction: str, restated: str | None
) -> None:
    assert with_new_value(belief, correction) == restated


@pytest.mark.parametrize(
    ("belief", "correction"),
    [
        # Lower-case names show no value: the user's own words stay the lesson.
        ("The user's home airport is Dublin.", "not dublin, we moved to cork. fly me from cork"),
        # Two values changed at once.
        ("Backups run nightly at 2am to the NAS.", "Backups run at 4am now, to S3, not the NAS."),
        # Two values of one shape are held and mentioned: which one changed is unclear.
        ("The user signs emails with 'Cheers, Dana'.", "Not 'Cheers, Dana'. Use 'Best, Dana' now."),
        # Nothing new is named.
        ("Mia has swimming on Tuesdays at 5pm.", "Mia quit swimming, take it off the calendar."),
        # Of two values held, the one left unsaid may be the one that changed.
        ("Send invoices to Acme via Stripe.", "Acme pays via PayPal now."),
        ("Deploy with Terraform to AWS.", "We moved to Pulumi, still on AWS."),
        # The correction never mentions the old value.
        ("The user's home airport is SFO.", "I fly out of SEA these days."),
    ],
)
def test_no_restatement_unless_exactly_one_value_is_swapped(belief: str, correction: str) -> None:
    assert with_new_value(belief, correction) is None


def test_a_value_is_named_whole_and_in_any_case() -> None:
    assert names_a_value_of("Orders ship with Royal Mail.", "royal mail links won't work")
    assert names_a_value_of("The dev server listens on port 8080.", "it isn't 8080 anymore")
    assert not names_a_value_of("Our governing law is New York.", "the new templates")
    assert not names_a_value_of("Orders ship with Royal Mail.", "the mail is late")


def test_a_new_code_or_name_is_offered_in_the_place_of_one_of_its_shape() -> None:
    assert offers_a_value_for("Object dates are written with BC/AD.", "we switched to BCE/CE")
    assert offers_a_value_for("Deploys go through Jenkins.", "the team moved deploys to GitLab")
    # A value of another shape, the same value again, or a number: nothing is offered.
    assert not offers_a_value_for("The museum is closed on Mondays.", "we switched to BCE/CE")
    assert not offers_a_value_for("Deploys go through Jenkins.", "Jenkins is slow now")
    assert not offers_a_value_for("Labels are at most 80 words.", "make it 120 words now")
