"""Keyset paging newest first over tables keyed by time-sortable ids."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def newest_first(
    *, agent_ids: Sequence[str] | None, status: str | None, cursor: str | None
) -> tuple[str, list[Any]]:
    """The WHERE clause and parameters for ``ORDER BY id DESC`` pages after ``cursor``."""
    clauses: list[str] = []
    params: list[Any] = []
    if agent_ids is not None:
        clauses.append(f"agent_id IN ({','.join('?' * len(agent_ids))})")
        params.extend(agent_ids)
    if status is not None:
        clauses.append("status = ?")
        params.append(status)
    if cursor is not None:
        clauses.append("id < ?")
        params.append(cursor)
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def next_cursor(rows: Sequence[Any], limit: int) -> str | None:
    """The cursor for the page after ``rows`` (fetched with LIMIT limit + 1), if there is one."""
    return rows[limit - 1]["id"] if len(rows) > limit else None
