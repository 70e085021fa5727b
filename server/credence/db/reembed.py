"""Store functions of the embedding backfill: its lease, the rows left, and the rewrites."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from credence.db import lease
from credence.db.changes import bump_belief_changes
from credence.db.engine import Connection, Row, one_row
from credence.db.records import Record

LEASE = "embeddings"
# A row is stale when no model or another model made its embedding.
_STALE = "(embedding_model IS NULL OR embedding_model <> ?)"


async def claim_lease(conn: Connection, owner: str, now: str, until: str) -> bool:
    """Take (or renew) the backfill lease unless another owner holds it unlapsed."""
    return await lease.acquire(conn, "backfill_leases", LEASE, owner=owner, now=now, until=until)


async def release_lease(conn: Connection, owner: str, now: str) -> None:
    """Give the lease up (only if ``owner`` still holds it)."""
    await lease.release(conn, "backfill_leases", LEASE, owner=owner, now=now)


async def _holds(conn: Connection, owner: str, now: str) -> bool:
    return await lease.holds(conn, "backfill_leases", LEASE, owner, now=now)


async def stale_beliefs(conn: Connection, model: str, limit: int) -> list[Row]:
    """(id, content) of beliefs of any status whose embedding ``model`` did not make."""
    return await conn.rows(
        f"SELECT id, content FROM beliefs WHERE {_STALE} ORDER BY id LIMIT ?", (model, limit)
    )


class StaleEpisode(Record, frozen=True, kw_only=True):
    """An episode to re-embed: what its embedding text is made of."""

    JSON_FIELDS = frozenset({"interventions"})

    id: str
    summary: str
    interventions: list[dict[str, Any]]


async def stale_episodes(conn: Connection, model: str, limit: int) -> list[StaleEpisode]:
    """Episodes whose embedding ``model`` did not make, by seq."""
    rows = await conn.rows(
        f"SELECT {StaleEpisode.columns()} FROM episodes WHERE {_STALE} ORDER BY seq LIMIT ?",
        (model, limit),
    )
    return StaleEpisode.from_rows(rows)


async def rewrite_beliefs(
    conn: Connection,
    owner: str,
    now: str,
    model: str,
    rows: Sequence[tuple[str, str, bytes]],
) -> int | None:
    """Store new (id, content, embedding) rows under the lease; None when it was lost.

    A belief whose text changed since it was read keeps the embedding its edit wrote.
    """
    if not await _holds(conn, owner, now):
        return None
    written = 0
    for belief_id, content, blob in rows:
        written += await conn.run(
            "UPDATE beliefs SET embedding = ?, embedding_model = ?"
            f" WHERE id = ? AND content = ? AND {_STALE}",
            (blob, model, belief_id, content, model),
        )
    if written:
        await bump_belief_changes(conn)  # the context caches of every replica drop the agent
    return written


async def rewrite_episodes(
    conn: Connection,
    owner: str,
    now: str,
    model: str,
    rows: Sequence[tuple[str, bytes]],
) -> int | None:
    """Store new (id, embedding) rows under the lease; None when it was lost."""
    if not await _holds(conn, owner, now):
        return None
    written = 0
    for episode_id, blob in rows:
        written += await conn.run(
            f"UPDATE episodes SET embedding = ?, embedding_model = ? WHERE id = ? AND {_STALE}",
            (blob, model, episode_id, model),
        )
    if written:
        # Recall's per-agent matrices reload when this counter moves.
        await conn.run("UPDATE store_state SET value = value + 1 WHERE name = 'episode_reembeds'")
    return written


async def counts(conn: Connection, model: str) -> tuple[int, int, int, int]:
    """(beliefs, beliefs embedded by ``model``, episodes, episodes embedded by ``model``)."""
    row = await one_row(
        conn,
        "SELECT (SELECT COUNT(*) FROM beliefs),"
        " (SELECT COUNT(*) FROM beliefs WHERE embedding_model = ?),"
        " (SELECT COUNT(*) FROM episodes),"
        " (SELECT COUNT(*) FROM episodes WHERE embedding_model = ?)",
        (model, model),
    )
    return int(row[0]), int(row[1]), int(row[2]), int(row[3])
