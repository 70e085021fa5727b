"""Idempotency records: the answer given to a key's request under one Idempotency-Key."""

from __future__ import annotations

import json

import msgspec

from credence.db.engine import Connection, Query, Row, Statement


class Remembered(msgspec.Struct, frozen=True):
    """A stored answer: the request's fingerprint and the response to replay."""

    fingerprint: str
    status_code: int
    body: bytes
    headers: dict[str, str]


_HOLD = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))"
_FIND = (
    "SELECT fingerprint, status_code, body, headers FROM idempotency"
    " WHERE key_id = ? AND idem_key = ?"
)


def lookup(conn: Connection, key_id: str, idem_key: str) -> list[Query]:
    """The queries that hold this key's Idempotency-Key and then find its stored answer, in
    order, for one trip (``Connection.rows_together``); the last one's rows go to ``found``.

    On PostgreSQL two replicas may receive the same retried request at once; a transaction-
    scoped advisory lock makes the second wait for the first's commit, and the find after it
    (on a snapshot taken once the lock is held) then sees the answer to replay. SQLite has one
    writer, so there is nothing to hold.
    """
    find: Query = (_FIND, (key_id, idem_key))
    if conn.dialect != "postgresql":
        return [find]
    return [(_HOLD, (json.dumps([key_id, idem_key]),)), find]


def found(rows: list[Row]) -> Remembered | None:
    """The stored answer in the find query's rows, or None."""
    if not rows:
        return None
    row = rows[0]
    return Remembered(
        fingerprint=row["fingerprint"],
        status_code=int(row["status_code"]),
        body=bytes(row["body"]),
        headers=json.loads(row["headers"]),
    )


_REMEMBER = (
    "INSERT INTO idempotency(key_id, idem_key, fingerprint, status_code, body, headers,"
    " created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key_id, idem_key) DO NOTHING"
)


def remembering(key_id: str, idem_key: str, answer: Remembered, now: str) -> Statement:
    """The statement that stores the answer, to join the batch of the work it answers (the
    caller holds the key with :func:`hold`, so no other answer can be stored meanwhile)."""
    row = (
        key_id,
        idem_key,
        answer.fingerprint,
        answer.status_code,
        answer.body,
        json.dumps(answer.headers),
        now,
    )
    return _REMEMBER, [row]


async def remember(
    conn: Connection, key_id: str, idem_key: str, answer: Remembered, now: str
) -> bool:
    """Store the answer unless one is stored already; True when this call stored it."""
    sql, (row,) = remembering(key_id, idem_key, answer, now)
    stored = await conn.rows(f"{sql} RETURNING key_id", row)
    return bool(stored)
