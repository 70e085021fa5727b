"""Idempotency records: the answer given to a key's request under one Idempotency-Key."""

from __future__ import annotations

import json

import msgspec

from credence.db.engine import Connection, Statement


class Remembered(msgspec.Struct, frozen=True):
    """A stored answer: the request's fingerprint and the response to replay."""

    fingerprint: str
    status_code: int
    body: bytes
    headers: dict[str, str]


async def hold(conn: Connection, key_id: str, idem_key: str) -> None:
    """Serialise writers of one (key, Idempotency-Key) until the caller's transaction ends.

    On PostgreSQL two replicas may receive the same retried request at once; a transaction-
    scoped advisory lock makes the second wait for the first's commit, then ``find`` the
    answer to replay. SQLite has one writer, so nothing to do there.
    """
    if conn.dialect == "postgresql":
        await conn.one(
            "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))",
            (json.dumps([key_id, idem_key]),),
        )


async def find(conn: Connection, key_id: str, idem_key: str) -> Remembered | None:
    """The answer stored for this key's Idempotency-Key, or None."""
    row = await conn.one(
        "SELECT fingerprint, status_code, body, headers FROM idempotency"
        " WHERE key_id = ? AND idem_key = ?",
        (key_id, idem_key),
    )
    if row is None:
        return None
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
