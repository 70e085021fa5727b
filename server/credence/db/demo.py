"""What `credence demo` asks the store to load its example data only once."""

from __future__ import annotations

import json

from credence.db.engine import Connection, one_row


async def demo_episode_keys(conn: Connection, agent_id: str) -> set[str]:
    """The ``demo_key`` metadata values of the agent's stored episodes.

    Read in Python rather than with json_extract / ``->>``, so one statement serves both engines;
    the demo loads a few dozen episodes.
    """
    rows = await conn.rows("SELECT metadata FROM episodes WHERE agent_id = ?", (agent_id,))
    found: set[str] = set()
    for row in rows:
        metadata = json.loads(row["metadata"]) if row["metadata"] else {}
        key = metadata.get("demo_key") if isinstance(metadata, dict) else None
        if isinstance(key, str):
            found.add(key)
    return found


async def belief_exists(conn: Connection, agent_id: str, content: str) -> bool:
    """True when the agent has a belief with exactly this content, in any status."""
    row = await conn.one(
        "SELECT 1 FROM beliefs WHERE agent_id = ? AND content = ?", (agent_id, content)
    )
    return row is not None


async def pending_beliefs(conn: Connection) -> int:
    """How many beliefs wait for review, over every agent."""
    row = await one_row(conn, "SELECT COUNT(*) AS n FROM beliefs WHERE status = 'pending'")
    return int(row["n"])
