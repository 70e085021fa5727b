"""The review policy applied to the store: the ledger of pending beliefs and the planner."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from credence.access import reviewers as access_reviewers
from credence.clock import parse_rfc3339, rfc3339
from credence.db import notices as notices_db
from credence.db import outbox as outbox_db
from credence.db import reviewers as db_reviewers
from credence.db.beliefs import BeliefRecord
from credence.db.channels import channel_kind, channels_for_agent
from credence.db.notices import NoticeItem
from credence.ids import new_id
from credence.notify import ntfy, policy, tokens
from credence.notify.outbox import OutboxConfig, changes_of, channel_message, pending_count
from credence.notify.payload import build_payload, strip_control, topic_for, truncate_to_bytes
from credence.tasks import PollingLoop

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database


KIND_BELIEF = outbox_db.KIND_BELIEF
DIGEST_TITLE = "Credence"
POLL_SECONDS = 1.0
BATCH = 50


def _recipient_policy(raw: dict[str, Any] | None) -> policy.Policy:
    try:
        return policy.parse(raw or {})
    except Exception:  # a policy saved by an older version: the defaults, never a lost push
        return policy.Policy()


# --- the ledger, written with the belief -----------------------------------------------------


async def record_pending(conn: Connection, belief: BeliefRecord, now: datetime) -> int:
    """Put a new pending belief in its recipients' ledgers; how many recipients it reaches.

    Runs inside the transaction that makes the belief pending, so the belief and the promise to
    tell its reviewers commit together. Owners (the agent's reviewers) and the agent's apprise
    channels are due at once; the agent's other reviewers only at the escalation time.
    """
    for key_id in await notices_db.subscribed_keys_without_reviewer(conn):
        reviewer_id = await access_reviewers.new_reviewer(conn, name="", clock=lambda: now)
        await db_reviewers.link_key(conn, key_id, reviewer_id)
    agent_id = belief.agent_id
    urgency = policy.urgency_of(belief.op, belief.review_reasons)
    devices = await access_reviewers.devices_by_reviewer(conn)
    owners = await access_reviewers.owners_of(conn, agent_id)
    others = [
        rid
        for rid, own in devices.items()
        if rid not in owners and access_reviewers.reviewer_sees(own, agent_id)
    ]
    remind = timedelta(hours=policy.DEFAULT_REMIND_HOURS)
    if owners:
        rows = [await db_reviewers.get(conn, rid) for rid in owners]
        remind = min(_recipient_policy(r.notifications).remind_after for r in rows if r)
    now_text = rfc3339(now)
    escalate_at = rfc3339(now + 2 * remind)
    channels = await channels_for_agent(conn, agent_id)
    base = (belief.id, agent_id, belief.version, urgency)
    await notices_db.insert(
        conn,
        [(rid, *base, 0, None, now_text) for rid in [*owners, *channels]]
        + [(rid, *base, 1, escalate_at, now_text) for rid in others],
    )
    for rid in [*owners, *channels]:
        await notices_db.wake(conn, rid, now_text)
    for rid in others:
        await notices_db.wake(conn, rid, escalate_at)
    return len(owners) + len(channels) + len(others)


def pending_hook(clock: Callable[[], datetime]):
    """A ``BeliefHooks.in_txn_pending`` hook: every new pending belief enters the ledger (the
    planner is woken after the commit, by a ``BeliefHooks.after_pending`` hook)."""

    async def hook(conn: Connection, belief: BeliefRecord) -> None:
        await record_pending(conn, belief, clock())

    return hook


# --- the planner --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Planned:
    """What one look at one recipient queued: (kind, the belief ids it speaks of) per push."""

    recipient_id: str
    sends: tuple[tuple[str, tuple[str, ...]], ...]


async def plan_recipient(
    conn: Connection, recipient_id: str, config: OutboxConfig, now: datetime
) -> Planned | None:
    """Apply the policy to one due recipient, in one transaction: queue its pushes, mark its
    ledger, set its next look. None when another worker (or replica) already did."""
    schedule = await notices_db.lock_schedule(conn, recipient_id)
    now_text = rfc3339(now)
    if schedule is None or schedule.due_at is None or schedule.due_at > now_text:
        return None
    is_channel = not recipient_id.startswith("rvw_")
    if is_channel:
        raw = await notices_db.channel_policy(conn, recipient_id)
        exists = raw is not None
    else:
        row = await db_reviewers.get(conn, recipient_id)
        exists, raw = row is not None, row.notifications if row is not None else None
    if not exists:
        await notices_db.forget_recipient(conn, recipient_id)
        return None
    await notices_db.drop_settled(conn, recipient_id)
    rows = {row.belief_id: row for row in await notices_db.items(conn, recipient_id)}
    chosen = _recipient_policy(raw)
    plan = policy.plan(
        chosen,
        [_item(row) for row in rows.values()],
        now,
        last_reminder_at=_time(schedule.last_reminder_at),
        last_push_at=_time(schedule.last_push_at),
    )
    for send in plan.sends:
        beliefs = [rows[belief_id] for belief_id in send.belief_ids]
        waiting = [rows[belief_id] for belief_id in send.reminded_ids]
        if is_channel:
            await _queue_channel(conn, recipient_id, send, beliefs, waiting, config, now)
        else:
            await _queue_push(conn, recipient_id, send, beliefs, waiting, config, now)
        column = "reminded_at" if send.kind == "reminder" else "told_at"
        await notices_db.mark(conn, recipient_id, send.belief_ids, column, now_text)
        await notices_db.mark(conn, recipient_id, send.reminded_ids, "reminded_at", now_text)
    await notices_db.set_schedule(
        conn,
        recipient_id,
        due_at=rfc3339(plan.next_check) if plan.next_check else None,
        last_push_at=now_text if plan.sends else schedule.last_push_at,
        last_reminder_at=now_text if plan.reminded else schedule.last_reminder_at,
    )
    return Planned(recipient_id, tuple((s.kind, s.belief_ids + s.reminded_ids) for s in plan.sends))


def _time(value: str | None) -> datetime | None:
    return parse_rfc3339(value) if value else None


def _item(row: NoticeItem) -> policy.Item:
    return policy.Item(
        belief_id=row.belief_id,
        agent_id=row.agent_id,
        urgency=row.urgency,
        created_at=parse_rfc3339(row.created_at),
        told_at=_time(row.told_at),
        reminded_at=_time(row.reminded_at),
        escalation=bool(row.escalation),
        escalate_at=_time(row.escalate_at),
    )


def digest_text(
    kind: str, beliefs: Sequence[NoticeItem], now: datetime, waiting: Sequence[NoticeItem] = ()
) -> str:
    """The words of a digest or reminder: how many, from which agents, what they change, and
    (a reminder folded in) how many still wait."""
    count = len(beliefs)
    noun = "belief" if count == 1 else "beliefs"
    names = sorted({" ".join(strip_control(b.agent_name).split())[:60] for b in beliefs})
    source = names[0] if len(names) == 1 else f"{len(names)} agents"
    if kind == "reminder":
        oldest = min(parse_rfc3339(b.created_at) for b in beliefs)
        since = "yesterday" if now - oldest < timedelta(hours=48) else oldest.strftime("%d %b")
        return f"{count} {noun} from {source} waiting since {since}"
    high = sum(1 for b in beliefs if b.urgency == "high")
    text = f"{count} new {noun} from {source}"
    if high:
        text += f" — {high} {'changes' if high == 1 else 'change'} a kept one"
    if waiting:
        text += f"; {len(waiting)} more still {'waits' if len(waiting) == 1 else 'wait'}"
    return text


async def _queue_push(
    conn: Connection,
    reviewer_id: str,
    send: policy.Send,
    beliefs: Sequence[NoticeItem],
    waiting: Sequence[NoticeItem],
    config: OutboxConfig,
    now: datetime,
) -> None:
    subscriptions = await notices_db.reviewer_subscriptions(conn, reviewer_id)
    if not subscriptions:
        return
    expires = now + timedelta(seconds=config.ttl_seconds)
    now_text, expires_text = rfc3339(now), rfc3339(expires)
    single = beliefs[0] if len(beliefs) == 1 and send.kind != "reminder" and not waiting else None
    push_rows = []
    for sub in subscriptions:
        covered = sub.agents
        count = await pending_count(
            conn, None if sub.scope == "admin" or covered is None else frozenset(covered)
        )
        if single is not None:
            if not access_reviewers.covers(sub.scope, covered, single.agent_id):
                continue
            payload = await _belief_payload(conn, single, sub.key_id, count, config, expires)
            belief_id, version, kind = single.belief_id, single.version, KIND_BELIEF
            topic = topic_for(single.belief_id)
        else:
            payload = _digest_payload(send.kind, beliefs, waiting, count, config, now)
            belief_id, version, kind = None, None, KIND_BELIEF
            topic = topic_for(f"digest:{reviewer_id}")
        push_rows.append(
            (
                new_id("msg"),
                sub.subscription_id,
                belief_id,
                version,
                kind,
                payload,
                topic,
                send.urgency,
                config.ttl_seconds,
                now_text,
                expires_text,
                now_text,
            )
        )
    await outbox_db.insert_push_rows(conn, push_rows)


async def _changes(conn: Connection, row: NoticeItem) -> str | None:
    return await changes_of(
        conn,
        agent_id=row.agent_id,
        op=row.op,
        target_belief_id=row.target_belief_id,
        review_reasons=row.review_reasons,
    )


async def _belief_payload(
    conn: Connection,
    row: NoticeItem,
    key_id: str,
    count: int,
    config: OutboxConfig,
    expires: datetime,
) -> bytes:
    token = tokens.issue(
        config.secret,
        belief_id=row.belief_id,
        version=row.version,
        key_id=key_id,
        expires_at=expires,
    )
    return build_payload(
        belief_id=row.belief_id,
        agent_id=row.agent_id,
        agent_name=row.agent_name,
        content=row.content,
        provenance=row.provenance,
        pending_count=count,
        token=token,
        ttl_seconds=config.ttl_seconds,
        op=row.op,
        changes=await _changes(conn, row),
    )


def _digest_payload(
    kind: str,
    beliefs: Sequence[NoticeItem],
    waiting: Sequence[NoticeItem],
    count: int,
    config: OutboxConfig,
    now: datetime,
) -> bytes:
    message = {
        "type": "digest",
        "title": DIGEST_TITLE,
        "body": truncate_to_bytes(digest_text(kind, beliefs, now, waiting), 600),
        "url": "/",
        "pending_count": int(count),
        "belief_ids": [b.belief_id for b in beliefs][:20],
        "actions": [],
        "ttl_seconds": int(config.ttl_seconds),
    }
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


async def _queue_channel(
    conn: Connection,
    channel_id: str,
    send: policy.Send,
    beliefs: Sequence[NoticeItem],
    waiting: Sequence[NoticeItem],
    config: OutboxConfig,
    now: datetime,
) -> None:
    expires = now + timedelta(seconds=config.ttl_seconds)
    expires_text, now_text = rfc3339(expires), rfc3339(now)
    kind, key_id = await channel_kind(conn, channel_id) or ("apprise", None)
    if kind == ntfy.KIND:
        title, body, belief_id, version = await _ntfy_message(
            conn, send, beliefs, waiting, key_id, config, now, expires
        )
    elif len(beliefs) == 1 and send.kind != "reminder" and not waiting:
        row = beliefs[0]
        title, body = channel_message(
            belief_id=row.belief_id,
            agent_name=row.agent_name,
            content=row.content,
            provenance=row.provenance,
            base_url=config.base_url,
            changes=await _changes(conn, row),
        )
        belief_id, version = row.belief_id, row.version
    else:
        title = DIGEST_TITLE
        body = f"{digest_text(send.kind, beliefs, now, waiting)}\n\nReview them in Credence: "
        body += config.base_url.rstrip("/") + "/"
        belief_id, version = None, None
    await outbox_db.insert_channel_rows(
        conn,
        [
            (
                new_id("cmsg"),
                channel_id,
                belief_id,
                version,
                KIND_BELIEF,
                title,
                body,
                now_text,
                expires_text,
                now_text,
            )
        ],
    )


async def _ntfy_message(
    conn: Connection,
    send: policy.Send,
    beliefs: Sequence[NoticeItem],
    waiting: Sequence[NoticeItem],
    key_id: str | None,
    config: OutboxConfig,
    now: datetime,
    expires: datetime,
) -> tuple[str, str, str | None, int | None]:
    """(title, stored message, belief id, version) of an ntfy send: one belief with its one-tap
    actions (a token bound to the belief's version, decided as ``key_id``), else a digest."""
    if len(beliefs) == 1 and send.kind != "reminder" and not waiting and key_id is not None:
        row = beliefs[0]
        token = tokens.issue(
            config.secret,
            belief_id=row.belief_id,
            version=row.version,
            key_id=key_id,
            expires_at=expires,
        )
        changes = await _changes(conn, row)
        message = ntfy.belief_message(
            row=row, urgency=send.urgency, base_url=config.base_url, token=token, changes=changes
        )
        return message["title"], ntfy.encode(message), row.belief_id, row.version
    text = digest_text(send.kind, beliefs, now, waiting)
    message = ntfy.digest_message(text=text, urgency=send.urgency, base_url=config.base_url)
    return DIGEST_TITLE, ntfy.encode(message), None, None


async def run_due(store: Database, config: OutboxConfig, limit: int = BATCH) -> list[Planned]:
    """Look at every recipient due now, each in its own transaction; what was queued."""
    now = config.clock()
    due = await store.read(lambda conn: notices_db.due(conn, rfc3339(now), limit))
    planned = []
    for recipient_id in due:

        async def work(conn: Connection, recipient_id: str = recipient_id) -> Planned | None:
            return await plan_recipient(conn, recipient_id, config, now)

        result = await store.write(work)
        if result is not None and result.sends:
            planned.append(result)
    return planned


class ReviewPlanner(PollingLoop):
    """Runs the policy whenever a recipient is due; wakes the push worker after queueing."""

    name = "review-planner"

    def __init__(
        self,
        store: Database,
        config: OutboxConfig,
        on_queued: Callable[[], None],
        *,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        super().__init__(poll_seconds)
        self.store = store
        self.config = config
        self.on_queued = on_queued

    async def run_pass(self) -> float | None:
        """Plan for every recipient that is due; sleep until the next one is."""
        if await run_due(self.store, self.config):
            self.on_queued()
        due = await self.store.read(notices_db.next_due)
        if due is None:
            return None
        return (parse_rfc3339(due) - self.config.clock()).total_seconds()
