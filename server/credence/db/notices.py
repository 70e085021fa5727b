"""The review ledger: what each recipient was told about which pending belief, and its schedule."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Self

import msgspec

from credence.db.engine import Connection, for_update, placeholders
from credence.db.outbox import stored_reasons
from credence.db.push import Subscriber
from credence.db.records import Record
from credence.models.common import BeliefOp, Provenance
from credence.models.reasons import Reason


class Schedule(Record, frozen=True, kw_only=True):
    """One review_schedule row: when the policy next looks at a recipient, and its last sends."""

    recipient_id: str
    due_at: str | None
    last_push_at: str | None
    last_reminder_at: str | None


class NoticeItem(Record, frozen=True, kw_only=True):
    """A recipient's ledger row of a pending belief, with what a message about it needs."""

    belief_id: str
    agent_id: str
    urgency: Literal["high", "normal", "low"]
    escalation: int
    escalate_at: str | None
    created_at: str
    told_at: str | None
    reminded_at: str | None
    content: str
    provenance: Provenance
    op: BeliefOp
    review_reasons: list[Reason]
    target_belief_id: str | None
    version: int
    agent_name: str

    @classmethod
    def from_row(cls, row: Any) -> Self:
        """The record of an ``items`` row, its review reasons decoded."""
        record = super().from_row(row)
        return msgspec.structs.replace(record, review_reasons=stored_reasons(row["review_reasons"]))


async def insert(conn: Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Record pending beliefs for recipients: (recipient_id, belief_id, agent_id, version,
    urgency, escalation, escalate_at, created_at) each; a row already there stays."""
    if rows:
        await conn.run_many(
            "INSERT INTO review_notices(recipient_id, belief_id, agent_id, belief_version,"
            " urgency, escalation, escalate_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (recipient_id, belief_id) DO NOTHING",
            rows,
        )


async def wake(conn: Connection, recipient_id: str, at: str) -> None:
    """Have the policy look at this recipient by ``at`` (an earlier wake-up stays)."""
    await conn.run(
        "INSERT INTO review_schedule(recipient_id, due_at) VALUES (?, ?)"
        " ON CONFLICT (recipient_id) DO UPDATE SET due_at = CASE WHEN"
        " review_schedule.due_at IS NULL OR review_schedule.due_at > excluded.due_at"
        " THEN excluded.due_at ELSE review_schedule.due_at END",
        (recipient_id, at),
    )


async def due(conn: Connection, now: str, limit: int) -> list[str]:
    """Recipients the policy should look at now, earliest first."""
    found = await conn.rows(
        "SELECT recipient_id FROM review_schedule WHERE due_at <= ?"
        " ORDER BY due_at, recipient_id LIMIT ?",
        (now, limit),
    )
    return [row["recipient_id"] for row in found]


async def next_due(conn: Connection) -> str | None:
    """When the policy next has something to look at, or None."""
    row = await conn.one("SELECT MIN(due_at) AS due FROM review_schedule")
    return row["due"] if row is not None else None


async def lock_schedule(conn: Connection, recipient_id: str) -> Schedule | None:
    """The recipient's schedule, held for this transaction (None if absent)."""
    row = await conn.one(
        f"SELECT {Schedule.columns()} FROM review_schedule"
        f" WHERE recipient_id = ?{for_update(conn)}",
        (recipient_id,),
    )
    return None if row is None else Schedule.from_row(row)


async def set_schedule(
    conn: Connection,
    recipient_id: str,
    *,
    due_at: str | None,
    last_push_at: str | None,
    last_reminder_at: str | None,
) -> None:
    """Write the recipient's next look, last push and last reminder."""
    await conn.run(
        "UPDATE review_schedule SET due_at = ?, last_push_at = ?, last_reminder_at = ?"
        " WHERE recipient_id = ?",
        (due_at, last_push_at, last_reminder_at, recipient_id),
    )


async def drop_settled(conn: Connection, recipient_id: str) -> None:
    """Forget the recipient's rows of beliefs no longer pending (decided, in any way)."""
    await conn.run(
        "DELETE FROM review_notices WHERE recipient_id = ? AND belief_id IN (SELECT n.belief_id"
        " FROM review_notices n JOIN beliefs b ON b.id = n.belief_id"
        " WHERE n.recipient_id = ? AND b.status <> 'pending')",
        (recipient_id, recipient_id),
    )


async def items(conn: Connection, recipient_id: str) -> list[NoticeItem]:
    """The recipient's ledger rows of pending beliefs, with what a message about them needs."""
    rows = await conn.rows(
        "SELECT n.belief_id, n.agent_id, n.urgency, n.escalation, n.escalate_at, n.created_at,"
        " n.told_at, n.reminded_at, b.content, b.provenance, b.op, b.review_reasons,"
        " b.target_belief_id, b.version, a.name AS agent_name FROM review_notices n"
        " JOIN beliefs b ON b.id = n.belief_id JOIN agents a ON a.id = n.agent_id"
        " WHERE n.recipient_id = ? AND b.status = 'pending' ORDER BY n.created_at, n.belief_id",
        (recipient_id,),
    )
    return NoticeItem.from_rows(rows)


async def mark(
    conn: Connection, recipient_id: str, belief_ids: Sequence[str], column: str, at: str
) -> None:
    """Set ``told_at`` or ``reminded_at`` of these beliefs for the recipient."""
    if column not in ("told_at", "reminded_at") or not belief_ids:
        return
    await conn.run(
        f"UPDATE review_notices SET {column} = ? WHERE recipient_id = ?"
        f" AND belief_id IN ({placeholders(len(belief_ids))})",
        (at, recipient_id, *belief_ids),
    )


async def reviewer_subscriptions(conn: Connection, reviewer_id: str) -> list[Subscriber]:
    """The push subscriptions of a reviewer's unrevoked devices, with each key's scope."""
    rows = await conn.rows(
        "SELECT s.id AS subscription_id, k.id AS key_id, k.scope AS scope, k.agents AS agents"
        " FROM push_subscriptions s JOIN api_keys k ON k.id = s.key_id"
        " WHERE k.reviewer_id = ? AND k.revoked_at IS NULL AND k.scope IN ('admin', 'reviewer')"
        " ORDER BY s.id",
        (reviewer_id,),
    )
    return Subscriber.from_rows(rows)


async def subscribed_keys_without_reviewer(conn: Connection) -> list[str]:
    """Unrevoked admin or reviewer keys with push subscriptions but no reviewer yet."""
    found = await conn.rows(
        "SELECT DISTINCT k.id FROM api_keys k JOIN push_subscriptions s ON s.key_id = k.id"
        " WHERE k.reviewer_id IS NULL AND k.revoked_at IS NULL"
        " AND k.scope IN ('admin', 'reviewer') ORDER BY k.id"
    )
    return [row["id"] for row in found]


async def channel_policy(conn: Connection, channel_id: str) -> dict[str, Any] | None:
    """The channel's notification policy (its JSON object), None when the channel is gone."""
    row = await conn.one("SELECT notifications FROM push_channels WHERE id = ?", (channel_id,))
    return None if row is None else msgspec.json.decode(row["notifications"])


async def set_channel_policy(conn: Connection, channel_id: str, policy_json: str) -> bool:
    """Replace a channel's notification policy; False when there is no such channel."""
    changed = await conn.run(
        "UPDATE push_channels SET notifications = ? WHERE id = ?", (policy_json, channel_id)
    )
    return bool(changed)


async def forget_recipient(conn: Connection, recipient_id: str) -> None:
    """Drop a recipient that no longer exists (its rows and schedule)."""
    await conn.run("DELETE FROM review_notices WHERE recipient_id = ?", (recipient_id,))
    await conn.run("DELETE FROM review_schedule WHERE recipient_id = ?", (recipient_id,))
