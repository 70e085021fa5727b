"""The audit chain's rows: appends extend the hash chain, reads return plain dicts."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import msgspec

from credence.db.engine import Connection, one_row, placeholders

GENESIS = "0" * 64
# Rows before migration 0046 form one chain across every agent (version 1); rows since form one
# chain per agent (version 2), so appenders for different agents never share a lock.
SINGLE_CHAIN, PER_AGENT_CHAIN = 1, 2
COLUMNS = (
    "seq, belief_id, agent_id, action, actor, at, before_status, after_status, before_hash,"
    " after_hash, version, detail, prev_hash, row_hash, chain_version"
)
# The fields a caller supplies; the chain (seq, prev_hash, row_hash) is the store's to compute.
_FIELDS = (
    "belief_id",
    "agent_id",
    "action",
    "actor",
    "at",
    "before_status",
    "after_status",
    "before_hash",
    "after_hash",
    "version",
    "detail",
)
_NAMED = ", ".join(_FIELDS)
_VALUES = ", ".join(f":{name}" for name in _FIELDS)


class AuditEntry(msgspec.Struct, frozen=True, kw_only=True):
    """What a caller supplies for one audit row; the store links it into the chain."""

    belief_id: str
    agent_id: str
    action: str
    actor: str
    at: str
    before_status: str | None
    after_status: str
    before_hash: str | None
    after_hash: str
    version: int
    detail: str


assert AuditEntry.__struct_fields__ == _FIELDS
# Appends for a statement batch, the chain linked and hashed by the database itself: by the
# ``audit_chain`` trigger on PostgreSQL, by the ``audit_row_hash`` function the SQLite store
# registers on its connection (``sqlite_row_hash``) there, so each row of an executemany sees
# the one before it.
APPEND = {
    "postgresql": f"INSERT INTO audit({_NAMED}) VALUES ({_VALUES})",
    "sqlite": (
        f"INSERT INTO audit(seq, {_NAMED}, prev_hash, row_hash, chain_version)"
        f" SELECT head.seq, {_VALUES}, head.prev,"
        f" audit_row_hash(head.seq, {_VALUES}, head.prev), {PER_AGENT_CHAIN}"
        " FROM (SELECT COALESCE(MAX(seq), 0) + 1 AS seq,"
        " COALESCE((SELECT row_hash FROM audit WHERE agent_id = :agent_id"
        f" AND chain_version = {PER_AGENT_CHAIN} ORDER BY seq DESC LIMIT 1),"
        f" '{GENESIS}') AS prev"
        " FROM audit) AS head"
    ),
}


def sqlite_row_hash(seq: int, *values: Any) -> str:
    """``row_hash`` of (seq, the entry's fields in order, prev_hash), as SQLite calls it."""
    return row_hash(dict(zip(("seq", *_FIELDS, "prev_hash"), (seq, *values), strict=True)))


def row_hash(fields: dict[str, Any]) -> str:
    """Hash of one audit row's fields (including its seq and the previous row's hash).

    PostgreSQL's ``audit_row_hash`` computes the same digest in the database.
    """
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


async def append(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    """Append one row linked to its agent's chain head, inside the caller's write; returns it.

    On PostgreSQL the ``audit_chain`` trigger links and hashes the row under the agent's own
    advisory lock (several replicas append at once; other agents' appenders do not wait) and
    ``RETURNING`` reads the result back. SQLite has one writer, which links and hashes it here
    the same way.
    """
    values = {name: fields[name] for name in _FIELDS}
    values["chain_version"] = PER_AGENT_CHAIN
    if conn.dialect == "postgresql":
        chain = await one_row(
            conn,
            f"INSERT INTO audit({_NAMED}, chain_version) VALUES ({_VALUES}, :chain_version)"
            " RETURNING seq, prev_hash, row_hash",
            values,
        )
        return {
            **values,
            "seq": chain["seq"],
            "prev_hash": chain["prev_hash"],
            "row_hash": chain["row_hash"],
        }
    last = await conn.one("SELECT seq FROM audit ORDER BY seq DESC LIMIT 1")
    head = await conn.one(
        "SELECT row_hash FROM audit WHERE agent_id = ? AND chain_version = ?"
        " ORDER BY seq DESC LIMIT 1",
        (values["agent_id"], PER_AGENT_CHAIN),
    )
    row = {
        **values,
        "seq": (last["seq"] + 1) if last else 1,
        "prev_hash": head["row_hash"] if head else GENESIS,
    }
    row["row_hash"] = row_hash(row)
    await conn.run(
        f"INSERT INTO audit(seq, {_NAMED}, prev_hash, row_hash, chain_version)"
        f" VALUES (:seq, {_VALUES}, :prev_hash, :row_hash, :chain_version)",
        row,
    )
    return row


def chain_of(row: dict[str, Any]) -> str:
    """Which chain a row extends: "" for the single chain of version 1, else its agent's id."""
    version = row.get("chain_version", SINGLE_CHAIN)
    return "" if version == SINGLE_CHAIN else f"agent:{row['agent_id']}"


async def chain(conn: Connection, after: int = 0, limit: int = 10_000) -> list[dict[str, Any]]:
    """Up to ``limit`` rows of the chain with ``seq > after``, in seq order."""
    found = await conn.rows(
        f"SELECT {COLUMNS} FROM audit WHERE seq > ? ORDER BY seq LIMIT ?", (after, limit)
    )
    return [dict(row) for row in found]


async def count(conn: Connection) -> int:
    """How many rows the chain holds."""
    row = await one_row(conn, "SELECT COUNT(*) FROM audit")
    return int(row[0])


async def trail(conn: Connection, belief_id: str) -> list[dict[str, Any]]:
    """One belief's rows, oldest first."""
    found = await conn.rows(
        f"SELECT {COLUMNS} FROM audit WHERE belief_id = ? ORDER BY seq", (belief_id,)
    )
    return [dict(row) for row in found]


async def decisions(
    conn: Connection, *, agent_ids: Sequence[str] | None, limit: int, before: int | None
) -> list[dict[str, Any]]:
    """Up to ``limit`` rows that are not proposals, newest first, below seq ``before``, each
    with its belief's current ``content``."""
    clauses = ["a.action != 'proposed'"]
    params: list[Any] = []
    if agent_ids is not None:
        clauses.append(f"a.agent_id IN ({placeholders(len(agent_ids))})")
        params.extend(agent_ids)
    if before is not None:
        clauses.append("a.seq < ?")
        params.append(before)
    named = ", ".join(f"a.{column.strip()}" for column in COLUMNS.split(","))
    found = await conn.rows(
        f"SELECT {named}, b.content FROM audit a JOIN beliefs b ON b.id = a.belief_id"
        f" WHERE {' AND '.join(clauses)} ORDER BY a.seq DESC LIMIT ?",
        (*params, limit),
    )
    return [dict(row) for row in found]


async def key_labels(conn: Connection, key_ids: Sequence[str]) -> dict[str, str]:
    """The label of each API key named (a deleted key is simply absent)."""
    labels: dict[str, str] = {}
    for start in range(0, len(key_ids), 500):
        chunk = list(key_ids[start : start + 500])
        found = await conn.rows(
            f"SELECT id, label FROM api_keys WHERE id IN ({placeholders(len(chunk))})",
            tuple(chunk),
        )
        labels.update({row["id"]: row["label"] for row in found})
    return labels
