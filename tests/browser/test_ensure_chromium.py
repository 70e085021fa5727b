"""A missing Chromium fails the run under CI=true and skips elsewhere (no browser needed)."""

from __future__ import annotations

import pytest

from tests.browser import ensure_chromium
from tests.browser.conftest import without_chromium


@pytest.mark.parametrize("value", ["true", "TRUE", "1", "yes", " true "])
def test_ci_values_that_demand_the_browser(value: str) -> None:
    assert ensure_chromium.in_ci({"CI": value})


@pytest.mark.parametrize("environ", [{}, {"CI": ""}, {"CI": "false"}, {"CI": "0"}])
def test_no_ci_lets_the_browser_tests_skip(environ: dict[str, str]) -> None:
    assert not ensure_chromium.in_ci(environ)


def test_ensure_exits_non_zero_under_ci(capsys: pytest.CaptureFixture[str]) -> None:
    assert ensure_chromium.missing_chromium_exit({"CI": "true"}) == 1
    assert "CI needs the browser tests" in capsys.readouterr().out


def test_ensure_exits_zero_outside_ci(capsys: pytest.CaptureFixture[str]) -> None:
    assert ensure_chromium.missing_chromium_exit({}) == 0
    assert "will skip" in capsys.readouterr().out


def test_the_fixture_fails_under_ci() -> None:
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        without_chromium({"CI": "true"})


def test_the_fixture_skips_outside_ci() -> None:
    with pytest.raises(pytest.skip.Exception, match="is not installed"):
        without_chromium({"CI": "false"})
