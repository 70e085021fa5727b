"""The stored report facts (migration 0050) follow every write of a belief, on either engine."""

from __future__ import annotations

from pathlib import Path

from credence.db import make_store

PROPOSED = "2026-03-01T10:00:00.000000Z"


async def _facts(store, belief_id: str) -> tuple:
    row = await store.fetchone(
        "SELECT created_day, edited, gate_flags, decision_s FROM beliefs WHERE id = ?",
        (belief_id,),
    )
    return tuple(row)


async def test_day_edit_flags_and_decision_seconds_follow_inserts_and_updates(
    tmp_path: Path, database_url: str | None
) -> None:
    store = make_store(database_url, tmp_path / "credence.sqlite3")
    await store.open()
    try:

        async def seed(conn):
            await conn.run(
                "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('coder', 'Coder',"
                " ?, ?)",
                (PROPOSED, PROPOSED),
            )
            await conn.run(
                "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
                " provenance, review_reasons, created_at, updated_at, version) VALUES"
                " ('b_1', 'coder', 'Split PDFs', 'split pdfs', 'pending', 0.7, 'add', 'clean',"
                " ?, ?, ?, 1)",
                ('["near_duplicate_of:b_x", "contradicts:b_y"]', PROPOSED, PROPOSED),
            )

        await store.write(seed)
        assert await _facts(store, "b_1") == ("2026-03-01", 0, 3, None)

        async def edit_and_keep(conn):
            await conn.run(
                "UPDATE beliefs SET status = 'active', proposed_content = 'Split PDFs',"
                " content = 'Split PDFs over 10MB', review_reasons = '[]',"
                " decided_at = '2026-03-01T11:30:00.000000Z' WHERE id = 'b_1'"
            )

        await store.write(edit_and_keep)
        day, edited, flags, seconds = await _facts(store, "b_1")
        assert (day, edited, flags) == ("2026-03-01", 1, 0)
        assert abs(seconds - 5400.0) < 0.01

        async def reopen(conn):
            await conn.run(
                "UPDATE beliefs SET status = 'pending', decided_at = NULL,"
                " proposed_content = NULL WHERE id = 'b_1'"
            )

        await store.write(reopen)
        assert await _facts(store, "b_1") == ("2026-03-01", 0, 0, None)
    finally:
        await store.close()
