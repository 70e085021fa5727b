"""Validation of an agent's reflection settings that types alone cannot express."""

from __future__ import annotations

from litestar.exceptions import ClientException

from credence.reflection.wakes import is_schedulable


def check_cron(expression: str) -> None:
    """Refuse a cron expression croniter cannot schedule (422 naming the field)."""
    if not is_schedulable(expression):
        raise ClientException(
            status_code=422,
            detail=f"reflection.cron: {expression!r} is not a 5-field cron expression",
        )
