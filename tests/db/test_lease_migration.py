"""Migration 0060 (one lease vocabulary) on both engines: same migration sets, leases survive."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg

from credence.db import lease, pg_migrate
from credence.db.pgstore import PostgresStore
from credence.db.store import Store, migrations, split_statements

RENAME = 60
NOW = "2026-03-01T09:00:00.000000Z"
UNTIL = "2026-03-01T09:00:30.000000Z"
# A running job, the backfill lease and a claimed channel message, written in the old columns.
LEASED_ROWS = (
    "INSERT INTO jobs(id, workflow_id, agent_id, trigger, status, attempts, lease_owner,"
    f" lease_expires_at, heartbeat_at, created_at, updated_at) VALUES ('job_1',"
    f" 'agent-reflection', 'ada', 'manual', 'running', 1, 'wrk_a', '{UNTIL}', '{NOW}',"
    f" '{NOW}', '{NOW}')",
    "INSERT INTO backfill_leases(name, owner, lease_until)"
    f" VALUES ('embeddings', 'rep_a', '{UNTIL}')",
    "INSERT INTO push_channels(id, source, url, url_hash, masked_url, created_at)"
    f" VALUES ('ch', 'admin', 'json://127.0.0.1/', 'h', 'json://…', '{NOW}')",
    "INSERT INTO channel_outbox(id, channel_id, kind, title, body, created_at, expires_at,"
    f" attempts, next_attempt_at, lease_owner, lease_until) VALUES ('msg_1', 'ch', 'test', 't',"
    f" 'b', '{NOW}', '{UNTIL}', 1, '{NOW}', 'wrk_b', '{UNTIL}')",
)


def test_both_engines_ship_the_same_migrations() -> None:
    sqlite = {(version, name) for version, name, _ in migrations()}
    postgres = {(m.version, m.name) for m in pg_migrate.migrations()}
    assert sqlite == postgres
    assert (RENAME, "lease_columns") in sqlite


async def _still_leased(store: Any) -> None:
    """The upgraded rows keep their leases under the new names, and the lease queue reads them."""
    job = await store.fetchone("SELECT lease_owner, lease_until, attempts FROM jobs")
    assert tuple(job) == ("wrk_a", UNTIL, 1)
    backfill = await store.fetchone("SELECT name, lease_owner, lease_until FROM backfill_leases")
    assert tuple(backfill) == ("embeddings", "rep_a", UNTIL)
    message = await store.fetchone("SELECT lease_owner, lease_until FROM channel_outbox")
    assert tuple(message) == ("wrk_b", UNTIL)
    assert await store.read(lambda conn: lease.holds(conn, "jobs", "job_1", "wrk_a", now=NOW))
    assert await store.read(
        lambda conn: lease.holds(conn, "backfill_leases", "embeddings", "rep_a", now=NOW)
    )
    held = await store.read(lambda conn: lease.held_leases(conn, "jobs"))
    assert [(row["id"], row["lease_owner"], row["lease_until"]) for row in held] == [
        ("job_1", "wrk_a", UNTIL)
    ]
    # Not past its lease: nobody else claims the message until it lapses.
    assert (
        await store.write(
            lambda conn: lease.claim(
                conn, "channel_outbox", owner="wrk_c", now=NOW, until=UNTIL, limit=5
            )
        )
        == []
    )


async def test_a_sqlite_database_with_leased_rows_upgrades(tmp_path: Path) -> None:
    path = tmp_path / "v51.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)"
    )
    for version, name, sql in migrations():
        if version < RENAME:
            for statement in split_statements(sql):
                db.execute(statement)
            db.execute("INSERT INTO schema_version VALUES (?, ?, 'then')", (version, name))
    for statement in LEASED_ROWS:
        db.execute(statement)
    db.close()

    store = Store(path)
    await store.open()
    try:
        assert store.schema_version >= RENAME
        columns = {row[1] for row in await store.fetchall("PRAGMA table_info(jobs)")}
        assert "lease_expires_at" not in columns and "lease_until" in columns
        await _still_leased(store)
    finally:
        await store.close()


async def test_a_postgres_database_with_leased_rows_upgrades(pg_url: str) -> None:
    before = [m for m in pg_migrate.migrations() if m.version < RENAME]
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        await pg_migrate.migrate(conn, before)
        for statement in LEASED_ROWS:
            await conn.execute(statement.encode("utf-8"))
    store = PostgresStore(pg_url)
    await store.open()
    try:
        assert store.schema_version >= RENAME
        columns = await store.fetchall(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_name = 'backfill_leases'"
        )
        assert sorted(row[0] for row in columns) == ["lease_owner", "lease_until", "name"]
        await _still_leased(store)
    finally:
        await store.close()
