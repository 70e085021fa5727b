"""Database-wide figures for the metrics endpoint: a few aggregate reads, one snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from credence.clock import parse_rfc3339, rfc3339
from credence.db.engine import Connection, one_row

# Upper bounds (seconds) of the pending-age histogram: a minute to a month.
PENDING_AGE_BUCKETS: Sequence[float] = (
    60,
    600,
    3600,
    6 * 3600,
    86400,
    3 * 86400,
    7 * 86400,
    30 * 86400,
)
OUTBOXES = (("push", "push_outbox"), ("channel", "channel_outbox"))


@dataclass
class Snapshot:
    """What the database holds right now, across every replica."""

    beliefs: dict[tuple[str, str], int] = field(default_factory=dict)
    oldest_pending_s: dict[str, float] = field(default_factory=dict)
    pending_le: list[int] = field(default_factory=list)  # cumulative, per PENDING_AGE_BUCKETS
    pending_total: int = 0
    pending_age_sum: float = 0.0
    outbox: dict[str, tuple[int, float]] = field(default_factory=dict)  # queue: (depth, lag s)


def _age(now: datetime, stamp: str | None) -> float:
    return max((now - parse_rfc3339(stamp)).total_seconds(), 0.0) if stamp else 0.0


async def snapshot(conn: Connection, now: datetime) -> Snapshot:
    """Belief counts, pending ages and outbox depth and lag, in four aggregate statements."""
    found = Snapshot()
    for row in await conn.rows(
        "SELECT agent_id, status, COUNT(*) AS n FROM beliefs GROUP BY agent_id, status"
    ):
        found.beliefs[(row["agent_id"], row["status"])] = int(row["n"])
    # Every pending figure from one grouped pass over the pending beliefs' index (migration
    # 0050): per agent the count, the oldest wait, the summed wait and, per bucket, how many
    # have waited at most its bound (updated at or after now - bound; RFC 3339 stamps in one
    # format compare as text).
    bounds = [rfc3339(now - timedelta(seconds=b)) for b in PENDING_AGE_BUCKETS]
    columns = ", ".join(
        f"SUM(CASE WHEN updated_at >= ? THEN 1 ELSE 0 END) AS le{i}" for i in range(len(bounds))
    )
    found.pending_le = [0 for _ in bounds]
    for row in await conn.rows(
        f"SELECT agent_id, COUNT(*) AS n, MIN(updated_at) AS oldest, {_waited(conn)} AS waited,"
        f" {columns} FROM beliefs WHERE status = 'pending' GROUP BY agent_id",
        [_now_param(conn, now), *bounds],
    ):
        found.oldest_pending_s[row["agent_id"]] = _age(now, row["oldest"])
        found.pending_total += int(row["n"])
        found.pending_age_sum += float(row["waited"] or 0.0)
        for i in range(len(bounds)):
            found.pending_le[i] += int(row[f"le{i}"] or 0)
    found.pending_age_sum = max(found.pending_age_sum, 0.0)
    stamp = rfc3339(now)
    for queue, table in OUTBOXES:
        row = await one_row(
            conn,
            "SELECT COUNT(*) AS n, MIN(CASE WHEN next_attempt_at <= ? THEN next_attempt_at END)"
            f" AS due FROM {table} WHERE state = 'queued'",
            (stamp,),
        )
        found.outbox[queue] = (int(row["n"]), _age(now, row["due"]))
    return found


def _waited(conn: Connection) -> str:
    """The summed seconds the group's pending beliefs have waited, for the first parameter."""
    if conn.dialect == "postgresql":
        return "SUM(EXTRACT(EPOCH FROM (?::timestamptz - updated_at::timestamptz)))"
    return "SUM(julianday(?) - julianday(updated_at)) * 86400.0"


def _now_param(conn: Connection, now: datetime) -> str:
    return rfc3339(now) if conn.dialect == "postgresql" else rfc3339(now).replace("Z", "")
