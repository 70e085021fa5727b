"""Validation of an agent's reflection settings that types alone cannot express."""

from __future__ import annotations

from croniter import croniter
from litestar.exceptions import ValidationException


def check_cron(expression: str) -> None:
    """Refuse a cron expression croniter cannot schedule (400 naming the field)."""
    if not croniter.is_valid(expression) or len(expression.split()) != 5:
        raise ValidationException(
            f"reflection.cron: {expression!r} is not a 5-field cron expression"
        )
