"""The notification outbox: rows written in the same transaction that makes a belief pending."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import quote

from credence.clock import Clock, rfc3339
from credence.db import channels as channels_db
from credence.db import outbox as outbox_db
from credence.db import push as push_db
from credence.db.beliefs import BeliefRecord
from credence.db.channels import Channel
from credence.ids import new_id
from credence.models.reasons import Reason
from credence.notify import tokens
from credence.notify.payload import (
    TITLE,
    UNTRUSTED_BODY,
    build_payload,
    changed_id,
    changes_line,
    opens_only,
    strip_control,
    to_plain_text,
    topic_for,
    truncate_to_bytes,
)

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database

URGENCY = "normal"
CHANNEL_TEXT_BYTES = 1500
KIND_BELIEF = outbox_db.KIND_BELIEF


@dataclass(frozen=True)
class OutboxConfig:
    """What enqueueing needs besides the transaction: the token secret, TTL, links and clock."""

    secret: bytes
    ttl_seconds: int
    base_url: str
    clock: Clock


def deep_link(belief_id: str) -> str:
    """The PWA's relative link to a belief's card (the static router serves only ``/``)."""
    return f"/?belief={quote(belief_id, safe='')}"


def channel_message(
    *,
    belief_id: str,
    agent_name: str,
    content: str,
    provenance: str,
    base_url: str,
    changes: str | None = None,
) -> tuple[str, str]:
    """The (title, body) apprise channels get: the same text as the push, plus the full link."""
    if provenance == "untrusted":
        text = UNTRUSTED_BODY
    else:
        text = truncate_to_bytes(to_plain_text(content), CHANNEL_TEXT_BYTES) or "(empty)"
    if changes is not None:
        text = f"{text}\n{changes}"
    name = " ".join(strip_control(agent_name).split())[:120]
    link = base_url.rstrip("/") + deep_link(belief_id)
    return TITLE, f"{text}\n\n{name} · review it in Credence: {link}"


async def changes_of(
    conn: Connection,
    *,
    agent_id: str,
    op: str,
    target_belief_id: str | None,
    review_reasons: Sequence[Reason],
) -> str | None:
    """The "Replaces: …"-style line of a belief that changes another one, else None."""
    if not opens_only(op, review_reasons):
        return None
    target_id = changed_id(op, target_belief_id, review_reasons)
    target = None
    if target_id is not None:
        target = await outbox_db.changed_belief(conn, target_id, agent_id)
    return changes_line(
        op,
        target.content if target is not None else None,
        target.provenance if target is not None else None,
    )


async def _pending_count(conn: Connection, scope: str, agents: list[str] | None) -> int:
    """Pending beliefs a key of this scope and agent list can see."""
    if scope == "admin" or agents is None:
        return await outbox_db.pending_count(conn, None)
    return await outbox_db.pending_count(conn, sorted(agents))


async def pending_count(conn: Connection, agents: frozenset[str] | None) -> int:
    """How many pending beliefs a key covering ``agents`` (None: every agent) can see."""
    return await outbox_db.pending_count(conn, None if agents is None else sorted(agents))


async def enqueue_pending(
    conn: Connection, belief: BeliefRecord, config: OutboxConfig
) -> tuple[int, int]:
    """Queue the notifications for one new pending belief; returns (push rows, channel rows).

    Runs inside the transaction that inserts the belief, so the belief and its notifications
    commit or roll back together.
    """
    agent_id = belief.agent_id
    version = belief.version
    now = config.clock()
    expires = now + timedelta(seconds=config.ttl_seconds)
    now_text, expires_text = rfc3339(now), rfc3339(expires)
    agent_name = await outbox_db.agent_name(conn, agent_id) or agent_id
    subscribers = await push_db.subscribers(conn, agent_id)
    counts: dict[str, int] = {}
    topic = topic_for(belief.id)
    changes = await changes_of(
        conn,
        agent_id=agent_id,
        op=belief.op,
        target_belief_id=belief.target_belief_id,
        review_reasons=belief.review_reasons,
    )
    push_rows = []
    for sub in subscribers:
        if sub.key_id not in counts:
            counts[sub.key_id] = await _pending_count(conn, sub.scope, sub.agents)
        token = tokens.issue(
            config.secret,
            belief_id=belief.id,
            version=version,
            key_id=sub.key_id,
            expires_at=expires,
        )
        payload = build_payload(
            belief_id=belief.id,
            agent_id=agent_id,
            agent_name=agent_name,
            content=belief.content,
            provenance=belief.provenance,
            pending_count=counts[sub.key_id],
            token=token,
            ttl_seconds=config.ttl_seconds,
            op=belief.op,
            changes=changes,
        )
        push_rows.append(
            (
                new_id("msg"),
                sub.subscription_id,
                belief.id,
                version,
                KIND_BELIEF,
                payload,
                topic,
                URGENCY,
                config.ttl_seconds,
                now_text,
                expires_text,
                now_text,
            )
        )
    await outbox_db.insert_push_rows(conn, push_rows)
    channel_ids = await channels_db.channels_for_agent(conn, agent_id)
    if channel_ids:
        title, body = channel_message(
            belief_id=belief.id,
            agent_name=agent_name,
            content=belief.content,
            provenance=belief.provenance,
            base_url=config.base_url,
            changes=changes,
        )
        await outbox_db.insert_channel_rows(
            conn,
            [
                (
                    new_id("cmsg"),
                    channel_id,
                    belief.id,
                    version,
                    KIND_BELIEF,
                    title,
                    body,
                    now_text,
                    expires_text,
                    now_text,
                )
                for channel_id in channel_ids
            ],
        )
    return len(push_rows), len(channel_ids)


def pending_hook(config: OutboxConfig):
    """A ``BeliefHooks.in_txn_pending`` hook that queues every new pending belief's pushes at
    once, without the review policy (the push component runs the planner instead)."""

    async def hook(conn: Connection, belief: BeliefRecord) -> None:
        await enqueue_pending(conn, belief, config)

    return hook


# --- channels -------------------------------------------------------------------------------


def url_hash(url: str) -> str:
    """The identity of a channel URL (stored UNIQUE so the same URL is one channel)."""
    return hashlib.sha256(url.strip().encode("utf-8")).hexdigest()


async def sync_env_channels(
    store: Database, urls: Sequence[str], masked: Callable[[str], str], now: datetime
) -> None:
    """Mirror CREDENCE_APPRISE_URLS into the channels table: add new ones, drop removed ones."""
    created = rfc3339(now)
    wanted = {
        url_hash(url): Channel(
            id=new_id("chn"),
            source="env",
            url=url.strip(),
            url_hash=url_hash(url),
            masked_url=masked(url.strip()),
            label="CREDENCE_APPRISE_URLS",
            agents=None,
            created_at=created,
        )
        for url in urls
        if url.strip()
    }
    await store.write(lambda conn: channels_db.sync_env_channels(conn, wanted))
