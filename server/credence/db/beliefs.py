"""Belief rows: typed records, reads, the pending insert, decided writes and injections."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import msgspec
from psycopg import errors as pg_errors

from credence.db.audit import APPEND, AuditEntry
from credence.db.changes import BUMP_BELIEF_CHANGES
from credence.db.engine import Connection, Query, Row, Statement, for_update, placeholders
from credence.db.paging import newest_first
from credence.errors import Conflict
from credence.models.common import BeliefOp, BeliefStatus, Provenance
from credence.models.reasons import Reason, decode_all


class BeliefRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One beliefs row as the store returns it, JSON columns decoded; its fields, in order,
    are the column list every belief read selects."""

    id: str
    agent_id: str
    role: str | None
    content: str
    content_key: str
    status: BeliefStatus
    confidence: float
    op: BeliefOp
    target_belief_id: str | None
    rationale: str
    source_episodes: list[str]
    provenance: Provenance
    review_reasons: list[Reason]
    proposed_by: dict[str, Any]
    version: int
    created_at: str
    updated_at: str
    decided_by: str | None
    decided_at: str | None
    forgotten_reason: str | None
    embedding: bytes | None
    injection_count: int
    last_injected_at: str | None
    superseded_by: str | None
    proposed_content: str | None
    # The kept forget request that forgot this belief.
    forgotten_by: str | None = None
    # The kept belief that retired this forgotten one without a refusal: an applied forget
    # request names itself; before migration 0004 a superseded belief was forgotten.
    retired_by: str | None = None

    @classmethod
    def from_row(cls, row: Any) -> BeliefRecord:
        """The record of a row read with ``COLUMNS`` (by name: a dict works too)."""
        if isinstance(row, BeliefRecord):
            return row
        values = {name: row[name] for name in _FIELDS}
        for name in _JSON_FIELDS:
            values[name] = _decode(values[name])
        values["review_reasons"] = decode_all(values["review_reasons"])
        embedding = values["embedding"]
        if embedding is not None and not isinstance(embedding, bytes):
            values["embedding"] = bytes(embedding)
        return cls(**values)


# What the transaction that makes a belief pending calls with it (the review ledger, the
# reflection lease fence), and what hears about an agent after a commit (the hot caches, the
# review planner). Store-level types, so that memory/ and notify/ share one definition.
PendingHook = Callable[[Connection, BeliefRecord], Awaitable[None]]
ChangeHook = Callable[[str], None]


_FIELDS: tuple[str, ...] = BeliefRecord.__struct_fields__
_JSON_FIELDS = ("source_episodes", "review_reasons", "proposed_by")
_decode = msgspec.json.decode
# Named, never *: PostgreSQL's beliefs row also carries the generated search_vector.
COLUMNS = ", ".join(_FIELDS)
_CHUNK = 500
UNTRUSTED_ACTIVE = "untrusted belief cannot be active"


async def get(conn: Connection, belief_id: str, *, lock: bool = False) -> Row | None:
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
) -> list[Row]:
    """Up to ``limit`` beliefs newest first after ``cursor``, optionally by agents and status."""
    where, params = newest_first(agent_ids=agent_ids, status=status, cursor=cursor)
    return await conn.rows(
        f"SELECT {COLUMNS} FROM beliefs {where} ORDER BY id DESC LIMIT ?", (*params, limit)
    )


async def by_ids(
    conn: Connection, agent_id: str, belief_ids: Sequence[str], *, lock: bool = False
) -> list[Row]:
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


async def retired_by(conn: Connection, agent_id: str, belief_id: str) -> list[Row]:
    """The beliefs that ``belief_id``'s decision superseded or forgot, locked, oldest first."""
    return await conn.rows(
        f"SELECT {COLUMNS} FROM beliefs WHERE agent_id = ? AND (superseded_by = ? OR"
        " (status = 'forgotten' AND (forgotten_by = ? OR retired_by = ?) AND id != ?))"
        f" ORDER BY id{for_update(conn)}",
        (agent_id, belief_id, belief_id, belief_id, belief_id),
    )


async def target_status(conn: Connection, agent_id: str, belief_id: str) -> str | None:
    """The status of the agent's belief ``belief_id``, or None when it has none by that id."""
    row = await conn.one(
        "SELECT status FROM beliefs WHERE id = ? AND agent_id = ?", (belief_id, agent_id)
    )
    return row["status"] if row is not None else None


async def with_key(
    conn: Connection, agent_id: str, content_keys: Sequence[str]
) -> list[tuple[str, str, str]]:
    """(id, status, content) of the agent's beliefs stored under any of these normalised-text
    keys: forgotten ones first, then live ones, then superseded ones, each by id."""
    keys = tuple(dict.fromkeys(content_keys))
    found = await conn.rows(
        f"SELECT id, status, content FROM beliefs WHERE agent_id = ?"
        f" AND content_key IN ({placeholders(len(keys))}) ORDER BY"
        " CASE status WHEN 'forgotten' THEN 0 WHEN 'superseded' THEN 2 ELSE 1 END, id",
        (agent_id, *keys),
    )
    return [(row["id"], row["status"], row["content"]) for row in found]


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


async def untrusted_episode_between(
    conn: Connection, agent_id: str, since: str, until: str
) -> bool:
    """Whether the agent stored an episode of origin ``untrusted`` after ``since``, up to
    ``until`` (a proposal dated in the past is not judged by what came after it)."""
    row = await conn.one(
        "SELECT 1 FROM episodes WHERE agent_id = ? AND origin = 'untrusted' AND created_at > ?"
        " AND created_at <= ? LIMIT 1",
        (agent_id, since, until),
    )
    return row is not None


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


# What a belief is before anyone decides it: the columns an insert leaves to their defaults.
_UNDECIDED: dict[str, Any] = {
    "version": 1,
    "decided_by": None,
    "decided_at": None,
    "forgotten_reason": None,
    "injection_count": 0,
    "last_injected_at": None,
    "superseded_by": None,
    "proposed_content": None,
    "forgotten_by": None,
    "retired_by": None,
}


async def insert_pending(conn: Connection, row: dict[str, Any]) -> BeliefRecord:
    """Insert a new belief at version 1 from a dict of its columns; the record it became."""
    await conn.run(
        "INSERT INTO beliefs(id, agent_id, role, content, content_key, status, confidence, op,"
        " target_belief_id, rationale, source_episodes, provenance, review_reasons, proposed_by,"
        " version, created_at, updated_at, embedding, embedding_model) VALUES (:id, :agent_id,"
        " :role, :content, :content_key, :status, :confidence, :op, :target_belief_id,"
        " :rationale, :source_episodes, :provenance, :review_reasons, :proposed_by, 1,"
        " :created_at, :updated_at, :embedding, :embedding_model)",
        row,
    )
    return BeliefRecord.from_row({**_UNDECIDED, **row})


class BeliefWrite(msgspec.Struct, frozen=True, kw_only=True):
    """One belief's decided change (its state as read, its new state) and the audit entry
    that records it.

    ``after.embedding`` is written only with ``new_embedding`` (then with ``embedding_model``);
    otherwise the stored embedding and its model stay.
    """

    before: BeliefRecord
    after: BeliefRecord
    audit: AuditEntry
    new_embedding: bool = False
    embedding_model: str | None = None


class Subject(msgspec.Struct, frozen=True, kw_only=True):
    """What a decision on one belief may touch, read (and locked) at once: the belief, the
    same agent's beliefs it names (its target and the ids to retire), and for a reopen the
    beliefs its decision retired."""

    belief: BeliefRecord
    related: dict[str, BeliefRecord]
    retired: list[BeliefRecord]


_SUBJECT = f"SELECT {COLUMNS} FROM beliefs WHERE id IN (?, {{target}}{{named}}) ORDER BY id{{lock}}"
_TARGET_OF = "(SELECT target_belief_id FROM beliefs WHERE id = ?)"
# The columns a decision may change. Only those it does change are written: a column named
# in SET rewrites every index on it and fires the triggers that watch it, even when its value
# stays (on SQLite a Keep's UPDATE took 89 µs with every column named, 63 µs with its five).
_DECIDED_COLUMNS = (
    "status",
    "version",
    "updated_at",
    "decided_by",
    "decided_at",
    "forgotten_reason",
    "content",
    "content_key",
    "provenance",
    "superseded_by",
    "proposed_content",
    "forgotten_by",
    "retired_by",
)


def _update_of(write: BeliefWrite) -> Statement:
    """The UPDATE that writes one decided change: the columns it changed, nothing else."""
    before, after = write.before, write.after
    columns = [c for c in _DECIDED_COLUMNS if getattr(before, c) != getattr(after, c)]
    values = [getattr(after, c) for c in columns]
    if write.new_embedding:
        columns += ["embedding", "embedding_model"]
        values += [after.embedding, write.embedding_model]
    return _update_sql(tuple(columns)), [(*values, after.id)]


@functools.lru_cache(maxsize=64)
def _update_sql(columns: tuple[str, ...]) -> str:
    return f"UPDATE beliefs SET {', '.join(f'{c} = ?' for c in columns)} WHERE id = ?"


def subject_query(
    conn: Connection, belief_id: str, *, names: Sequence[str] = (), with_target: bool = False
) -> Query:
    """The one read of a belief and what a decision on it may touch, locked (PostgreSQL)
    until the write commits: ``names`` (ids to retire) and, ``with_target``, its target."""
    named = tuple(dict.fromkeys(n for n in names if n != belief_id))
    sql = _SUBJECT.format(
        target=_TARGET_OF if with_target else "?",
        named="".join(", ?" for _ in named),
        lock=for_update(conn),
    )
    return sql, (belief_id, belief_id, *named)


async def subject_of(
    conn: Connection, rows: list[Row], belief_id: str, *, restoring: bool = False
) -> Subject | None:
    """The Subject in ``subject_query``'s rows; ``restoring`` adds the beliefs the belief's
    decision retired (a second read). None: no such belief."""
    found = [BeliefRecord.from_row(row) for row in rows]
    belief = next((r for r in found if r.id == belief_id), None)
    if belief is None:
        return None
    related = {r.id: r for r in found if r.id != belief_id and r.agent_id == belief.agent_id}
    retired = (
        [BeliefRecord.from_row(r) for r in await retired_by(conn, belief.agent_id, belief_id)]
        if restoring
        else []
    )
    return Subject(belief=belief, related=related, retired=retired)


async def apply(
    conn: Connection, writes: Sequence[BeliefWrite], also: Sequence[Statement] = ()
) -> None:
    """Write decided beliefs, their audit entries (in order), the change counter and ``also``
    (the caller's own statements, e.g. the answer to remember) as one batch: one trip.

    Raises Conflict when the database refuses to make untrusted text active.
    """
    entries = [msgspec.structs.asdict(w.audit) for w in writes]
    try:
        await conn.batch(
            [
                *(_update_of(w) for w in writes),
                (APPEND[conn.dialect], entries),
                (BUMP_BELIEF_CHANGES, [()]),
                *also,
            ]
        )
    except (sqlite3.IntegrityError, pg_errors.CheckViolation) as exc:
        if UNTRUSTED_ACTIVE in str(exc):
            raise Conflict(
                "this belief came from third-party content and cannot be active as is;"
                " edit it into your own words to activate it"
            ) from None
        raise


# --- what the reflector learns from the reviewer -------------------------------------------

# Forgotten by the reviewer, or on a forget request the reviewer kept; not a kept `forget`
# proposal itself, nor a belief forgotten as superseded before migration 0004 (both name the
# belief that retired them in retired_by). Untrusted text never reaches a model, refused or not.
_REFUSED = (
    "SELECT id, content, forgotten_reason, forgotten_by, decided_at FROM beliefs"
    " WHERE agent_id = ? AND status = 'forgotten' AND provenance != 'untrusted'"
    " AND retired_by IS NULL"
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


async def refused(conn: Connection, agent_id: str, limit: int) -> list[Row]:
    """The agent's newest beliefs the reviewer forgot (id, content, forgotten_reason,
    forgotten_by, decided_at)."""
    return await conn.rows(_REFUSED, (agent_id, limit))


async def rewritten(conn: Connection, agent_id: str, limit: int) -> list[Row]:
    """The agent's newest active beliefs the reviewer rewrote (id, proposed_content, content,
    decided_at), leaving out those proposed from third-party content."""
    sql = _EDITED.format(untrusted=_FLAGGED_UNTRUSTED[conn.dialect])
    return await conn.rows(sql, (agent_id, limit))


# --- export ------------------------------------------------------------------------------

# Superseded beliefs come after active memory, marked by status, so a history survives a restore.
_EXPORTED = (
    f"SELECT {COLUMNS} FROM beliefs WHERE agent_id = ? AND status IN ('active', 'superseded')"
    " AND provenance IN ('clean', 'owner', 'unsourced', 'imported')"
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


async def gate_rows(conn: Connection, belief_ids: Sequence[str]) -> list[Row]:
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
