"""The weekly report digest: each reviewer's agents' week in one push, once a week per reviewer."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

from credence.access import reviewers as access_reviewers
from credence.clock import parse_rfc3339, rfc3339
from credence.db import notices as notices_db
from credence.db import outbox as outbox_db
from credence.db import reviewers as db_reviewers
from credence.db import weekly as weekly_db
from credence.ids import new_id
from credence.models.report import MemoryReport
from credence.notify import policy
from credence.notify.outbox import OutboxConfig, pending_count
from credence.notify.payload import strip_control, topic_for, truncate_to_bytes
from credence.tasks import PollingLoop

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database


WEEK_DAYS = 7
POLL_SECONDS = 60.0
MESSAGE_TYPE = "report.weekly"
TITLE = "Credence: the week in memory"
BODY_BYTES = 600
LISTED_AGENTS = 10  # agents carried with their figures in one push (a push is ~4 KB at most)

# The report of one agent over the ``WEEK_DAYS`` before a moment (None: no such agent now).
Figures = Callable[["Database", str, datetime], Awaitable[MemoryReport | None]]


@dataclass(frozen=True)
class AgentWeek:
    """One agent's week as the digest tells it."""

    agent_id: str
    name: str
    kept: int
    edited: int
    forgotten: int
    pending: int
    median_s: float | None
    never_served: int

    @property
    def quiet(self) -> bool:
        """True when there is nothing to tell: no proposal and no idle kept belief."""
        return not (self.kept or self.edited or self.forgotten or self.pending or self.never_served)


def week_of(report: MemoryReport, name: str) -> AgentWeek:
    """The digest's figures from the agent's memory-quality report of the week."""
    totals = report.totals
    return AgentWeek(
        agent_id=report.agent_id,
        name=" ".join(strip_control(name or report.agent_id).split())[:60],
        kept=totals.kept,
        edited=totals.edited,
        forgotten=totals.forgotten,
        pending=totals.pending,
        median_s=report.time_to_decision.median_s,
        never_served=report.unused_count,
    )


# --- when: pure, on the recipient's clock --------------------------------------------------


def _zone(chosen: policy.Policy) -> ZoneInfo:
    return policy.zone(chosen.quiet.zone) if chosen.quiet else ZoneInfo("UTC")


def last_slot(chosen: policy.Policy, now: datetime) -> datetime:
    """The latest weekly moment (weekday and hour, local time) at or before ``now``."""
    tz = _zone(chosen)
    local = now.astimezone(tz)
    back = (local.weekday() - chosen.weekly.weekday) % 7
    slot = datetime.combine(local.date() - timedelta(days=back), time(chosen.weekly.hour), tz)
    if slot > now:
        slot = datetime.combine(slot.date() - timedelta(days=7), time(chosen.weekly.hour), tz)
    return slot


def next_slot(chosen: policy.Policy, now: datetime) -> datetime:
    """The first weekly moment after ``now`` (the same local hour across a clock change)."""
    day = last_slot(chosen, now).date() + timedelta(days=7)
    return datetime.combine(day, time(chosen.weekly.hour), _zone(chosen))


def week_key(chosen: policy.Policy, slot: datetime) -> str:
    """The ISO week a slot falls in, in the recipient's zone (``2026-W49``): the marker."""
    year, week, _ = slot.astimezone(_zone(chosen)).isocalendar()
    return f"{year:04d}-W{week:02d}"


@dataclass(frozen=True)
class Due:
    """The week to send now (None: nothing now), and when to look again (None: never)."""

    week: str | None
    next_check: datetime | None


def due(chosen: policy.Policy, now: datetime, last_week: str | None, since: datetime) -> Due:
    """Whether the weekly digest goes now.

    Not when turned off; not for a week already sent (``last_week``, or a later one) nor one
    whose moment came before the recipient existed (``since``); while snoozed or in quiet hours
    it waits for their end, unless the next week's moment comes first (that week's digest
    replaces it).
    """
    if not chosen.weekly.enabled:
        return Due(None, None)
    slot = last_slot(chosen, now)
    upcoming = next_slot(chosen, now)
    week = week_key(chosen, slot)
    if slot < since or (last_week is not None and last_week >= week):
        return Due(None, upcoming)
    hold = policy.held_until(chosen, now, "normal")
    if hold is not None:
        return Due(None, min(hold, upcoming))
    return Due(week, upcoming)


# --- what: pure ---------------------------------------------------------------------------


def duration_text(seconds: float) -> str:
    """A wait in the unit a person reads: 40 s, 12 min, 3.5 h, 2.1 days."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def agent_line(week: AgentWeek) -> str:
    """One agent's week in a line."""
    line = (
        f"{week.name}: {week.kept} kept, {week.edited} edited, {week.forgotten} forgotten,"
        f" {week.pending} pending"
    )
    if week.median_s is not None:
        line += f"; median decision {duration_text(week.median_s)}"
    if week.never_served:
        line += f"; {week.never_served} kept never served"
    return line


def report_url(weeks: Sequence[AgentWeek]) -> str:
    """The Report view of the week: of the one agent, or the view itself for several."""
    if len(weeks) == 1:
        return f"/?view=report&agent={quote(weeks[0].agent_id, safe='')}&days={WEEK_DAYS}"
    return f"/?view=report&days={WEEK_DAYS}"


def compose(weeks: Sequence[AgentWeek], pending: int, ttl_seconds: int) -> dict[str, Any]:
    """The push message of a weekly digest (the agents with something to tell)."""
    told = [week for week in weeks if not week.quiet]
    body = "\n".join(agent_line(week) for week in told) or "A quiet week: nothing was proposed."
    return {
        "type": MESSAGE_TYPE,
        "title": TITLE,
        "body": truncate_to_bytes(body, BODY_BYTES),
        "url": report_url(told),
        "pending_count": int(pending),
        "belief_ids": [],
        "actions": [],
        "ttl_seconds": int(ttl_seconds),
        "agents": [
            {
                "agent_id": week.agent_id,
                "kept": week.kept,
                "edited": week.edited,
                "forgotten": week.forgotten,
                "pending": week.pending,
                "median_decision_s": week.median_s,
                "kept_never_served": week.never_served,
            }
            for week in told[:LISTED_AGENTS]
        ],
    }


# --- applied to the store -------------------------------------------------------------------


def _recipient_policy(raw: dict[str, Any]) -> policy.Policy:
    try:
        return policy.parse(raw)
    except Exception:  # a policy saved by an older version: the defaults, never a lost digest
        return policy.Policy()


async def _owned_agents(conn: Connection) -> dict[str, list[tuple[str, str]]]:
    """Each reviewer's agents, (id, name), as the review policy routes them."""
    devices = await access_reviewers.devices_by_reviewer(conn)
    assignments = await db_reviewers.assignments(conn)
    owned: dict[str, list[tuple[str, str]]] = {}
    for agent in await weekly_db.agents(conn):
        for reviewer_id in access_reviewers.effective_owners(devices, assignments, agent["id"]):
            owned.setdefault(reviewer_id, []).append((agent["id"], agent["name"]))
    return owned


async def run_weekly(store: Database, config: OutboxConfig, figures: Figures) -> list[str]:
    """Queue the weekly digest of every reviewer it is due for; the reviewers queued for.

    Each reviewer's week is claimed in the transaction that queues its pushes, so another
    replica (or this one after a restart) finds it taken and sends nothing.
    """
    now = config.clock()

    async def look(
        conn: Connection,
    ) -> tuple[list[weekly_db.Recipient], dict[str, list[tuple[str, str]]]]:
        return await weekly_db.recipients(conn), await _owned_agents(conn)

    recipients, owned = await store.read(look)
    reports: dict[str, MemoryReport | None] = {}  # an agent's week, once per pass
    queued = []
    for row in recipients:
        chosen = _recipient_policy(row.notifications)
        found = due(chosen, now, row.week, parse_rfc3339(row.created_at))
        if found.week is None:
            continue
        weeks = []
        for agent_id, name in owned.get(row.id, []):
            if agent_id not in reports:
                reports[agent_id] = await figures(store, agent_id, now)
            report = reports[agent_id]
            if report is not None:
                weeks.append(week_of(report, name))

        async def work(
            conn: Connection,
            reviewer_id: str = row.id,
            week: str = found.week,
            weeks: list[AgentWeek] = weeks,
        ) -> bool:
            if not await weekly_db.claim(conn, reviewer_id, week, rfc3339(now)):
                return False
            await _queue(conn, reviewer_id, weeks, config, now)
            return True

        if await store.write(work):
            queued.append(row.id)
    return queued


async def _queue(
    conn: Connection,
    reviewer_id: str,
    weeks: Sequence[AgentWeek],
    config: OutboxConfig,
    now: datetime,
) -> None:
    """One push per device of the reviewer, about the agents that device may see."""
    expires = now + timedelta(seconds=config.ttl_seconds)
    now_text, expires_text = rfc3339(now), rfc3339(expires)
    rows = []
    for sub in await notices_db.reviewer_subscriptions(conn, reviewer_id):
        covered = sub.agents
        seen = [w for w in weeks if access_reviewers.covers(sub.scope, covered, w.agent_id)]
        if all(week.quiet for week in seen):
            continue
        visible = None if sub.scope == "admin" or covered is None else frozenset(covered)
        message = compose(seen, await pending_count(conn, visible), config.ttl_seconds)
        rows.append(
            (
                new_id("msg"),
                sub.subscription_id,
                None,
                None,
                outbox_db.KIND_BELIEF,
                json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8"),
                topic_for(f"weekly:{reviewer_id}"),
                "normal",
                config.ttl_seconds,
                now_text,
                expires_text,
                now_text,
            )
        )
    await outbox_db.insert_push_rows(conn, rows)


class WeeklyDigests(PollingLoop):
    """Looks every ``poll_seconds`` for weekly digests due; wakes the push worker after queueing."""

    name = "weekly-digests"

    def __init__(
        self,
        store: Database,
        config: OutboxConfig,
        figures: Figures,
        on_queued: Callable[[], None],
        *,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        super().__init__(poll_seconds)
        self.store = store
        self.config = config
        self.figures = figures
        self.on_queued = on_queued

    async def run_pass(self) -> float | None:
        """Queue the digests that are due."""
        if await run_weekly(self.store, self.config, self.figures):
            self.on_queued()
        return None
