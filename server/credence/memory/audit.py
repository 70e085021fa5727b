"""The append-only audit chain: one hashed row per belief change, each linked to the previous."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from credence.db.store import one

if TYPE_CHECKING:
    import aiosqlite

    from credence.db.store import Store

GENESIS = "0" * 64


def content_hash(content: str) -> str:
    """SHA-256 hex of a belief's content, so the audit proves what text was decided on."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def row_hash(fields: dict[str, Any]) -> str:
    """Hash of one audit row's fields (including its seq and the previous row's hash)."""
    canonical = json.dumps(
        [
            fields["seq"],
            fields["belief_id"],
            fields["agent_id"],
            fields["action"],
            fields["actor"],
            fields["at"],
            fields["before_status"],
            fields["after_status"],
            fields["before_hash"],
            fields["after_hash"],
            fields["version"],
            fields["detail"],
            fields["prev_hash"],
        ],
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


async def append(
    conn: aiosqlite.Connection,
    *,
    belief_id: str,
    agent_id: str,
    action: str,
    actor: str,
    at: str,
    before_status: str | None,
    after_status: str,
    before_content: str | None,
    after_content: str,
    version: int,
    detail: str = "",
) -> None:
    """Append one chained audit row inside the caller's write transaction."""
    last = await one(conn, "SELECT seq, row_hash FROM audit ORDER BY seq DESC LIMIT 1")
    fields: dict[str, Any] = {
        "seq": (last["seq"] + 1) if last else 1,
        "belief_id": belief_id,
        "agent_id": agent_id,
        "action": action,
        "actor": actor,
        "at": at,
        "before_status": before_status,
        "after_status": after_status,
        "before_hash": content_hash(before_content) if before_content is not None else None,
        "after_hash": content_hash(after_content),
        "version": version,
        "detail": detail,
        "prev_hash": last["row_hash"] if last else GENESIS,
    }
    fields["row_hash"] = row_hash(fields)
    await conn.execute(
        "INSERT INTO audit(seq, belief_id, agent_id, action, actor, at, before_status,"
        " after_status, before_hash, after_hash, version, detail, prev_hash, row_hash)"
        " VALUES (:seq, :belief_id, :agent_id, :action, :actor, :at, :before_status,"
        " :after_status, :before_hash, :after_hash, :version, :detail, :prev_hash, :row_hash)",
        fields,
    )


def verify_rows(rows: list[dict[str, Any]]) -> tuple[bool, int, int | None]:
    """Check a whole chain in seq order; returns (ok, rows, seq of the first broken row)."""
    previous = GENESIS
    for row in rows:
        if row["prev_hash"] != previous or row_hash(row) != row["row_hash"]:
            return False, len(rows), row["seq"]
        previous = row["row_hash"]
    return True, len(rows), None


async def verify(store: Store) -> tuple[bool, int, int | None]:
    """Walk the stored audit chain and verify every link."""
    rows = await store.fetchall("SELECT * FROM audit ORDER BY seq")
    return verify_rows([dict(row) for row in rows])


async def trail(store: Store, belief_id: str) -> list[dict[str, Any]]:
    """A belief's audit rows, oldest first."""
    rows = await store.fetchall(
        "SELECT * FROM audit WHERE belief_id = ? ORDER BY seq", (belief_id,)
    )
    return [dict(row) for row in rows]
