"""The belief change counter and change log, which let caches in every process follow changes."""

from __future__ import annotations

from credence.db.engine import Connection, one_row

# On PostgreSQL an identity value is taken when a row is inserted but seen only when its
# transaction commits, so a log entry can appear below the highest seq a reader already saw.
# Readers re-read this many seqs below their cursor; a write transaction that stays open while
# more than this many belief changes commit around it is caught by a full version rescan.
PG_REREAD_WINDOW = 1000


BUMP_BELIEF_CHANGES = "UPDATE store_state SET value = value + 1 WHERE name = 'belief_changes'"


async def bump_belief_changes(conn: Connection) -> None:
    """Count a belief change, inside the writing transaction, so other processes notice it."""
    await conn.run(BUMP_BELIEF_CHANGES)


async def belief_changes(conn: Connection) -> int:
    """The store-wide belief change counter (it only grows, in commit order on both engines)."""
    row = await one_row(conn, "SELECT value FROM store_state WHERE name = 'belief_changes'")
    return int(row["value"]) if row is not None else 0


async def log_bounds(conn: Connection) -> tuple[int | None, int]:
    """(lowest seq a reader can still find in the change log, highest seq logged).

    SQLite's AUTOINCREMENT remembers the newest seq even when pruning emptied the log, so an
    empty log there starts just above it. PostgreSQL has only what is committed: an empty log
    gives None (a reader cannot tell what it missed, and rescans).
    """
    if conn.dialect == "sqlite":
        row = await one_row(
            conn,
            "SELECT (SELECT MIN(seq) FROM belief_change_log),"
            " COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'belief_change_log'), 0)",
        )
        last = int(row[1])
        return (row[0] if row[0] is not None else last + 1), last
    row = await one_row(conn, "SELECT MIN(seq), COALESCE(MAX(seq), 0) FROM belief_change_log")
    return row[0], int(row[1])


def reread_window(conn: Connection) -> int:
    """How far below its cursor a reader must look again for entries committed late."""
    return PG_REREAD_WINDOW if conn.dialect == "postgresql" else 0


async def changed_beliefs(
    conn: Connection, agent_id: str, after: int, upto: int
) -> list[tuple[str, int, int]]:
    """(belief id, its newest log seq in the range, its current version) for every belief of
    the agent logged with ``after < seq <= upto``."""
    found = await conn.rows(
        "SELECT l.belief_id, MAX(l.seq), b.version FROM belief_change_log l"
        " JOIN beliefs b ON b.id = l.belief_id"
        " WHERE l.agent_id = ? AND l.seq > ? AND l.seq <= ? GROUP BY l.belief_id, b.version",
        (agent_id, after, upto),
    )
    return [(row[0], int(row[1]), int(row[2])) for row in found]


async def prune_log(conn: Connection, keep: int) -> int:
    """Delete all but the newest ``keep`` change-log entries; returns how many went."""
    return await conn.run(
        "DELETE FROM belief_change_log"
        " WHERE seq <= (SELECT COALESCE(MAX(seq), 0) FROM belief_change_log) - ?",
        (keep,),
    )
