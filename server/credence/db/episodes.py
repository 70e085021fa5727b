"""Store functions for episodes: batch insert, lookup, listing and the shared filter clause."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from credence.db.engine import Connection, one_row, placeholders
from credence.db.records import Record
from credence.models.common import Origin


class EpisodeRecord(Record, frozen=True, kw_only=True):
    """One episodes row, its JSON columns decoded: ``interventions`` are trigger/text objects."""

    JSON_FIELDS = frozenset({"interventions", "untrusted_reasons", "metadata"})

    seq: int
    id: str
    agent_id: str
    session_id: str
    role_label: str | None
    finished_at: str
    summary: str
    interventions: list[dict[str, Any]]
    intervention_text: str
    origin: Origin
    untrusted_reasons: list[str]
    metadata: dict[str, Any]
    redactions: int
    embedding: bytes | None
    embedding_model: str | None
    reflected_at: str | None
    reflected_job: str | None
    created_at: str

    @classmethod
    def inserted(cls, row: dict[str, Any]) -> EpisodeRecord:
        """The record of a row ``insert_episodes`` just wrote. The seq the database gave it is
        not read back (0 here): nothing shown of a new episode carries it."""
        return cls.from_row({"seq": 0, "reflected_job": None, **row})


# Every column the API reads, named: PostgreSQL's episodes also carry ``search_vector``.
COLUMNS = EpisodeRecord.__struct_fields__
SELECT_COLUMNS = EpisodeRecord.columns()
# What an ingest writes: everything but the sequence the database assigns and reflection's marks.
INSERT_COLUMNS = tuple(c for c in COLUMNS if c not in ("seq", "reflected_at", "reflected_job"))
_INSERT = (
    f"INSERT INTO episodes({', '.join(INSERT_COLUMNS)})"
    f" VALUES ({', '.join(':' + c for c in INSERT_COLUMNS)})"
)
# The per-agent ingest lock (two-key advisory lock: namespace "EPIS", hashtext(agent id)) and
# the agent's existence in one round trip.
_LOCK_AND_CHECK = (
    "SELECT pg_advisory_xact_lock(1162889555, hashtext(?)) IS NULL,"
    " EXISTS (SELECT 1 FROM agents WHERE id = ?)"
)


@dataclass(frozen=True, slots=True)
class EpisodeFilter:
    """Which of an agent's episodes a listing or a search may return."""

    since: str | None = None
    reflected: bool | None = None
    include_untrusted: bool = True


def filter_clause(
    agent_id: str, found: EpisodeFilter, *, alias: str = ""
) -> tuple[list[str], list[Any]]:
    """The WHERE conditions (to be AND-ed) and their parameters for one agent and filter."""
    prefix = f"{alias}." if alias else ""
    clauses = [f"{prefix}agent_id = ?"]
    params: list[Any] = [agent_id]
    if found.since is not None:
        clauses.append(f"{prefix}finished_at >= ?")
        params.append(found.since)
    if found.reflected is not None:
        state = "IS NOT NULL" if found.reflected else "IS NULL"
        clauses.append(f"{prefix}reflected_at {state}")
    if not found.include_untrusted:
        clauses.append(f"{prefix}origin = 'clean'")
    return clauses, params


async def agent_exists(conn: Connection, agent_id: str) -> bool:
    """Whether the agent exists."""
    return await conn.one("SELECT 1 FROM agents WHERE id = ?", (agent_id,)) is not None


async def insert_episodes(conn: Connection, agent_id: str, rows: Sequence[dict[str, Any]]) -> bool:
    """Insert the agent's prepared episode rows (keys ``INSERT_COLUMNS``); False: no agent.

    Two round trips: the agent check, then one ``run_many`` (pipelined on PostgreSQL). On
    PostgreSQL the check also takes the agent's ingest lock until commit, so an agent's episode
    seqs become visible in increasing order: the recall cache appends every seq above the
    highest it holds and would never see one that committed late below it.
    """
    if conn.dialect == "postgresql":
        found = await one_row(conn, _LOCK_AND_CHECK, (agent_id, agent_id))
        exists = bool(found[1])
    else:
        exists = await agent_exists(conn, agent_id)
    if not exists:
        return False
    if rows:
        await conn.run_many(_INSERT, rows)
    return True


async def stored_bytes(conn: Connection, agent_id: str) -> int:
    """Bytes of episodes the agent has stored (0 for an unknown agent)."""
    row = await conn.one("SELECT episode_bytes FROM agents WHERE id = ?", (agent_id,))
    return int(row["episode_bytes"]) if row is not None else 0


async def add_stored_bytes(conn: Connection, agent_id: str, added: int) -> None:
    """Count ``added`` more stored bytes for the agent."""
    await conn.run(
        "UPDATE agents SET episode_bytes = episode_bytes + ? WHERE id = ?", (added, agent_id)
    )


async def get_episode(conn: Connection, agent_id: str, episode_id: str) -> EpisodeRecord | None:
    """One episode of the agent, or None."""
    row = await conn.one(
        f"SELECT {SELECT_COLUMNS} FROM episodes WHERE id = ? AND agent_id = ?",
        (episode_id, agent_id),
    )
    return None if row is None else EpisodeRecord.from_row(row)


async def list_episodes(
    conn: Connection, agent_id: str, found: EpisodeFilter, *, after_seq: int | None, limit: int
) -> list[EpisodeRecord]:
    """Up to ``limit`` episodes oldest first, after ``after_seq`` when given."""
    clauses, params = filter_clause(agent_id, found)
    if after_seq is not None:
        clauses.append("seq > ?")
        params.append(after_seq)
    rows = await conn.rows(
        f"SELECT {SELECT_COLUMNS} FROM episodes WHERE {' AND '.join(clauses)} ORDER BY seq LIMIT ?",
        (*params, limit),
    )
    return EpisodeRecord.from_rows(rows)


async def newest_episodes(
    conn: Connection, agent_id: str, found: EpisodeFilter, limit: int
) -> list[EpisodeRecord]:
    """Up to ``limit`` of the agent's newest episodes that pass the filter."""
    clauses, params = filter_clause(agent_id, found)
    rows = await conn.rows(
        f"SELECT {SELECT_COLUMNS} FROM episodes WHERE {' AND '.join(clauses)}"
        " ORDER BY seq DESC LIMIT ?",
        (*params, limit),
    )
    return EpisodeRecord.from_rows(rows)


async def episodes_by_seq(conn: Connection, seqs: Sequence[int]) -> dict[int, EpisodeRecord]:
    """Episodes by seq (missing seqs are left out)."""
    if not seqs:
        return {}
    rows = await conn.rows(
        f"SELECT {SELECT_COLUMNS} FROM episodes WHERE seq IN ({placeholders(len(seqs))})",
        tuple(seqs),
    )
    return {row["seq"]: EpisodeRecord.from_row(row) for row in rows}
