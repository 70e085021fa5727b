"""Migration 0066: the report's and the metrics' belief indexes hold only the rows they serve."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from credence.db import make_store, stats
from credence.db import report as rows_of

NOW = datetime(2026, 3, 20, tzinfo=UTC)
SINCE = "2026-03-01T00:00:00.000000Z"
STAMP = "2026-03-10T10:00:00.000000Z"

# index name -> the predicate each engine reports for it
PARTIAL = {
    "beliefs_report_kept": "status = 'active'",
    "beliefs_report_confidence": "status = 'active'",
    "beliefs_report_deciders": "decided_at IS NOT NULL",
    "beliefs_pending_age": "status = 'pending'",
}


async def _seed(conn) -> None:
    await conn.run(
        "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('coder', 'Coder', ?, ?)",
        (STAMP, STAMP),
    )
    for number, (status, decided_at) in enumerate(
        [("pending", None), ("active", STAMP), ("forgotten", STAMP), ("active", STAMP)]
    ):
        await conn.run(
            "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
            " provenance, review_reasons, created_at, updated_at, decided_at, version) VALUES"
            " (?, 'coder', 'A rule', ?, ?, 0.7, 'add', 'clean', '[]', ?, ?, ?, 1)",
            (f"b_{number}", f"a rule {number}", status, STAMP, STAMP, decided_at),
        )


async def test_the_four_indexes_are_partial_on_either_engine(
    tmp_path: Path, database_url: str | None
) -> None:
    store = make_store(database_url, tmp_path / "credence.sqlite3")
    await store.open()
    try:
        if database_url is None:
            sql = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name = ?"
        else:
            sql = "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ?"
        for name, predicate in PARTIAL.items():
            row = await store.fetchone(sql, (name,))
            assert row is not None, name
            definition = " ".join(str(row[1]).replace("(", " ").replace(")", " ").split())
            assert f"WHERE {predicate}" in definition.replace("::text", ""), definition
    finally:
        await store.close()


async def test_the_report_and_metrics_reads_are_served_by_them_on_sqlite(tmp_path: Path) -> None:
    """SQLite has no statistics, so the planner's choice is checked on the queries as they run."""
    store = make_store(None, tmp_path / "credence.sqlite3")
    await store.open()
    try:
        await store.write(_seed)
        statements: list[str] = []

        async def report_then_explain(conn) -> list[str]:
            raw = conn.raw._conn
            raw.set_trace_callback(statements.append)
            try:
                count, _ = await rows_of.unused(conn, "coder", SINCE)
                assert count == 2
                assert [row["n"] for row in await rows_of.deciders(conn, "coder", SINCE)] == [3]
                await rows_of.fading_candidates(conn, "coder", 0.3, [(0.5, SINCE)])
                snapshot = await stats.snapshot(conn, NOW)
                assert snapshot.pending_total == 1
            finally:
                raw.set_trace_callback(None)
            reads = [sql for sql in statements if "FROM beliefs WHERE" in sql]
            return [
                detail
                for sql in reads
                for *_, detail in raw.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
            ]

        plans = await store.read(report_then_explain)
        assert not [line for line in plans if line.startswith("SCAN beliefs")], plans
        used = {name for name in PARTIAL if any(f"INDEX {name} " in line for line in plans)}
        assert used == set(PARTIAL), plans
    finally:
        await store.close()
