"""Calendar dates read as one value however they are written."""

from __future__ import annotations

import pytest

from credence.memory.semantics.dates import read_date
from credence.memory.semantics.relation import relate
from credence.memory.semantics.statements import statement


def date_in(text: str) -> list[str]:
    return [word.canon for word in statement(text).words if word.canon.startswith("@")]


@pytest.mark.parametrize(
    "text",
    [
        "The grant is due 2025-03-15.",
        "The grant is due March 15, 2025.",
        "The grant is due March 15th 2025.",
        "The grant is due 15 March 2025.",
        "The grant is due on the 15th of March, 2025.",
        "The grant is due Mar. 15, 2025.",
        "The grant is due 15 Mar 2025.",
    ],
)
def test_one_date_in_any_written_form_reads_the_same(text: str) -> None:
    assert date_in(text) == ["@2025-03-15"]


def test_a_date_without_a_year_is_a_day_of_the_year() -> None:
    assert date_in("Renew the domain on March 15") == ["@--03-15"]
    assert date_in("Renew the domain on the first of March") == ["@--03-01"]
    assert date_in("Renew the domain on Sept. 3") == ["@--09-03"]


@pytest.mark.parametrize(
    "text",
    [
        "Address the user by their first name",
        "You may 2 or 3 times ask again",
        "Ship the March 2025 release",
        "Order 15 tulips",
        "Pay on 03/04/2025",  # day and month order is the writer's locale: not read
        "The deadline is 2025-13-40",
    ],
)
def test_what_only_looks_like_a_date_is_not_one(text: str) -> None:
    assert date_in(text) == []


def test_a_slashed_date_is_read_when_only_one_order_is_a_date() -> None:
    assert date_in("The lease ends on 08/31/2025") == ["@2025-08-31"]
    assert date_in("The lease ends on 31/08/2025") == ["@2025-08-31"]
    assert date_in("The lease ends on 8/31/2025") == ["@2025-08-31"]
    assert date_in("The lease ends on 13/13/2025") == []


def test_a_date_reader_reports_the_tokens_it_used() -> None:
    assert read_date(["march", "15", ",", "2025", "then"], 0) == ("@2025-03-15", 4)
    assert read_date(["15th", "of", "march"], 0) == ("@--03-15", 3)
    assert read_date(["soon"], 0) is None


def test_a_changed_date_is_a_value_change_and_a_reformatted_one_is_not() -> None:
    changed = relate("The lease ends 2025-09-30.", "The lease ends 2025-10-31.", 0.97)
    assert changed.contradiction == "value_change"
    assert [(c.old, c.new) for c in changed.changes] == [("2025-09-30", "2025-10-31")]
    same = relate("The lease ends 2025-09-30.", "The lease ends September 30, 2025.", 0.9)
    assert same.kind == "duplicate"
