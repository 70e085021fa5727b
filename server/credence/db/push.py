"""Browser push subscriptions: one row per endpoint, owned by the reviewer key that made it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from credence.db.engine import Connection, Row, for_update, placeholders
from credence.db.records import Record
from credence.errors import Conflict
from credence.models.common import Scope


class Subscription(Record, frozen=True, kw_only=True):
    """One push_subscriptions row."""

    id: str
    key_id: str
    endpoint: str
    p256dh: str
    auth: str
    expiration_time: int | None
    created_at: str
    last_seen_at: str


class ActionKey(Record, frozen=True, kw_only=True):
    """The API key a notification action is applied as; ``agents`` None covers every agent."""

    JSON_FIELDS = frozenset({"agents"})

    id: str
    scope: Scope
    agents: list[str] | None
    label: str
    revoked_at: str | None


class Subscriber(Record, frozen=True, kw_only=True):
    """A subscription that hears of an agent's beliefs, with the key it belongs to."""

    JSON_FIELDS = frozenset({"agents"})

    subscription_id: str
    key_id: str
    scope: Scope
    agents: list[str] | None


SUBSCRIPTION_COLUMNS = Subscription.columns()


@dataclass(frozen=True)
class NewSubscription:
    """What a device sends when it subscribes, already vetted."""

    key_id: str
    endpoint: str
    p256dh: str
    auth: str
    expiration_time: int | None


def json_has(conn: Connection, column: str, param: str) -> str:
    """SQL true when the JSON array of text in ``column`` holds the value bound as ``:param``."""
    if conn.dialect == "postgresql":
        return (
            f"EXISTS (SELECT 1 FROM jsonb_array_elements_text({column}::jsonb) AS e(value)"
            f" WHERE e.value = :{param})"
        )
    return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = :{param})"


async def upsert_subscription(
    conn: Connection, new: NewSubscription, *, subscription_id: str, now: str, keep: int
) -> tuple[bool, Subscription]:
    """Insert or refresh a subscription; returns (created, row).

    The endpoint stays with the key that registered it (Conflict for any other key). A key keeps
    only its ``keep`` most recently seen devices, so one that re-subscribes endlessly cannot
    multiply every notification.
    """
    existing = await _by_endpoint(conn, new.endpoint)
    if existing is None:
        inserted = await conn.run(
            "INSERT INTO push_subscriptions(id, key_id, endpoint, p256dh, auth,"
            " expiration_time, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (endpoint) DO NOTHING",
            (
                subscription_id,
                new.key_id,
                new.endpoint,
                new.p256dh,
                new.auth,
                new.expiration_time,
                now,
                now,
            ),
        )
        if not inserted:  # another replica registered it between our read and insert
            existing = await _by_endpoint(conn, new.endpoint)
    if existing is not None:
        if existing["key_id"] != new.key_id:
            raise Conflict("this push endpoint is registered by another key")
        subscription_id = existing["id"]
        await conn.run(
            "UPDATE push_subscriptions SET p256dh = ?, auth = ?, expiration_time = ?,"
            " last_seen_at = ? WHERE id = ?",
            (new.p256dh, new.auth, new.expiration_time, now, subscription_id),
        )
    await conn.run(
        "DELETE FROM push_subscriptions WHERE key_id = ? AND id NOT IN (SELECT id FROM"
        " push_subscriptions WHERE key_id = ? ORDER BY last_seen_at DESC, id DESC LIMIT ?)",
        (new.key_id, new.key_id, keep),
    )
    row = await conn.one(
        f"SELECT {SUBSCRIPTION_COLUMNS} FROM push_subscriptions WHERE id = ?", (subscription_id,)
    )
    return existing is None, Subscription.from_row(row)


async def _by_endpoint(conn: Connection, endpoint: str) -> Row | None:
    return await conn.one(
        f"SELECT id, key_id FROM push_subscriptions WHERE endpoint = ?{for_update(conn)}",
        (endpoint,),
    )


async def subscriptions_of_key(conn: Connection, key_id: str) -> list[Subscription]:
    """A key's subscriptions, most recently seen first."""
    rows = await conn.rows(
        f"SELECT {SUBSCRIPTION_COLUMNS} FROM push_subscriptions WHERE key_id = ?"
        " ORDER BY last_seen_at DESC, id DESC",
        (key_id,),
    )
    return Subscription.from_rows(rows)


async def test_targets(conn: Connection, key_id: str | None) -> list[Subscription]:
    """The subscriptions a test push goes to: one key's, or those of every unrevoked key."""
    if key_id is not None:
        rows = await conn.rows(
            f"SELECT {SUBSCRIPTION_COLUMNS} FROM push_subscriptions WHERE key_id = ? ORDER BY id",
            (key_id,),
        )
    else:
        rows = await conn.rows(
            f"SELECT {Subscription.columns('s')} FROM push_subscriptions s"
            " JOIN api_keys k ON k.id = s.key_id WHERE k.revoked_at IS NULL ORDER BY s.id"
        )
    return Subscription.from_rows(rows)


async def subscribers(conn: Connection, agent_id: str) -> list[Subscriber]:
    """Subscriptions whose key may review ``agent_id``: admin keys, and reviewer keys whose
    agent list is NULL (every agent) or names it; revoked keys get nothing."""
    rows = await conn.rows(
        "SELECT s.id AS subscription_id, k.id AS key_id, k.scope AS scope, k.agents AS agents"
        " FROM push_subscriptions s JOIN api_keys k ON k.id = s.key_id"
        " WHERE k.revoked_at IS NULL AND k.scope IN ('admin', 'reviewer')"
        f" AND (k.scope = 'admin' OR k.agents IS NULL OR {json_has(conn, 'k.agents', 'agent')})"
        " ORDER BY s.id",
        {"agent": agent_id},
    )
    return Subscriber.from_rows(rows)


async def delete_subscription(conn: Connection, subscription_id: str, key_id: str | None) -> bool:
    """Delete one subscription (only if ``key_id`` owns it, unless None); True when it existed."""
    if key_id is None:
        return bool(
            await conn.run("DELETE FROM push_subscriptions WHERE id = ?", (subscription_id,))
        )
    return bool(
        await conn.run(
            "DELETE FROM push_subscriptions WHERE id = ? AND key_id = ?", (subscription_id, key_id)
        )
    )


async def delete_subscriptions(conn: Connection, ids: Sequence[str]) -> None:
    """Delete these subscriptions (their push service said they are gone), queued rows too."""
    if ids:
        await conn.run(
            f"DELETE FROM push_subscriptions WHERE id IN ({placeholders(len(ids))})", tuple(ids)
        )


async def prune_subscriptions(conn: Connection, *, unseen_since: str, now_ms: int) -> int:
    """Delete subscriptions unseen since then, expired, or of revoked keys; how many went."""
    return await conn.run(
        "DELETE FROM push_subscriptions WHERE last_seen_at < ?"
        " OR (expiration_time IS NOT NULL AND expiration_time <= ?)"
        " OR key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NOT NULL)",
        (unseen_since, now_ms),
    )


async def action_key(conn: Connection, key_id: str) -> ActionKey | None:
    """The key a notification action is applied as; None when there is no such key."""
    row = await conn.one(f"SELECT {ActionKey.columns()} FROM api_keys WHERE id = ?", (key_id,))
    return None if row is None else ActionKey.from_row(row)


async def action_used(conn: Connection, key_id: str, idem_keys: Sequence[str]) -> bool:
    """Whether a notification action under any of these Idempotency-Keys was applied already."""
    row = await conn.one(
        "SELECT 1 FROM idempotency WHERE key_id = ?"
        f" AND idem_key IN ({placeholders(len(idem_keys))})",
        (key_id, *idem_keys),
    )
    return row is not None
