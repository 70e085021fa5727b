"""Store state: named change counters other processes poll, and the readiness write."""

from __future__ import annotations

from credence.db.engine import Connection

KEY_CHANGES = "key_changes"


async def counter(conn: Connection, name: str) -> int:
    """The current value of the change counter ``name`` (0 when it does not exist)."""
    row = await conn.one("SELECT value FROM store_state WHERE name = ?", (name,))
    return int(row["value"]) if row is not None else 0


async def bump(conn: Connection, name: str) -> None:
    """Add one to the change counter ``name``, inside the caller's transaction."""
    await conn.run("UPDATE store_state SET value = value + 1 WHERE name = ?", (name,))
