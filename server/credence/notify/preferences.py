"""A reviewer's notification settings: read, checked and saved (the policy decides with them)."""

from __future__ import annotations

import json
from typing import Any

from credence.access.principal import Principal
from credence.access.reviewers import reviewer_of
from credence.clock import Clock, rfc3339
from credence.db import notices as notices_db
from credence.db import reviewers as db_reviewers
from credence.db.engine import Connection
from credence.db.reviewers import ReviewerRecord
from credence.errors import NotFound
from credence.notify import policy


def stored_policy(reviewer: ReviewerRecord | None) -> policy.Policy:
    """The policy a reviewer holds (defaults for what it does not say)."""
    return policy.parse(reviewer.notifications if reviewer is not None else {})


async def settings_of(conn: Connection, principal: Principal, clock: Clock) -> dict[str, Any]:
    """The caller's notification settings in their JSON form."""
    reviewer_id = await reviewer_of(conn, principal, clock)
    return policy.to_json(stored_policy(await db_reviewers.get(conn, reviewer_id)))


async def save_settings(
    conn: Connection, principal: Principal, raw: dict[str, Any], clock: Clock
) -> dict[str, Any]:
    """Check and save the caller's settings (Unprocessable naming the field, nothing saved);
    the policy looks at the reviewer again at once, so held pushes follow shortened quiet hours."""
    checked = policy.parse(raw)
    reviewer_id = await reviewer_of(conn, principal, clock)
    await db_reviewers.get(conn, reviewer_id, lock=True)
    saved = policy.to_json(checked)
    await db_reviewers.set_notifications(conn, reviewer_id, json.dumps(saved, sort_keys=True))
    await notices_db.wake(conn, reviewer_id, rfc3339(clock()))
    return saved


async def channel_settings(conn: Connection, channel_id: str) -> dict[str, Any]:
    """An apprise channel's notification settings (it follows them as a reviewer of its own)."""
    raw = await notices_db.channel_policy(conn, channel_id)
    if raw is None:
        raise NotFound(f"channel {channel_id!r} not found")
    return policy.to_json(policy.parse(raw))


async def save_channel_settings(
    conn: Connection, channel_id: str, raw: dict[str, Any], clock: Clock
) -> dict[str, Any]:
    """Check and save a channel's settings (Unprocessable naming the field, nothing saved)."""
    saved = policy.to_json(policy.parse(raw))
    if not await notices_db.set_channel_policy(conn, channel_id, json.dumps(saved, sort_keys=True)):
        raise NotFound(f"channel {channel_id!r} not found")
    await notices_db.wake(conn, channel_id, rfc3339(clock()))
    return saved
