"""API keys and pairing codes: their rows, stored only as SHA-256 digests of the secrets."""

from __future__ import annotations

from credence.db import state
from credence.db.engine import Connection
from credence.db.records import Record
from credence.models.common import Scope


class KeyRecord(Record, frozen=True, kw_only=True):
    """One api_keys row; ``agents`` None covers every agent, ``may_write`` is 0 or 1."""

    JSON_FIELDS = frozenset({"agents"})

    id: str
    key_hash: str
    scope: Scope
    agents: list[str] | None
    label: str
    created_at: str
    revoked_at: str | None
    reviewer_id: str | None
    may_write: int
    write_grant_at: str | None
    write_grant_by: str | None


class PairingRecord(Record, frozen=True, kw_only=True):
    """One pairing_codes row; ``agents`` None covers every agent."""

    JSON_FIELDS = frozenset({"agents"})

    code_hash: str
    agents: list[str] | None
    label: str
    created_at: str
    expires_at: str
    used_at: str | None
    key_id: str | None
    reviewer_id: str | None


KEY_COLUMNS = KeyRecord.columns()
PAIRING_COLUMNS = PairingRecord.columns()


def _key(row: object) -> KeyRecord | None:
    return None if row is None else KeyRecord.from_row(row)


def _pairing(row: object) -> PairingRecord | None:
    return None if row is None else PairingRecord.from_row(row)


async def insert_key(
    conn: Connection,
    *,
    key_id: str,
    key_hash: str,
    scope: str,
    agents: str | None,
    label: str,
    created_at: str,
    reviewer_id: str | None = None,
    may_write: bool = False,
    write_grant_by: str | None = None,
) -> None:
    """Store a new key and tell every process's key cache that keys changed."""
    await conn.run(
        "INSERT INTO api_keys(id, key_hash, scope, agents, label, created_at, reviewer_id,"
        " may_write, write_grant_at, write_grant_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            key_id,
            key_hash,
            scope,
            agents,
            label,
            created_at,
            reviewer_id,
            int(may_write),
            created_at if write_grant_by else None,
            write_grant_by,
        ),
    )
    await state.bump(conn, state.KEY_CHANGES)


async def active_key(conn: Connection, key_hash: str) -> KeyRecord | None:
    """The unrevoked key with this digest, or None."""
    return _key(
        await conn.one(
            f"SELECT {KEY_COLUMNS} FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL",
            (key_hash,),
        )
    )


async def get_key(conn: Connection, key_id: str) -> KeyRecord | None:
    """The key with this id (revoked or not), or None."""
    return _key(await conn.one(f"SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)))


async def all_keys(conn: Connection) -> list[KeyRecord]:
    """Every key, by id."""
    return KeyRecord.from_rows(await conn.rows(f"SELECT {KEY_COLUMNS} FROM api_keys ORDER BY id"))


async def revoke_key(conn: Connection, key_id: str, now: str) -> KeyRecord | None:
    """Revoke the key (a second revocation keeps the first time); its row, None if unknown."""
    row = await conn.one(
        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?"
        f" RETURNING {KEY_COLUMNS}",
        (now, key_id),
    )
    if row is not None:
        await state.bump(conn, state.KEY_CHANGES)
    return _key(row)


async def set_may_write(
    conn: Connection, key_id: str, may_write: bool, now: str, by: str
) -> KeyRecord | None:
    """Grant or withdraw a key's writing, recording when and by whom; its row, None if unknown.

    Every key cache drops its entries, so the change holds on every replica within a poll.
    """
    row = await conn.one(
        "UPDATE api_keys SET may_write = ?, write_grant_at = ?, write_grant_by = ? WHERE id = ?"
        f" RETURNING {KEY_COLUMNS}",
        (int(may_write), now, by, key_id),
    )
    if row is not None:
        await state.bump(conn, state.KEY_CHANGES)
    return _key(row)


async def key_changes(conn: Connection) -> int:
    """How many times keys were created or revoked: key caches poll this."""
    return await state.counter(conn, state.KEY_CHANGES)


async def insert_pairing_code(
    conn: Connection,
    *,
    code_hash: str,
    agents: str | None,
    label: str,
    created_at: str,
    expires_at: str,
    reviewer_id: str | None = None,
) -> None:
    """Store a new one-time pairing code (``reviewer_id``: the device joins that reviewer)."""
    await conn.run(
        "INSERT INTO pairing_codes(code_hash, agents, label, created_at, expires_at, reviewer_id)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (code_hash, agents, label, created_at, expires_at, reviewer_id),
    )


async def claim_pairing_code(conn: Connection, code_hash: str, now: str) -> PairingRecord | None:
    """Mark the code used, atomically: its record for exactly one caller, None for every other.

    The claim is one conditional UPDATE, so two replicas redeeming the same code at once
    cannot both win: the second finds ``used_at`` set and changes nothing.
    """
    return _pairing(
        await conn.one(
            "UPDATE pairing_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL"
            f" RETURNING {PAIRING_COLUMNS}",
            (now, code_hash),
        )
    )


async def get_pairing_code(conn: Connection, code_hash: str) -> PairingRecord | None:
    """The pairing code, or None."""
    return _pairing(
        await conn.one(
            f"SELECT {PAIRING_COLUMNS} FROM pairing_codes WHERE code_hash = ?", (code_hash,)
        )
    )


async def link_pairing_key(conn: Connection, code_hash: str, key_id: str) -> None:
    """Record which key a claimed pairing code was exchanged for."""
    await conn.run("UPDATE pairing_codes SET key_id = ? WHERE code_hash = ?", (key_id, code_hash))
