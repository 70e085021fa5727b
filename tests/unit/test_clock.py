"""RFC 3339 text: four-digit years, so stored timestamps validate and sort as text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from credence.clock import parse_rfc3339, rfc3339


def test_years_before_1000_are_padded_to_four_digits() -> None:
    early = datetime(817, 3, 12, 7, 16, 10, 286186, tzinfo=UTC)
    assert rfc3339(early) == "0817-03-12T07:16:10.286186Z"
    assert parse_rfc3339(rfc3339(early)) == early
    assert rfc3339(early) < rfc3339(datetime(2026, 1, 1, tzinfo=UTC))


def test_offsets_are_normalised_to_utc() -> None:
    moment = datetime(2026, 12, 1, 9, 30, tzinfo=timezone(timedelta(hours=2)))
    assert rfc3339(moment) == "2026-12-01T07:30:00.000000Z"
