"""The append-only audit chains: one hashed row per belief change, linked per agent."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from credence.db import audit as audit_rows
from credence.db import reviewers as reviewer_rows
from credence.db.audit import GENESIS, chain_of, row_hash

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
    rows: list[dict[str, Any]], heads: dict[str, str] | None = None
) -> tuple[bool, int, int | None]:
    """Check the chains in rows given in seq order; returns (ok, rows, seq of the first broken).

    Rows of version 1 (before per-agent chains) form one chain; rows of version 2 one chain per
    agent, each starting from the genesis hash. ``heads`` (each chain's last hash so far) is
    read and advanced, so a long table can be verified page by page.
    """
    heads = {} if heads is None else heads
    for row in rows:
        chain = chain_of(row)
        if row["prev_hash"] != heads.get(chain, GENESIS) or row_hash(row) != row["row_hash"]:
            return False, len(rows), row["seq"]
        heads[chain] = row["row_hash"]
    return True, len(rows), None


async def verify(store: Database) -> tuple[bool, int, int | None]:
    """Walk the stored audit rows page by page and verify every link of every chain."""
    heads: dict[str, str] = {}
    seen, after = 0, 0
    while True:
        page = await store.read(
            functools.partial(audit_rows.chain, after=after, limit=_VERIFY_PAGE)
        )
        ok, _, broken = verify_rows(page, heads)
        if not ok:
            return False, await store.read(audit_rows.count), broken
        seen += len(page)
        if len(page) < _VERIFY_PAGE:
            return True, seen, None
        after = page[-1]["seq"]


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
    """The rows with ``actor_label`` (the reviewer's name and the device, not a key id) and, for
    a decision made with a key, ``reviewer_id``, ``reviewer_name`` and ``device``."""
    key_ids = sorted({row["actor"][4:] for row in rows if row["actor"].startswith("key:")})
    people = await reviewer_rows.people_of_keys(conn, key_ids) if key_ids else {}
    labels = {key_id: person["label"] for key_id, person in people.items()}
    named = []
    for row in rows:
        kind, _, ref = row["actor"].partition(":")
        person = people.get(ref) if kind == "key" else None
        label = actor_label(row["actor"], labels)
        if person is not None and person["reviewer_name"]:
            label = f"{person['reviewer_name']} ({label})"
        named.append(
            {
                **row,
                "actor_label": label,
                "reviewer_id": person["reviewer_id"] if person else None,
                "reviewer_name": (person["reviewer_name"] or None) if person else None,
                "device": person["label"] if person else None,
            }
        )
    return named


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
