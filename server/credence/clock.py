"""The one injected clock every component reads instead of calling datetime.now()."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    """Return the current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def fixed_clock(at: datetime) -> Clock:
    """Return a clock that always reads ``at`` (used to pin a job's notion of now)."""
    pinned = at.astimezone(UTC)
    return lambda: pinned


def rfc3339(moment: datetime) -> str:
    """Format a datetime as RFC 3339 in UTC with microseconds and a trailing Z."""
    utc = moment.astimezone(UTC)
    # strftime's %Y does not pad years before 1000, which RFC 3339 requires to be 4 digits.
    return f"{utc.year:04d}-{utc:%m-%dT%H:%M:%S.%f}Z"


def parse_rfc3339(text: str) -> datetime:
    """Parse an RFC 3339 timestamp; naive values are refused with ValueError."""
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no timezone offset")
    return parsed.astimezone(UTC)
