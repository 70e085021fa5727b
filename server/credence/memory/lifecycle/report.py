"""The memory-quality report: one agent's proposals over a period and the memory left idle."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from credence.clock import parse_rfc3339, rfc3339
from credence.db import report as rows_of
from credence.memory.ingest.episodes import AgentMissing
from credence.memory.semantics.decay import decayed_confidence
from credence.models.report import (
    DecisionTimes,
    FadingBelief,
    GateFlags,
    MemoryReport,
    OutcomeCounts,
    ReportDay,
    ReviewerCount,
    UnusedBelief,
)

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database

DEFAULT_DAYS = 30
DEFAULT_THRESHOLD = 0.3
DEFAULT_LAMBDA = 0.02


def outcome_of(status: str, edited: bool) -> str:
    """What became of a proposal: kept, edited, forgotten, superseded or pending."""
    if status == "active":
        return "edited" if edited else "kept"
    return status


def days_between(since: datetime, now: datetime) -> list[str]:
    """Every UTC date from ``since`` to ``now``, both included, as YYYY-MM-DD."""
    first, last = since.date(), now.date()
    return [str(first + timedelta(days=n)) for n in range((last - first).days + 1)]


def per_day(rows: Sequence[Any], dates: Sequence[str]) -> tuple[list[ReportDay], OutcomeCounts]:
    """Proposals per day by outcome (every day of the period, empty ones included), and totals."""
    counts: dict[str, dict[str, int]] = {date: defaultdict(int) for date in dates}
    for row in rows:
        day = counts.setdefault(row["day"], defaultdict(int))
        day[outcome_of(row["status"], bool(row["edited"]))] += int(row["n"])
    days = [ReportDay(date=date, **counts[date]) for date in sorted(counts)]
    totals: dict[str, int] = defaultdict(int)
    for day in counts.values():
        for outcome, n in day.items():
            totals[outcome] += n
    return days, OutcomeCounts(**totals)


def fading(
    rows: Sequence[Any], now: datetime, lambda_per_day: float, threshold: float
) -> list[tuple[str, float, float]]:
    """(id, confidence, decayed) of active beliefs decayed below ``threshold``, lowest first."""
    found = []
    for row in rows:
        anchor = max(parse_rfc3339(row["created_at"]), parse_rfc3339(row["updated_at"]))
        decayed = decayed_confidence(row["confidence"], anchor, now, lambda_per_day)
        if decayed < threshold:
            found.append((row["id"], float(row["confidence"]), decayed))
    return sorted(found, key=lambda item: (item[2], item[0]))


async def memory_report(
    store: Database,
    agent_id: str,
    now: datetime,
    *,
    days: int = DEFAULT_DAYS,
    threshold: float = DEFAULT_THRESHOLD,
) -> MemoryReport:
    """The report of the ``days`` before ``now``; AgentMissing when there is no such agent."""
    since_at = now - timedelta(days=days)
    since = rfc3339(since_at)

    async def work(conn: Connection) -> dict[str, Any]:
        agent = await rows_of.agent_lambda(conn, agent_id)
        if agent is None:
            return {}
        lambda_per_day = float((agent.settings or {}).get("lambda_per_day", DEFAULT_LAMBDA))
        unused_count, unused_rows = await rows_of.unused(conn, agent_id, since)
        deciders = await rows_of.deciders(conn, agent_id, since)
        decisions = sum(int(row["n"]) for row in deciders)
        return {
            "agent": agent,
            "days": await rows_of.outcomes_by_day(conn, agent_id, since),
            "times": (
                decisions,
                await rows_of.decision_percentiles(conn, agent_id, since, (0.5, 0.9), decisions),
            ),
            "reviewers": [row for row in deciders if row["decided_by"] is not None],
            "unused": (unused_count, unused_rows),
            "lambda": lambda_per_day,
            "active": await rows_of.fading_candidates(
                conn, agent_id, threshold, _bands(now, lambda_per_day, threshold)
            ),
        }

    found = await store.read(work)
    if not found:
        raise AgentMissing(agent_id)
    faded = fading(found["active"], now, found["lambda"], threshold)
    listed = faded[: rows_of.LISTED]
    names = await store.read(lambda conn: rows_of.contents(conn, [i for i, _, _ in listed]))
    daily, totals = per_day(found["days"], days_between(since_at, now))
    proposals = sum(int(row["n"]) for row in found["days"])
    duplicate = sum(int(row["n"]) for row in found["days"] if int(row["gate_flags"]) & 1)
    contradiction = sum(int(row["n"]) for row in found["days"] if int(row["gate_flags"]) & 2)
    decisions, (median, p90) = found["times"]
    unused_count, unused_rows = found["unused"]
    return MemoryReport(
        agent_id=agent_id,
        days=days,
        since=since,
        generated_at=rfc3339(now),
        threshold=threshold,
        totals=totals,
        per_day=daily,
        flagged=GateFlags(
            proposals=proposals,
            duplicate=duplicate,
            contradiction=contradiction,
            duplicate_share=round(duplicate / proposals, 4) if proposals else 0.0,
            contradiction_share=round(contradiction / proposals, 4) if proposals else 0.0,
        ),
        time_to_decision=DecisionTimes(
            decisions=decisions,
            median_s=_rounded(median),
            p90_s=_rounded(p90),
        ),
        reviewers=[
            ReviewerCount(reviewer=row["decided_by"], decisions=int(row["n"]))
            for row in found["reviewers"]
        ],
        unused_count=unused_count,
        unused=[
            UnusedBelief(
                belief_id=row["id"],
                content=row["content"],
                decided_at=row["decided_at"],
                last_served_at=row["last_injected_at"],
            )
            for row in unused_rows
        ],
        fading_count=len(faded),
        fading=[
            FadingBelief(
                belief_id=belief_id,
                content=names.get(belief_id, ""),
                confidence=confidence,
                decayed_confidence=round(decayed, 4),
            )
            for belief_id, confidence, decayed in listed
        ],
    )


async def week_report(store: Database, agent_id: str, now: datetime) -> MemoryReport | None:
    """The report of the week before ``now`` (the weekly digest's figures); None when the agent
    is gone."""
    try:
        return await memory_report(store, agent_id, now, days=7)
    except AgentMissing:
        return None


FADING_BANDS = 8


def _bands(now: datetime, lambda_per_day: float, threshold: float) -> list[tuple[float, str]]:
    """(least confidence, renewed before) per confidence band from ``threshold`` up: a belief
    at least that confident can have decayed below ``threshold`` only if renewed before then.
    The database reads just these candidates; ``fading`` checks each one exactly."""
    if lambda_per_day <= 0 or threshold <= 0:
        return []
    if threshold >= 1:
        return [(1.0, rfc3339(now))]
    step = (1 - threshold) / FADING_BANDS
    edges = [threshold + step * n for n in range(FADING_BANDS)]
    return [
        (least, _days_before(now, math.log(least / threshold) / lambda_per_day)) for least in edges
    ]


# The earliest instant a renewal could have (a date holds no earlier day, with room for zones).
_EARLIEST = datetime(1, 1, 2, tzinfo=UTC)


def _days_before(now: datetime, days: float) -> str:
    """``days`` before ``now``, or the earliest instant when that lies before it: a decay so
    slow (an agent's tiny λ) that no belief could have faded in the time dates can hold."""
    if days >= (now - _EARLIEST).days:
        return rfc3339(_EARLIEST)
    return rfc3339(now - timedelta(days=days))


def _rounded(value: float | None) -> float | None:
    return round(value, 3) if value is not None else None
