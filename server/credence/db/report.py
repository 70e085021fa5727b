"""The memory-quality report's reads: aggregates over one agent's beliefs since a moment."""

from __future__ import annotations

import math
from typing import Any

from credence.db.engine import Connection, Row, one_row
from credence.db.records import Record

LISTED = 50  # beliefs listed by name in each of the report's lists


async def outcomes_by_day(conn: Connection, agent_id: str, since: str) -> list[Row]:
    """(day, status, edited, gate_flags, n) for the beliefs proposed since ``since``: one
    pass along an index (day, status, edited and the gate's flags are stored columns, migration
    0050), counting only; the caller sums the flags."""
    return await conn.rows(
        "SELECT created_day AS day, status, edited, gate_flags, COUNT(*) AS n FROM beliefs"
        " WHERE agent_id = ? AND created_day >= ? AND created_at >= ?"
        " GROUP BY created_day, status, edited, gate_flags",
        (agent_id, since[:10], since),
    )


_DECIDED = (
    " FROM beliefs WHERE agent_id = ? AND decision_s IS NOT NULL AND decided_at >= ?"
    " AND status <> 'pending'"
)


async def decision_percentiles(
    conn: Connection, agent_id: str, since: str, shares: tuple[float, ...], count: int
) -> list[float | None]:
    """The nearest-rank percentile of the seconds from proposal to decision at each share
    (0..1) of the ``count`` beliefs decided since ``since``. The seconds are stored (migration
    0050) and indexed in order, so each rank is a walk along the index, not a sort."""
    found: list[float | None] = []
    for share in shares if count else ():
        rank = max(math.ceil(share * count), 1)
        # Walk from the nearer end: the p90 is the 10% slowest's last, not the 90% fastest's.
        ascending = rank <= count - rank + 1
        row = await conn.one(
            "SELECT decision_s"
            + _DECIDED
            + " ORDER BY decision_s"
            + ("" if ascending else " DESC")
            + " LIMIT 1 OFFSET ?",
            (agent_id, since, rank - 1 if ascending else count - rank),
        )
        found.append(max(float(row["decision_s"]), 0.0) if row is not None else None)
    return found or [None for _ in shares]


async def deciders(conn: Connection, agent_id: str, since: str) -> list[Row]:
    """(decided_by, n) for the decisions made since ``since``, most first; decided_by is None
    for decisions nobody signed. Their sum is how many were decided in the period."""
    # decided_at >= since implies a decision, hence its stored seconds: the same rows as
    # _DECIDED, read along the deciders' index.
    return await conn.rows(
        "SELECT decided_by, COUNT(*) AS n FROM beliefs WHERE agent_id = ? AND decided_at >= ?"
        " AND status <> 'pending' GROUP BY decided_by ORDER BY COUNT(*) DESC, decided_by",
        (agent_id, since),
    )


async def unused(conn: Connection, agent_id: str, since: str) -> tuple[int, list[Any]]:
    """Active beliefs not injected since ``since``: how many, and the oldest-kept few."""
    where = (
        " FROM beliefs WHERE agent_id = ? AND status = 'active'"
        " AND (last_injected_at IS NULL OR last_injected_at < ?)"
    )
    count = await one_row(conn, "SELECT COUNT(*) AS n" + where, (agent_id, since))
    rows = await conn.rows(
        "SELECT id, content, decided_at, last_injected_at" + where + " ORDER BY decided_at, id"
        f" LIMIT {LISTED}",
        (agent_id, since),
    )
    return int(count["n"]), rows


async def fading_candidates(
    conn: Connection, agent_id: str, threshold: float, bands: list[tuple[float, str]]
) -> list[Row]:
    """(id, confidence, created_at, updated_at) of the active beliefs that may have decayed
    below ``threshold``: those already below it, and, per band (least confidence, renewed
    before), the beliefs at least that confident not renewed since then. Each band is its own
    range of the confidence index, so a belief is checked against its band only."""
    renewed = "CASE WHEN updated_at > created_at THEN updated_at ELSE created_at END"
    select = (
        "SELECT id, confidence, created_at, updated_at FROM beliefs"
        " WHERE agent_id = ? AND status = 'active'"
    )
    parts = [select + " AND confidence < ?"]
    params: list[Any] = [agent_id, threshold]
    edges: list[float | None] = [least for least, _ in bands[1:]]
    edges += [None] if bands else []
    for (least, before), upper in zip(bands, edges, strict=True):
        below = " AND confidence < ?" if upper is not None else ""
        parts.append(f"{select} AND confidence >= ?{below} AND {renewed} < ?")
        params += [agent_id, least, *([upper] if upper is not None else []), before]
    return await conn.rows(" UNION ALL ".join(parts), params)


async def contents(conn: Connection, belief_ids: list[str]) -> dict[str, str]:
    """Each belief's content by id."""
    if not belief_ids:
        return {}
    marks = ", ".join("?" * len(belief_ids))
    rows = await conn.rows(f"SELECT id, content FROM beliefs WHERE id IN ({marks})", belief_ids)
    return {row["id"]: row["content"] for row in rows}


class ReportAgent(Record, frozen=True, kw_only=True):
    """The agent a report is of, with its reflection settings (``lambda_per_day``)."""

    JSON_FIELDS = frozenset({"settings"})

    id: str
    settings: dict[str, Any] | None


async def agent_lambda(conn: Connection, agent_id: str) -> ReportAgent | None:
    """The agent with its settings, or None."""
    row = await conn.one(f"SELECT {ReportAgent.columns()} FROM agents WHERE id = ?", (agent_id,))
    return None if row is None else ReportAgent.from_row(row)
