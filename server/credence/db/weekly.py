"""The weekly report digest's reads and its once-a-week claim per reviewer."""

from __future__ import annotations

from typing import Any

from credence.db.engine import Connection, Row
from credence.db.records import Record


class Recipient(Record, frozen=True, kw_only=True):
    """A reviewer the weekly digest may go to, with the week of its last one (None: never)."""

    JSON_FIELDS = frozenset({"notifications"})

    id: str
    notifications: dict[str, Any]
    created_at: str
    week: str | None


async def recipients(conn: Connection) -> list[Recipient]:
    """Reviewers with at least one subscribed, unrevoked device."""
    return Recipient.from_rows(
        await conn.rows(
            "SELECT r.id, r.notifications, r.created_at, w.week FROM reviewers r"
            " LEFT JOIN weekly_digests w ON w.reviewer_id = r.id"
            " WHERE EXISTS (SELECT 1 FROM api_keys k JOIN push_subscriptions s ON s.key_id = k.id"
            " WHERE k.reviewer_id = r.id AND k.revoked_at IS NULL"
            " AND k.scope IN ('admin', 'reviewer')) ORDER BY r.id"
        )
    )


async def agents(conn: Connection) -> list[Row]:
    """Every agent's id and name, by id."""
    return await conn.rows("SELECT id, name FROM agents ORDER BY id")


async def claim(conn: Connection, reviewer_id: str, week: str, at: str) -> bool:
    """Mark ``week`` sent to the reviewer unless it (or a later week) already was; True when
    this transaction claimed it. Concurrent claims of one week: one wins, the other waits for
    it and then finds the week taken."""
    row = await conn.one(
        "INSERT INTO weekly_digests(reviewer_id, week, sent_at) VALUES (?, ?, ?)"
        " ON CONFLICT (reviewer_id) DO UPDATE SET week = excluded.week,"
        " sent_at = excluded.sent_at WHERE weekly_digests.week < excluded.week"
        " RETURNING reviewer_id",
        (reviewer_id, week, at),
    )
    return row is not None
