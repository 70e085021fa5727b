"""Cron schedules (UTC): the one check every schedule passes, and the windows it fires at."""

from __future__ import annotations

from datetime import UTC, datetime

from croniter import CroniterError, croniter

from credence.errors import Unprocessable

# Any fixed instant will do: a schedule that fires at all has a time before and after each one.
_ANCHOR = datetime(2000, 1, 1, tzinfo=UTC)


class CronRejected(Unprocessable):
    """A schedule that cannot work; the message names the field (the app answers 422)."""


def check_cron(expression: str, field: str = "cron") -> None:
    """Refuse anything but a 5-field cron expression that has a next and a previous fire time.

    ``0 3 31 2 *`` (February 31st) parses, but croniter raises when asked when it fires.
    """
    if len(expression.split()) != 5 or not croniter.is_valid(expression):
        raise CronRejected(f"{field}: {expression!r} is not a 5-field cron expression")
    try:
        croniter(expression, _ANCHOR).get_next(datetime)
        croniter(expression, _ANCHOR).get_prev(datetime)
    except (CroniterError, ValueError, OverflowError):
        raise CronRejected(f"{field}: {expression!r} never fires (no date matches it)") from None


def latest_window(expression: str, now: datetime) -> datetime:
    """The most recent scheduled time at or before ``now`` (UTC)."""
    return croniter(expression, now).get_prev(datetime)


def next_window(expression: str, now: datetime) -> datetime:
    """The next scheduled time after ``now`` (UTC)."""
    return croniter(expression, now).get_next(datetime)
