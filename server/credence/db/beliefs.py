"""Belief rows: reads, the pending insert, decision updates, replayed decisions and injections."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from psycopg import errors as pg_errors

from credence.db.engine import Connection, for_update, placeholders
from credence.db.paging import newest_first
from credence.errors import Conflict

# Named, never *: PostgreSQL's beliefs row also carries the generated search_vector.
COLUMNS = (
    "id, agent_id, role, content, content_key, status, confidence, op, target_belief_id,"
    " rationale, source_episodes, provenance, review_reasons, proposed_by, version, created_at,"
    " updated_at, decided_by, decided_at, forgotten_reason, embedding, injection_count,"
    " last_injected_at, superseded_by, proposed_content"
)
_CHUNK = 500
UNTRUSTED_ACTIVE = "untrusted belief cannot be active"


async def get(conn: Connection, belief_id: str, *, lock: bool = False) -> Any:
    """The belief's row, or None; ``lock`` holds it (PostgreSQL) until the write commits, so
    a concurrent decision on another replica waits and then sees the new version."""
    return await conn.one(
        f"SELECT {COLUMNS} FROM beliefs WHERE id = ?{for_update(conn) if lock else ''}",
        (belief_id,),
    )


async def page(
    conn: Connection,
    *,
    agent_ids: Sequence[str] | None,
    status: str | None,
    limit: int,
    cursor: str | None,
) -> list[Any]:
    """Up to ``limit`` beliefs newest first after ``cursor``, optionally by agents and status."""
    where, params = newest_first(agent_ids=agent_ids, status=status, cursor=cursor)
    return await conn.rows(
        f"SELECT {COLUMNS} FROM beliefs {where} ORDER BY id DESC LIMIT ?", (*params, limit)
    )


async def by_ids(
    conn: Connection, agent_id: str, belief_ids: Sequence[str], *, lock: bool = False
) -> list[Any]:
    """The agent's beliefs among ``belief_ids`` (any order); ``lock`` as in ``get``."""
    found: list[Any] = []
    for start in range(0, len(belief_ids), _CHUNK):
        chunk = tuple(belief_ids[start : start + _CHUNK])
        found += await conn.rows(
            f"SELECT {COLUMNS} FROM beliefs WHERE agent_id = ?"
            f" AND id IN ({placeholders(len(chunk))}) ORDER BY id"
            f"{for_update(conn) if lock else ''}",
            (agent_id, *chunk),
        )
    return found


async def retired_by(conn: Connection, agent_id: str, belief_id: str) -> list[Any]:
    """The beliefs that ``belief_id``'s decision superseded or forgot, locked, oldest first."""
    return await conn.rows(
        f"SELECT {COLUMNS} FROM beliefs WHERE agent_id = ? AND (superseded_by = ? OR"
        " (status = 'forgotten' AND forgotten_reason IN (?, ?))) ORDER BY id"
        f"{for_update(conn)}",
        (agent_id, belief_id, f"superseded_by:{belief_id}", f"forgotten_by:{belief_id}"),
    )


async def target_status(conn: Connection, agent_id: str, belief_id: str) -> str | None:
    """The status of the agent's belief ``belief_id``, or None when it has none by that id."""
    row = await conn.one(
        "SELECT status FROM beliefs WHERE id = ? AND agent_id = ?", (belief_id, agent_id)
    )
    return row["status"] if row is not None else None


async def with_key(conn: Connection, agent_id: str, content_key: str) -> list[tuple[str, str]]:
    """(id, status) of the agent's beliefs with this normalised text: forgotten ones first,
    then live ones, then superseded ones, each by id."""
    found = await conn.rows(
        "SELECT id, status FROM beliefs WHERE agent_id = ? AND content_key = ? ORDER BY"
        " CASE status WHEN 'forgotten' THEN 0 WHEN 'superseded' THEN 2 ELSE 1 END, id",
        (agent_id, content_key),
    )
    return [(row["id"], row["status"]) for row in found]


async def agent_episodes(conn: Connection, agent_id: str, episode_ids: Sequence[str]) -> set[str]:
    """Which of ``episode_ids`` are episodes of this agent."""
    return await _episodes(conn, "agent_id = ?", (agent_id,), episode_ids)


async def untrusted_episodes(
    conn: Connection, agent_id: str, episode_ids: Sequence[str]
) -> set[str]:
    """Which of ``episode_ids`` are this agent's episodes of any origin but ``clean``."""
    return await _episodes(conn, "agent_id = ? AND origin != 'clean'", (agent_id,), episode_ids)


async def any_untrusted_episode(conn: Connection, episode_ids: Sequence[str]) -> bool:
    """Whether any of ``episode_ids`` is an episode of origin ``untrusted``."""
    return bool(await _episodes(conn, "origin = 'untrusted'", (), episode_ids))


async def _episodes(
    conn: Connection, where: str, params: tuple[Any, ...], episode_ids: Sequence[str]
) -> set[str]:
    wanted = sorted(set(episode_ids))
    found: set[str] = set()
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        rows = await conn.rows(
            f"SELECT id FROM episodes WHERE {where} AND id IN ({placeholders(len(chunk))})",
            (*params, *chunk),
        )
        found.update(row["id"] for row in rows)
    return found


async def serialise_proposals(conn: Connection, agent_id: str) -> None:
    """Make concurrent proposal writes for one agent take turns (on PostgreSQL), so two replicas
    cannot both insert the same lesson; SQLite's single writer takes turns already.

    ``FOR NO KEY UPDATE`` does not block the key-share locks that episode inserts take.
    """
    if conn.dialect == "postgresql":
        await conn.one("SELECT 1 FROM agents WHERE id = ? FOR NO KEY UPDATE", (agent_id,))


async def insert_pending(conn: Connection, row: dict[str, Any]) -> None:
    """Insert a new belief at version 1 from a dict of its columns."""
    await conn.run(
        "INSERT INTO beliefs(id, agent_id, role, content, content_key, status, confidence, op,"
        " target_belief_id, rationale, source_episodes, provenance, review_reasons, proposed_by,"
        " version, created_at, updated_at, embedding) VALUES (:id, :agent_id, :role, :content,"
        " :content_key, :status, :confidence, :op, :target_belief_id, :rationale,"
        " :source_episodes, :provenance, :review_reasons, :proposed_by, 1, :created_at,"
        " :updated_at, :embedding)",
        row,
    )


async def update_decided(
    conn: Connection,
    belief_id: str,
    *,
    status: str,
    version: int,
    now: str,
    decided_by: str | None,
    forgotten_reason: str | None,
    content: str,
    content_key: str,
    provenance: str,
    embedding: bytes | None,
    superseded_by: str | None,
    keep_proposed_text: bool,
) -> None:
    """Write one decision's new state of a belief (``embedding`` None keeps the stored one).

    Raises Conflict when the database refuses to make untrusted text active.
    """
    try:
        await conn.run(
            "UPDATE beliefs SET status = ?, version = ?, updated_at = ?, decided_by = ?,"
            " decided_at = ?, forgotten_reason = ?, content = ?, content_key = ?,"
            " provenance = ?, embedding = COALESCE(?, embedding), superseded_by = ?,"
            " proposed_content = CASE WHEN ? THEN COALESCE(proposed_content, content)"
            " ELSE proposed_content END WHERE id = ?",
            (
                status,
                version,
                now,
                decided_by,
                now if decided_by is not None else None,
                forgotten_reason,
                content,
                content_key,
                provenance,
                embedding,
                superseded_by,
                keep_proposed_text,
                belief_id,
            ),
        )
    except (sqlite3.IntegrityError, pg_errors.CheckViolation) as exc:
        if UNTRUSTED_ACTIVE in str(exc):
            raise Conflict(
                "this belief came from third-party content and cannot be active as is;"
                " edit it into your own words to activate it"
            ) from None
        raise


async def remembered_decision(conn: Connection, key_id: str, idem_key: str) -> Any:
    """The stored answer to a decision sent with this Idempotency-Key by this key, or None."""
    return await conn.one(
        "SELECT fingerprint, status_code, body, headers FROM idempotency"
        " WHERE key_id = ? AND idem_key = ?",
        (key_id, idem_key),
    )


async def remember_decision(
    conn: Connection,
    key_id: str,
    idem_key: str,
    *,
    fingerprint: str,
    status_code: int,
    body: bytes,
    headers: str,
    now: str,
) -> bool:
    """Store a decision's answer for replay; False when a concurrent request stored one first."""
    changed = await conn.run(
        "INSERT INTO idempotency(key_id, idem_key, fingerprint, status_code, body, headers,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key_id, idem_key) DO NOTHING",
        (key_id, idem_key, fingerprint, status_code, body, headers, now),
    )
    return changed == 1


# --- what the reflector learns from the reviewer -------------------------------------------

# Forgotten by the reviewer, not by the machinery: a kept `forget` proposal ends as forgotten
# ("applied:…"), and before migration 0004 a retired belief was forgotten "superseded_by:…".
# Untrusted text never reaches a model, refused or not.
_REFUSED = (
    "SELECT id, content, forgotten_reason, decided_at FROM beliefs"
    " WHERE agent_id = ? AND status = 'forgotten' AND provenance != 'untrusted'"
    " AND (forgotten_reason IS NULL OR (forgotten_reason NOT LIKE 'applied:%'"
    "      AND forgotten_reason NOT LIKE 'superseded_by:%'))"
    " ORDER BY decided_at DESC, id DESC LIMIT ?"
)
# Rewritten by the reviewer and still memory. A proposal that came from third-party content
# keeps "untrusted_source" in its review reasons after the Edit makes it the owner's.
_EDITED = (
    "SELECT id, proposed_content, content, decided_at FROM beliefs"
    " WHERE agent_id = ? AND status = 'active' AND proposed_content IS NOT NULL"
    " AND proposed_content != content AND NOT {untrusted}"
    " ORDER BY decided_at DESC, id DESC LIMIT ?"
)
_FLAGGED_UNTRUSTED = {
    "sqlite": "EXISTS (SELECT 1 FROM json_each(review_reasons) WHERE value = 'untrusted_source')",
    "postgresql": "(review_reasons::jsonb @> '[\"untrusted_source\"]'::jsonb)",
}


async def refused(conn: Connection, agent_id: str, limit: int) -> list[Any]:
    """The agent's newest beliefs the reviewer forgot (id, content, forgotten_reason,
    decided_at)."""
    return await conn.rows(_REFUSED, (agent_id, limit))


async def rewritten(conn: Connection, agent_id: str, limit: int) -> list[Any]:
    """The agent's newest active beliefs the reviewer rewrote (id, proposed_content, content,
    decided_at), leaving out those proposed from third-party content."""
    sql = _EDITED.format(untrusted=_FLAGGED_UNTRUSTED[conn.dialect])
    return await conn.rows(sql, (agent_id, limit))


# --- export ------------------------------------------------------------------------------

# Superseded beliefs come after active memory, marked by status, so a history survives a restore.
_EXPORTED = (
    f"SELECT {COLUMNS} FROM beliefs WHERE agent_id = ? AND status IN ('active', 'superseded')"
    " AND provenance IN ('clean', 'owner', 'unsourced')"
    " ORDER BY status = 'superseded', role IS NOT NULL, role, id"
)
_EXPORTED_AUDIT = (
    "SELECT belief_id, action, actor, at, row_hash FROM audit WHERE belief_id IN"
    " (SELECT id FROM beliefs WHERE agent_id = ? AND status IN ('active', 'superseded'))"
    " ORDER BY seq"
)
_SNAPSHOT = {"sqlite": "BEGIN", "postgresql": "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"}


async def export_snapshot(conn: Connection, agent_id: str) -> tuple[Any, list[Any], list[Any]]:
    """(the agent's id and name or None, its exported beliefs, their audit rows in seq order),
    read in one snapshot so beliefs and audit rows describe the same moment. Call it in a
    read unit of work (outside any transaction)."""
    await conn.run(_SNAPSHOT[conn.dialect])
    try:
        agent = await conn.one("SELECT id, name FROM agents WHERE id = ?", (agent_id,))
        beliefs = await conn.rows(_EXPORTED, (agent_id,))
        trail = await conn.rows(_EXPORTED_AUDIT, (agent_id,))
    finally:
        await conn.run("COMMIT")
    return agent, beliefs, trail


# --- read path counters and the gate's cache -------------------------------------------------


async def add_injections(conn: Connection, servings: Iterable[tuple[str, int, str]]) -> None:
    """Add (belief id, servings, last served at) to each belief's injection count and time.

    Neither version nor updated_at moves: using a belief must not make an If-Match stale.
    """
    await conn.run_many(
        "UPDATE beliefs SET injection_count = injection_count + ?,"
        " last_injected_at = CASE WHEN last_injected_at IS NULL"
        " OR last_injected_at < ? THEN ? ELSE last_injected_at END WHERE id = ?",
        [(count, at, at, belief_id) for belief_id, count, at in servings],
    )


async def versions(conn: Connection, agent_id: str) -> dict[str, int]:
    """Every belief of the agent with its version."""
    found = await conn.rows("SELECT id, version FROM beliefs WHERE agent_id = ?", (agent_id,))
    return {row["id"]: int(row["version"]) for row in found}


_PROPOSING_JOB = {
    "sqlite": "json_extract(proposed_by, '$.job_id')",
    "postgresql": "(proposed_by::jsonb ->> 'job_id')",
}


async def gate_rows(conn: Connection, belief_ids: Sequence[str]) -> list[Any]:
    """What the gate's cache keeps of each belief: id, version, content, status, confidence,
    created_at, updated_at, embedding and ``job`` (the reflection job that proposed it)."""
    found: list[Any] = []
    for start in range(0, len(belief_ids), _CHUNK):
        chunk = tuple(belief_ids[start : start + _CHUNK])
        found += await conn.rows(
            "SELECT id, version, content, status, confidence, created_at, updated_at, embedding,"
            f" {_PROPOSING_JOB[conn.dialect]} AS job"
            f" FROM beliefs WHERE id IN ({placeholders(len(chunk))})",
            chunk,
        )
    return found
