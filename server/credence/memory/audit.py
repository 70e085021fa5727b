"""The append-only audit chain: one hashed row per belief change, each linked to the previous."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from credence.db import audit as audit_rows
from credence.db.audit import GENESIS, row_hash

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database

__all__ = ["GENESIS", "actor_label", "append", "content_hash", "row_hash", "verify_rows"]
_VERIFY_PAGE = 10_000


def content_hash(content: str) -> str:
    """SHA-256 hex of a belief's content, so the audit proves what text was decided on."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


async def append(
    conn: Connection,
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
) -> dict[str, Any]:
    """Append one chained audit row inside the caller's write transaction; returns it."""
    return await audit_rows.append(
        conn,
        {
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
        },
    )


def verify_rows(
    rows: list[dict[str, Any]], previous: str = GENESIS
) -> tuple[bool, int, int | None]:
    """Check a chain in seq order, from the row after ``previous`` (by default the first);
    returns (ok, rows, seq of the first broken row)."""
    for row in rows:
        if row["prev_hash"] != previous or row_hash(row) != row["row_hash"]:
            return False, len(rows), row["seq"]
        previous = row["row_hash"]
    return True, len(rows), None


async def verify(store: Database) -> tuple[bool, int, int | None]:
    """Walk the stored audit chain page by page and verify every link."""
    previous, seen, after = GENESIS, 0, 0
    while True:
        page = await store.read(
            functools.partial(audit_rows.chain, after=after, limit=_VERIFY_PAGE)
        )
        ok, _, broken = verify_rows(page, previous)
        if not ok:
            return False, await store.read(audit_rows.count), broken
        seen += len(page)
        if len(page) < _VERIFY_PAGE:
            return True, seen, None
        previous, after = page[-1]["row_hash"], page[-1]["seq"]


async def trail(store: Database, belief_id: str) -> list[dict[str, Any]]:
    """A belief's audit rows, oldest first, each with its actor's label."""

    async def work(conn: Connection) -> list[dict[str, Any]]:
        return await labelled(conn, await audit_rows.trail(conn, belief_id))

    return await store.read(work)


async def decisions(
    store: Database, *, agent_ids: Sequence[str] | None, limit: int, cursor: int | None
) -> tuple[list[dict[str, Any]], str | None]:
    """Every change but proposals, newest first, with the belief's text and the actor's label;
    returns (rows, next cursor)."""

    async def work(conn: Connection) -> list[dict[str, Any]]:
        found = await audit_rows.decisions(
            conn, agent_ids=agent_ids, limit=limit + 1, before=cursor
        )
        return [*await labelled(conn, found[:limit]), *found[limit:]]

    rows = await store.read(work)
    return rows[:limit], str(rows[limit - 1]["seq"]) if len(rows) > limit else None


async def labelled(conn: Connection, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with ``actor_label``: the key's label (a paired phone's name), not its id."""
    key_ids = sorted({row["actor"][4:] for row in rows if row["actor"].startswith("key:")})
    labels = await audit_rows.key_labels(conn, key_ids) if key_ids else {}
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
