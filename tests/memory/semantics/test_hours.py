"""A range of clock hours whose half of the day is said once."""

from __future__ import annotations

import pytest

from credence.memory.semantics.statements import statement


def _canons(text: str) -> list[str]:
    return [word.canon for word in statement(text).words]


@pytest.mark.parametrize(
    ("text", "opening"),
    [
        ("Naps from 1 to 3 pm", "@13:00"),
        ("Naps from 1 until 3 p.m.", "@13:00"),
        ("Naps between 1 and 3 pm", "@13:00"),
        ("Works from 8 to 10 am", "@08:00"),
        # The end's half of the day, unless the opening hour comes after the end in it.
        ("Works 9 to 5 pm", "@09:00"),
        ("Lunch from 11 to 1 pm", "@11:00"),
    ],
)
def test_a_bare_opening_hour_takes_the_half_of_the_day_the_range_ends_in(
    text: str, opening: str
) -> None:
    assert opening in _canons(text)


def test_a_range_without_am_or_pm_or_of_other_things_stays_numbers() -> None:
    assert "#9" in _canons("Works 9 to 5")
    assert "#3" in _canons("Children aged 3 to 5 years")
    assert "#2" in _canons("Pick 2 and 3 pm slots")  # "and" joins a range only after "between"
