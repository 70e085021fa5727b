"""The push and channel outboxes: queued deliveries, their leases, and every recorded answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from credence.db import lease
from credence.db.engine import Connection, Row, placeholders, skip_locked
from credence.db.records import Record
from credence.models.common import Provenance
from credence.models.reasons import Reason, decode_all

Table = Literal["push_outbox", "channel_outbox"]
TABLES: tuple[Table, ...] = ("push_outbox", "channel_outbox")
KIND_BELIEF = "belief.pending"

# What a claim returns per lane: the outbox row and what delivery (and the staleness checks) need.
_CLAIMED: dict[Table, str] = {
    "push_outbox": (
        "SELECT o.*, s.endpoint, s.p256dh, s.auth, k.revoked_at,"
        " b.status AS belief_status, b.version AS current_version"
        " FROM push_outbox o JOIN push_subscriptions s ON s.id = o.subscription_id"
        " JOIN api_keys k ON k.id = s.key_id LEFT JOIN beliefs b ON b.id = o.belief_id"
    ),
    "channel_outbox": (
        "SELECT o.*, c.url, c.masked_url, c.kind AS channel_kind, c.access_token,"
        " NULL AS revoked_at, b.status AS belief_status,"
        " b.version AS current_version FROM channel_outbox o"
        " JOIN push_channels c ON c.id = o.channel_id"
        " LEFT JOIN beliefs b ON b.id = o.belief_id"
    ),
}


def stored_reasons(stored: str | None) -> list[Reason]:
    """The reasons of a ``review_reasons`` column (a JSON list of their string forms)."""
    return decode_all(msgspec.json.decode(stored)) if stored else []


class ChangedBelief(Record, frozen=True, kw_only=True):
    """The belief a pending one would change, as far as a notification names it."""

    content: str
    provenance: Provenance


@dataclass(frozen=True)
class Result:
    """One answer to record.

    ``sent``/``failed`` finish the row at ``at``; ``retry`` schedules it for ``at``; ``release``
    hands back a row claimed by ``owner`` but never started; ``gone`` deletes the subscription
    ``row_id`` (and its queued rows).
    """

    table: Table
    kind: Literal["sent", "failed", "retry", "release", "gone"]
    row_id: str
    at: str = ""
    status: int | None = None
    error: str | None = None
    owner: str | None = None


def _table(table: str) -> Table:
    if table not in TABLES:
        raise ValueError(f"not an outbox table: {table!r}")
    return table


def _record_statement(result: Result) -> tuple[str, tuple[Any, ...]]:
    table = _table(result.table)
    status = ", last_status = ?" if table == "push_outbox" else ""
    code = (result.status,) if table == "push_outbox" else ()
    if result.kind == "sent":
        sets = f"state = 'sent', sent_at = ?, finished_at = ?{status}, last_error = NULL"
        return lease.finish_statement(table, sets), (result.at, result.at, *code, result.row_id)
    if result.kind == "failed":
        sets = f"state = 'failed', finished_at = ?{status}, last_error = ?"
        return lease.finish_statement(table, sets), (result.at, *code, result.error, result.row_id)
    if result.kind == "retry":
        sets = f"next_attempt_at = ?{status}, last_error = ?"
        return lease.finish_statement(table, sets), (result.at, *code, result.error, result.row_id)
    if result.kind == "gone":
        return "DELETE FROM push_subscriptions WHERE id = ?", (result.row_id,)
    raise ValueError(f"no single statement records a {result.kind!r}")


async def record(conn: Connection, results: Sequence[Result]) -> None:
    """Write delivery answers, one statement per kind of answer for the whole batch.

    A ``release`` goes through the lease queue: only its owner's claim is handed back.
    """
    grouped: dict[str, list[tuple[Any, ...]]] = {}
    released: list[Result] = []
    for result in results:
        if result.kind == "release":
            released.append(result)
            continue
        sql, params = _record_statement(result)
        grouped.setdefault(sql, []).append(params)
    for sql, params_list in grouped.items():
        await conn.run_many(sql, params_list)
    for result in released:
        if result.owner is not None:
            await lease.release(
                conn, _table(result.table), result.row_id, owner=result.owner, now=result.at
            )


async def insert_push_rows(conn: Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Queue web pushes: (id, subscription_id, belief_id, belief_version, kind, payload, topic,
    urgency, ttl, created_at, expires_at, next_attempt_at) each."""
    if rows:
        await conn.run_many(
            "INSERT INTO push_outbox(id, subscription_id, belief_id, belief_version, kind,"
            " payload, topic, urgency, ttl, created_at, expires_at, next_attempt_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


async def insert_channel_rows(conn: Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Queue channel messages: (id, channel_id, belief_id, belief_version, kind, title, body,
    created_at, expires_at, next_attempt_at) each."""
    if rows:
        await conn.run_many(
            "INSERT INTO channel_outbox(id, channel_id, belief_id, belief_version, kind, title,"
            " body, created_at, expires_at, next_attempt_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


async def agent_name(conn: Connection, agent_id: str) -> str | None:
    """The display name of an agent, or None."""
    row = await conn.one("SELECT name FROM agents WHERE id = ?", (agent_id,))
    return row["name"] if row is not None else None


async def changed_belief(conn: Connection, belief_id: str, agent_id: str) -> ChangedBelief | None:
    """The content and provenance of the belief a proposal would change, or None."""
    row = await conn.one(
        f"SELECT {ChangedBelief.columns()} FROM beliefs WHERE id = ? AND agent_id = ?",
        (belief_id, agent_id),
    )
    return None if row is None else ChangedBelief.from_row(row)


async def pending_count(conn: Connection, agents: Sequence[str] | None) -> int:
    """Pending beliefs of these agents (None: of every agent)."""
    if agents is None:
        row = await conn.one("SELECT COUNT(*) FROM beliefs WHERE status = 'pending'")
    elif not agents:
        return 0
    else:
        row = await conn.one(
            "SELECT COUNT(*) FROM beliefs WHERE status = 'pending'"
            f" AND agent_id IN ({placeholders(len(agents))})",
            tuple(agents),
        )
    return int(row[0]) if row is not None else 0


async def next_due(conn: Connection, table: str) -> str | None:
    """When the earliest queued row of ``table`` may be claimed (its lease lapsed), or None."""
    later = "GREATEST" if conn.dialect == "postgresql" else "MAX"
    row = await conn.one(
        f"SELECT MIN({later}(next_attempt_at, COALESCE(lease_until, ''))) AS due"
        f" FROM {_table(table)} WHERE state = 'queued'"
    )
    return row["due"] if row is not None else None


async def claim(
    conn: Connection,
    table: str,
    *,
    owner: str,
    until: str,
    now: str,
    limit: int,
    max_attempts: int,
) -> list[Row]:
    """Lease up to ``limit`` due rows to ``owner`` and return those still worth sending.

    Rows past their TTL, or whose attempt ``max_attempts`` never reported, are retired first; of the
    leased rows, those of a revoked key or a belief decided (or changed) since are finished.
    ``attempts`` counts at the claim, so a row that kills its worker cannot loop forever. On
    PostgreSQL rows locked by another replica's claim are skipped, so no two replicas lease one.
    """
    name = _table(table)
    await _sweep(conn, name, now, max_attempts)
    ids = await lease.claim(conn, name, owner=owner, now=now, until=until, limit=limit)
    if not ids:
        return []
    rows = await conn.rows(
        f"{_CLAIMED[name]} WHERE o.id IN ({placeholders(len(ids))})"
        " ORDER BY o.next_attempt_at, o.id",
        ids,
    )
    ready = []
    for row in rows:
        if row["revoked_at"] is not None:
            await _finish(conn, name, row["id"], "failed", now, "key revoked")
        elif (
            row["kind"] == KIND_BELIEF
            and row["belief_id"] is not None  # None: a digest about several beliefs
            and (
                row["belief_status"] != "pending" or row["current_version"] != row["belief_version"]
            )
        ):
            # Decided elsewhere before this went out: a stale "I've learned" is noise.
            await _finish(conn, name, row["id"], "obsolete", now, None)
        else:
            ready.append(row)
    return ready


async def _sweep(conn: Connection, table: Table, now: str, max_attempts: int) -> None:
    """Retire queued rows past their TTL, and rows whose last allowed attempt never reported."""
    # Rows another replica holds are left to it (SKIP LOCKED): sweeping is never worth a wait.
    await conn.run(
        f"UPDATE {table} SET state = 'expired', finished_at = ?, {lease.CLEAR}"
        f" WHERE id IN (SELECT id FROM {table}"
        f" WHERE state = 'queued' AND expires_at <= ?{skip_locked(conn)})",
        (now, now),
    )
    await lease.retire_exhausted(
        conn,
        table,
        now=now,
        max_attempts=max_attempts,
        error="no result recorded for the last attempt",
    )


async def _finish(
    conn: Connection, table: Table, row_id: str, state: str, now: str, error: str | None
) -> None:
    await conn.run(
        lease.finish_statement(table, "state = ?, finished_at = ?, last_error = ?"),
        (state, now, error, row_id),
    )


async def prune_finished(conn: Connection, before: str) -> int:
    """Delete outbox rows of both lanes finished before ``before``; how many went."""
    deleted = 0
    for table in TABLES:
        deleted += await conn.run(f"DELETE FROM {table} WHERE finished_at < ?", (before,))
    return deleted
