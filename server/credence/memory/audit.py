"""The append-only audit chain: one hashed row per belief change, each linked to the previous."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from credence.db.store import one

if TYPE_CHECKING:
    import aiosqlite

    from credence.db.engine import Database

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


async def verify(store: Database) -> tuple[bool, int, int | None]:
    """Walk the stored audit chain and verify every link."""
    rows = await store.fetchall("SELECT * FROM audit ORDER BY seq")
    return verify_rows([dict(row) for row in rows])


async def trail(store: Database, belief_id: str) -> list[dict[str, Any]]:
    """A belief's audit rows, oldest first, each with its actor's label."""
    rows = await store.fetchall(
        "SELECT * FROM audit WHERE belief_id = ? ORDER BY seq", (belief_id,)
    )
    return await labelled(store, [dict(row) for row in rows])


async def decisions(
    store: Database, *, agent_ids: Sequence[str] | None, limit: int, cursor: int | None
) -> tuple[list[dict[str, Any]], str | None]:
    """Every change but proposals, newest first, with the belief's text and the actor's label;
    returns (rows, next cursor)."""
    clauses = ["a.action != 'proposed'"]
    params: list[Any] = []
    if agent_ids is not None:
        clauses.append(f"a.agent_id IN ({','.join('?' * len(agent_ids))})")
        params.extend(agent_ids)
    if cursor is not None:
        clauses.append("a.seq < ?")
        params.append(cursor)
    rows = await store.fetchall(
        "SELECT a.*, b.content FROM audit a JOIN beliefs b ON b.id = a.belief_id"
        f" WHERE {' AND '.join(clauses)} ORDER BY a.seq DESC LIMIT ?",
        (*params, limit + 1),
    )
    page = await labelled(store, [dict(row) for row in rows[:limit]])
    return page, str(rows[limit - 1]["seq"]) if len(rows) > limit else None


async def labelled(store: Database, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with ``actor_label``: the key's label (a paired phone's name), not its id."""
    key_ids = sorted({row["actor"][4:] for row in rows if row["actor"].startswith("key:")})
    labels: dict[str, str] = {}
    if key_ids:
        found = await store.fetchall(
            f"SELECT id, label FROM api_keys WHERE id IN ({','.join('?' * len(key_ids))})",
            tuple(key_ids),
        )
        labels = {row["id"]: row["label"] for row in found}
    return [{**row, "actor_label": actor_label(row["actor"], labels)} for row in rows]


def actor_label(actor: str, key_labels: Mapping[str, str]) -> str:
    """Words for an audit actor: ``key:<id>`` is its key's label, ``job:<id>`` a reflection run."""
    kind, _, ref = actor.partition(":")
    if kind == "key":
        if ref not in key_labels:
            return "a deleted key"
        return key_labels[ref] or "an unlabelled key"
    if kind == "job":
        return "a reflection run"
    return actor
