"""What the push API reads and changes: subscriptions, channels, the keys actions decide as."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from credence.access.principal import Principal
from credence.clock import rfc3339
from credence.db import channels as channels_db
from credence.db import push as push_db
from credence.db.beliefs import BeliefRecord
from credence.db.channels import Channel
from credence.db.push import NewSubscription, Subscription
from credence.ids import new_id
from credence.models import PushChannel, PushSubscription
from credence.notify import webpush
from credence.notify.channels import scheme_and_host
from credence.notify.outbox import url_hash
from credence.notify.payload import tap_refusal
from credence.notify.worker import MAX_SUBSCRIPTIONS_PER_KEY

if TYPE_CHECKING:
    from credence.db.engine import Database


def subscription_view(row: Subscription) -> PushSubscription:
    """A stored subscription as the API shows it (its keys stay in the store)."""
    return PushSubscription(
        id=row.id,
        key_id=row.key_id,
        endpoint=row.endpoint,
        expiration_time=row.expiration_time,
        created_at=row.created_at,
        last_seen_at=row.last_seen_at,
    )


async def subscribe(
    store: Database,
    key_id: str,
    vetted: webpush.Subscription,
    expiration_time: int | None,
    now: datetime,
) -> tuple[bool, PushSubscription]:
    """Register (or refresh) a vetted device for ``key_id``; (created, the subscription).

    Raises Conflict when another key registered the endpoint.
    """
    new = NewSubscription(
        key_id=key_id,
        endpoint=vetted.endpoint,
        p256dh=vetted.p256dh,
        auth=vetted.auth,
        expiration_time=expiration_time,
    )
    subscription_id, stamp = new_id("sub"), rfc3339(now)
    created, row = await store.write(
        lambda conn: push_db.upsert_subscription(
            conn, new, subscription_id=subscription_id, now=stamp, keep=MAX_SUBSCRIPTIONS_PER_KEY
        )
    )
    return created, subscription_view(row)


async def subscriptions_of_key(store: Database, key_id: str) -> list[PushSubscription]:
    """A key's own subscriptions, most recently seen first."""
    rows = await store.read(lambda conn: push_db.subscriptions_of_key(conn, key_id))
    return [subscription_view(row) for row in rows]


async def unsubscribe(store: Database, subscription_id: str, owner: str | None) -> bool:
    """Delete a subscription (only ``owner``'s unless None); True when it existed."""
    return await store.write(lambda conn: push_db.delete_subscription(conn, subscription_id, owner))


async def action_principal(store: Database, key_id: str) -> Principal | None:
    """The key a notification's action decides as; None when it is gone or revoked."""
    key = await store.read(lambda conn: push_db.action_key(conn, key_id))
    if key is None or key.revoked_at is not None:
        return None
    return Principal(
        key_id=key.id,
        scope=key.scope,
        agents=frozenset(key.agents) if key.agents is not None else None,
        label=key.label,
    )


def tap_refusal_of(belief: BeliefRecord, action: str) -> str | None:
    """Why a notification's ``action`` may not decide ``belief`` (the card must), or None."""
    return tap_refusal(belief.op, belief.review_reasons, belief.provenance, action)


async def action_used(store: Database, key_id: str, idem_keys: Sequence[str]) -> bool:
    """Whether an action under any of these Idempotency-Keys was applied already."""
    return await store.read(lambda conn: push_db.action_used(conn, key_id, idem_keys))


# --- channels -------------------------------------------------------------------------------


def channel_view(channel: Channel) -> PushChannel:
    """A channel as the API shows it (never the raw URL, which holds secrets)."""
    return PushChannel(
        id=channel.id,
        source=channel.source,
        url=scheme_and_host(channel.masked_url),
        label=channel.label,
        agents=channel.agents,
        created_at=channel.created_at,
        kind=channel.kind,
    )


async def list_channels(store: Database) -> list[PushChannel]:
    """Every channel, CREDENCE_APPRISE_URLS ones included, with masked URLs."""
    return [channel_view(row) for row in await store.read(channels_db.list_channels)]


async def add_channel(
    store: Database,
    *,
    url: str,
    masked_url: str,
    label: str,
    agents: Sequence[str] | None,
    kind: Literal["apprise", "ntfy"],
    access_token: str | None,
    key_id: str | None,
    now: datetime,
) -> PushChannel:
    """Add an admin channel; NotFound for an unknown agent, Conflict for a known URL."""
    channel = Channel(
        id=new_id("chn"),
        source="admin",
        url=url,
        url_hash=url_hash(url),
        masked_url=masked_url,
        label=label,
        agents=sorted(set(agents)) if agents else None,
        created_at=rfc3339(now),
        kind=kind,
        access_token=access_token,
        key_id=key_id,
    )
    return channel_view(await store.write(lambda conn: channels_db.create_channel(conn, channel)))


async def remove_channel(store: Database, channel_id: str) -> None:
    """Remove an admin channel; NotFound, or Conflict for one from CREDENCE_APPRISE_URLS."""
    await store.write(lambda conn: channels_db.delete_admin_channel(conn, channel_id))
