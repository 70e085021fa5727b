"""The quality report's pure parts: which beliefs may have faded below the threshold."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from credence.clock import parse_rfc3339
from credence.memory.lifecycle.report import FADING_BANDS, _bands

NOW = datetime(2030, 1, 2, tzinfo=UTC)


def test_each_band_names_the_latest_renewal_that_can_have_faded() -> None:
    bands = _bands(NOW, lambda_per_day=0.01, threshold=0.5)
    assert len(bands) == FADING_BANDS
    assert bands[0] == (0.5, "2030-01-02T00:00:00.000000Z")
    renewed = [parse_rfc3339(before) for _, before in bands]
    assert renewed == sorted(renewed, reverse=True), "more confident beliefs fade later"


@pytest.mark.parametrize("lambda_per_day", [1e-300, 5e-324, 1e-12])
def test_a_decay_too_slow_for_any_date_reads_as_the_earliest_instant(
    lambda_per_day: float,
) -> None:
    # A fuzzed agent setting: the renewal bound lies before year 1, where no date exists.
    bands = _bands(NOW, lambda_per_day, threshold=0.5)
    assert len(bands) == FADING_BANDS
    assert all(parse_rfc3339(before) <= NOW for _, before in bands)
    assert bands[-1][1].startswith("0001-01-02")


def test_no_decay_or_no_threshold_has_no_bands() -> None:
    assert _bands(NOW, 0.0, 0.5) == []
    assert _bands(NOW, 0.01, 0.0) == []
