"""Store functions for the read path: recall's counters and text rankings, context's beliefs."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import msgspec
import psycopg

from credence.db.engine import Connection, Row, StoreError, one_row
from credence.db.episodes import EpisodeFilter, filter_clause

P = ParamSpec("P")
T = TypeVar("T")


class SearchFailed(StoreError):
    """The full-text index could not answer (corrupt FTS5 index, a query it refused)."""


def _search(func: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Turn either engine's query error into SearchFailed; a lost connection passes through."""

    @functools.wraps(func)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await func(*args, **kwargs)
        except psycopg.OperationalError:
            raise  # the store maps it to StoreUnavailable
        except (sqlite3.Error, psycopg.Error) as exc:
            raise SearchFailed(str(exc)) from exc

    return wrapper


def tsquery_text(terms: Sequence[str]) -> str:
    """The websearch_to_tsquery input that ORs ``terms``, as FTS5's expression does.

    The terms are letters and digits only; NUL is removed anyway, since PostgreSQL text
    cannot hold it.
    """
    return " or ".join(term.replace("\x00", "") for term in terms)


# -- recall: the per-agent embedding matrix ------------------------------------------------


@_search
async def counters(conn: Connection, agent_id: str) -> tuple[int, int, int]:
    """(max episode seq of the agent, reflection counter, reload counter) in one statement.

    The reload counter moves when episodes are deleted or re-embedded (both only grow).
    """
    row = await one_row(
        conn,
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM episodes WHERE agent_id = ?),"
        " (SELECT value FROM store_state WHERE name = 'episode_reflections'),"
        " (SELECT SUM(value) FROM store_state"
        " WHERE name IN ('episode_deletions', 'episode_reembeds'))",
        (agent_id,),
    )
    return int(row[0]), int(row[1] or 0), int(row[2] or 0)


@_search
async def matrix_rows(conn: Connection, agent_id: str, after: int, upto: int) -> list[Row]:
    """(seq, finished_at, origin, reflected, embedding) of the agent's episodes in a seq range."""
    return await conn.rows(
        "SELECT seq, finished_at, origin,"
        " CASE WHEN reflected_at IS NULL THEN 0 ELSE 1 END AS reflected, embedding"
        " FROM episodes WHERE agent_id = ? AND seq > ? AND seq <= ? ORDER BY seq",
        (agent_id, after, upto),
    )


@_search
async def unreflected_seqs(conn: Connection, agent_id: str) -> list[int]:
    """Seqs of the agent's episodes below the reflection watermark."""
    rows = await conn.rows(
        "SELECT seq FROM episodes WHERE agent_id = ? AND reflected_at IS NULL", (agent_id,)
    )
    return [int(row[0]) for row in rows]


# -- recall: text rankings -------------------------------------------------------------------


@_search
async def fts_top(conn: Connection, expression: str, limit: int) -> list[int]:
    """SQLite: seqs of the best FTS5 matches over every agent's episodes, best first."""
    rows = await conn.rows(
        "SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ? ORDER BY rank LIMIT ?",
        (expression, limit),
    )
    return [int(row[0]) for row in rows]


@_search
async def fts_within(
    conn: Connection, expression: str, seqs: Sequence[int], limit: int
) -> list[int]:
    """SQLite: the best FTS5 matches among ``seqs``, best first."""
    rows = await conn.rows(
        "SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ?"
        " AND rowid IN (SELECT value FROM json_each(?)) ORDER BY bm25(episodes_fts) LIMIT ?",
        (expression, json.dumps(list(seqs)), limit),
    )
    return [int(row[0]) for row in rows]


@_search
async def fts_filtered(
    conn: Connection,
    expression: str,
    agent_id: str,
    found: EpisodeFilter,
    max_seq: int,
    limit: int,
) -> list[int]:
    """SQLite: the best FTS5 matches among the agent's filtered episodes up to ``max_seq``."""
    clauses, params = filter_clause(agent_id, found, alias="e")
    rows = await conn.rows(
        "SELECT e.seq FROM episodes_fts JOIN episodes e ON e.seq = episodes_fts.rowid"
        f" WHERE episodes_fts MATCH ? AND {' AND '.join(clauses)} AND e.seq <= ?"
        " ORDER BY bm25(episodes_fts) LIMIT ?",
        (expression, *params, max_seq, limit),
    )
    return [int(row[0]) for row in rows]


@_search
async def tsvector_ranking(
    conn: Connection,
    terms: Sequence[str],
    agent_id: str,
    found: EpisodeFilter,
    max_seq: int,
    limit: int,
) -> list[int]:
    """PostgreSQL: the best full-text matches among the agent's filtered episodes, best first.

    The GIN-indexed ``search_vector`` is matched with ``websearch_to_tsquery`` (which accepts
    any text) and ranked by ``ts_rank`` with length normalisation, as BM25 normalises.
    """
    clauses, params = filter_clause(agent_id, found, alias="e")
    rows = await conn.rows(
        "SELECT e.seq FROM episodes e, websearch_to_tsquery('english', ?) q"
        f" WHERE e.search_vector @@ q AND {' AND '.join(clauses)} AND e.seq <= ?"
        " ORDER BY ts_rank(e.search_vector, q, 1) DESC, e.seq DESC LIMIT ?",
        (tsquery_text(terms), *params, max_seq, limit),
    )
    return [int(row[0]) for row in rows]


# -- context: servable beliefs ------------------------------------------------------------------

_BELIEF_COLUMNS = "id, content, confidence, created_at, updated_at, provenance"
_SERVABLE = (
    f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE agent_id = ? AND status = 'active'"
    " AND provenance IN ('clean', 'owner', 'unsourced', 'imported')"
)


async def agent_settings_and_changes(
    conn: Connection, agent_id: str
) -> tuple[Any, int, int] | None:
    """(agent settings, decoded; store-wide belief change counter; episode state) in one read.

    The episode state moves whenever the agent's episodes do: its highest seq plus the
    counters of reflections, deletions and re-embeddings (all only grow). None: no agent.
    """
    row = await conn.one(
        "SELECT a.settings AS settings,"
        " (SELECT value FROM store_state WHERE name = 'belief_changes') AS changes,"
        " (SELECT COALESCE(MAX(seq), 0) FROM episodes WHERE agent_id = a.id)"
        " + (SELECT COALESCE(SUM(value), 0) FROM store_state WHERE name IN"
        " ('episode_reflections', 'episode_deletions', 'episode_reembeds')) AS episodes"
        " FROM agents a WHERE a.id = ?",
        (agent_id,),
    )
    if row is None:
        return None
    return msgspec.json.decode(row["settings"]), int(row["changes"]), int(row["episodes"])


async def belief_changes(conn: Connection) -> int:
    """The store-wide belief change counter (every belief change bumps it)."""
    row = await conn.one("SELECT value FROM store_state WHERE name = 'belief_changes'")
    if row is None:
        raise StoreError("store_state lacks belief_changes (migrations seed it)")
    return int(row[0])


async def servable_beliefs(conn: Connection, agent_id: str, role: str | None) -> list[Row]:
    """Active beliefs of a servable provenance for the role (None: the general ones only)."""
    if role is None:
        return await conn.rows(_SERVABLE + " AND role IS NULL", (agent_id,))
    return await conn.rows(_SERVABLE + " AND (role IS NULL OR role = ?)", (agent_id, role))


async def counter_and_servable_beliefs(
    conn: Connection, agent_id: str, role: str | None
) -> tuple[int, list[Any]]:
    """The change counter, then the servable beliefs: rows are at least that fresh."""
    counter = await belief_changes(conn)
    return counter, await servable_beliefs(conn, agent_id, role)


async def active_embeddings(conn: Connection, agent_id: str) -> list[Row]:
    """(id, embedding) of the agent's active beliefs that have an embedding."""
    return await conn.rows(
        "SELECT id, embedding FROM beliefs WHERE agent_id = ? AND status = 'active'"
        " AND embedding IS NOT NULL",
        (agent_id,),
    )
