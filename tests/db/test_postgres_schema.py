"""The PostgreSQL schema on a real throwaway server: migrations, triggers, full-text search."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable

import psycopg
import pytest
from harness.pg import PostgresServer, PostgresUnavailable, refuse_or_skip
from psycopg import errors
from psycopg.rows import dict_row

from credence.db import pg_migrate
from credence.db.pg_migrate import Migration, MigrationError
from credence.db.store import migrations as sqlite_migrations
from credence.memory.lifecycle import audit

NOW = "2026-12-01T20:00:00.000Z"
HOSTILE = [
    'quote " and backslash \\ and slash /',
    "line\nbreak\ttab\rreturn\x08\x0c",
    "control \x01\x1f and del \x7f",
    "ünïcødé — 漢字 😀 \u2028 \u2029",
    "",
]


async def connect(url: str) -> psycopg.AsyncConnection:
    """An autocommit connection, so one refused statement does not poison the next."""
    return await psycopg.AsyncConnection.connect(url, autocommit=True)


@pytest.fixture
async def open_conn() -> AsyncIterator[Callable[[str], Awaitable[psycopg.AsyncConnection]]]:
    """Opens further connections for a test; all are closed after it, whatever happened."""
    opened: list[psycopg.AsyncConnection] = []

    async def opener(url: str) -> psycopg.AsyncConnection:
        opened.append(await connect(url))
        return opened[-1]

    yield opener
    for conn in opened:
        await conn.close()


@pytest.fixture
async def db(pg_migrated_url: str) -> AsyncIterator[psycopg.AsyncConnection]:
    """A connection to a database with every PostgreSQL migration applied."""
    conn = await connect(pg_migrated_url)
    yield conn
    await conn.close()


async def scalar(conn: psycopg.AsyncConnection, query: str, params: tuple = ()) -> object:
    cursor = await conn.execute(query, params)
    row = await cursor.fetchone()
    return row[0] if row else None


async def add_agent(conn: psycopg.AsyncConnection, agent_id: str = "a1") -> None:
    await conn.execute(
        "INSERT INTO agents(id, name, created_at, updated_at) VALUES (%s, %s, %s, %s)",
        (agent_id, agent_id, NOW, NOW),
    )


async def add_belief(
    conn: psycopg.AsyncConnection,
    belief_id: str,
    *,
    status: str = "pending",
    provenance: str = "clean",
    content: str = "prefers tabs",
) -> None:
    await conn.execute(
        "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
        " provenance, created_at, updated_at)"
        " VALUES (%s, 'a1', %s, %s, %s, 0.7, 'add', %s, %s, %s)",
        (belief_id, content, content.lower(), status, provenance, NOW, NOW),
    )


# --- migrations -------------------------------------------------------------------------------


async def test_migrations_apply_once_and_are_idempotent(pg_url: str) -> None:
    shipped = [migration.version for migration in pg_migrate.migrations()]
    async with await connect(pg_url) as conn:
        assert await pg_migrate.migrate(conn) == shipped
        assert await pg_migrate.migrate(conn) == []
        cursor = await conn.execute("SELECT version, checksum FROM schema_migrations ORDER BY 1")
        recorded = await cursor.fetchall()
        state = await pg_migrate.status(conn)
    assert recorded == [(m.version, m.checksum) for m in pg_migrate.migrations()]
    assert state.pending == [] and state.unknown == [] and state.applied == shipped


async def test_every_sqlite_migration_has_a_postgres_twin_with_the_same_tables() -> None:
    sqlite_versions = {version for version, _, _ in sqlite_migrations()}
    assert sqlite_versions <= {m.version for m in pg_migrate.migrations()}


def _sqlite_with(versions: set[int]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    for version, _, script in sqlite_migrations():
        if version in versions:
            conn.executescript(script)
    return conn


def _sqlite_schema(versions: set[int]) -> dict[str, dict[str, tuple[str, bool]]]:
    conn = _sqlite_with(versions)
    names = [
        row[0]
        for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not row[0].startswith("sqlite_") and "_fts" not in row[0]
    ]
    family = {"TEXT": "text", "INTEGER": "integer", "REAL": "real", "BLOB": "blob"}
    schema = {
        name: {
            col[1]: (family[col[2]], bool(col[3]) or bool(col[5]))
            for col in conn.execute(f"PRAGMA table_info({name})")
        }
        for name in names
    }
    conn.close()
    return schema


async def test_postgres_tables_match_the_sqlite_tables_column_for_column(pg_url: str) -> None:
    versions = {version for version, _, _ in sqlite_migrations()}
    family = {
        "text": "text",
        "integer": "integer",
        "bigint": "integer",
        "double precision": "real",
        "bytea": "blob",
    }
    async with await connect(pg_url) as conn:
        twins = [m for m in pg_migrate.migrations() if m.version in versions]
        await pg_migrate.migrate(conn, twins)
        cursor = await conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable = 'NO'"
            " FROM information_schema.columns WHERE table_schema = 'public'"
            " AND table_name <> 'schema_migrations' AND data_type <> 'tsvector'"
        )
        postgres: dict[str, dict[str, tuple[str, bool]]] = {}
        for table, column, kind, not_null in await cursor.fetchall():
            postgres.setdefault(table, {})[column] = (family[kind], not_null)
    expected = _sqlite_schema(versions)
    # SQLite's FTS5 bookkeeping (belief_text maps a text key to an FTS rowid) has no twin: the
    # tsvector columns index the rows themselves.
    expected.pop("belief_text", None)
    assert postgres == expected


async def test_postgres_has_every_sqlite_index_and_trigger_by_name(pg_url: str) -> None:
    versions = {version for version, _, _ in sqlite_migrations()}
    conn = _sqlite_with(versions)
    # FTS5's own triggers and the belief_text rowid map are replaced by generated tsvectors.
    expected = {
        (kind, name)
        for kind, name, table in conn.execute("SELECT type, name, tbl_name FROM sqlite_master")
        if kind in ("index", "trigger")
        and not name.startswith("sqlite_autoindex")
        and "_fts" not in name
        and table != "belief_text"
    }
    conn.close()
    async with await connect(pg_url) as pg:
        await pg_migrate.migrate(pg, [m for m in pg_migrate.migrations() if m.version in versions])
        cursor = await pg.execute(
            "SELECT 'index', indexname FROM pg_indexes WHERE schemaname = 'public'"
            " UNION SELECT 'trigger', tgname FROM pg_trigger WHERE NOT tgisinternal"
        )
        postgres = set(await cursor.fetchall())
    assert expected - postgres == set()


async def test_postgres_checks_allow_the_same_value_sets_as_sqlite(pg_url: str) -> None:
    versions = {version for version, _, _ in sqlite_migrations()}
    conn = _sqlite_with(versions)
    expected = {
        (table, column): sorted(re.findall(r"'([^']*)'", values))
        for table, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        if sql and "_fts" not in table
        for column, values in re.findall(r"(\w+) IN \(([^)]*)\)", sql)
    }
    conn.close()
    async with await connect(pg_url) as pg:
        await pg_migrate.migrate(pg, [m for m in pg_migrate.migrations() if m.version in versions])
        cursor = await pg.execute(
            "SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE contype = 'c' AND conrelid <> 0"
        )
        postgres = {
            (table, column): sorted(re.findall(r"'([^']*)'::text", values))
            for table, definition in await cursor.fetchall()
            for column, values in re.findall(r"\((\w+) = ANY \(ARRAY\[([^\]]*)\]\)\)", definition)
        }
    assert len(expected) >= 14
    assert postgres == expected


async def test_concurrent_runners_take_turns(open_conn, pg_url: str) -> None:
    holder = await open_conn(pg_url)
    await holder.execute("SELECT pg_advisory_lock(%s)", (pg_migrate.MIGRATION_LOCK_KEY,))
    runners = [await open_conn(pg_url) for _ in range(2)]
    tasks = [asyncio.create_task(pg_migrate.migrate(conn)) for conn in runners]
    try:
        for _ in range(200):
            waiting = await scalar(
                holder,
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
            )
            if waiting == 2:
                break
            await asyncio.sleep(0.02)
        assert waiting == 2, "both runners should be waiting for the migration lock"
        assert await scalar(holder, "SELECT to_regclass('schema_migrations')") is None
        await holder.execute("SELECT pg_advisory_unlock(%s)", (pg_migrate.MIGRATION_LOCK_KEY,))
    finally:
        results = await asyncio.gather(*tasks, return_exceptions=True)
    shipped = [m.version for m in pg_migrate.migrations()]
    assert sorted(results, key=len) == [[], shipped]
    assert await scalar(holder, "SELECT count(*) FROM schema_migrations") == len(shipped)


def test_two_processes_migrating_at_once_apply_everything_once(pg_url: str) -> None:
    command = [sys.executable, "-m", "credence.db.pg_migrate", pg_url]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [proc.communicate(timeout=60)[0] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0]
    applied = sorted(re.findall(r"applied (\d+)", "".join(outputs)))
    assert applied == sorted(f"{m.version:04d}" for m in pg_migrate.migrations())
    check = subprocess.run([*command, "--check"], capture_output=True, text=True, check=False)
    assert check.returncode == 0 and check.stdout == ""


def test_check_lists_pending_migrations_and_exits_1(pg_url: str) -> None:
    command = [sys.executable, "-m", "credence.db.pg_migrate", pg_url, "--check"]
    check = subprocess.run(command, capture_output=True, text=True, check=False)
    assert check.returncode == 1
    assert "pending 0001_core" in check.stdout


async def test_a_failing_migration_rolls_back_whole(pg_url: str) -> None:
    shipped = [
        Migration(1, "good", "CREATE TABLE kept (x int);"),
        Migration(2, "bad", "CREATE TABLE half (x int); SELECT 1 / 0;"),
    ]
    async with await connect(pg_url) as conn:
        with pytest.raises(errors.DivisionByZero):
            await pg_migrate.migrate(conn, shipped)
        assert await scalar(conn, "SELECT to_regclass('kept') IS NOT NULL") is True
        assert await scalar(conn, "SELECT to_regclass('half')") is None
        assert await scalar(conn, "SELECT array_agg(version) FROM schema_migrations") == [1]
        # The lock was released despite the failure: a later runner is not blocked.
        assert await scalar(
            conn, "SELECT pg_try_advisory_lock(%s)", (pg_migrate.MIGRATION_LOCK_KEY,)
        )


async def test_an_applied_migration_that_changed_is_refused(pg_url: str) -> None:
    async with await connect(pg_url) as conn:
        await pg_migrate.migrate(conn, [Migration(1, "one", "CREATE TABLE t1 (x int);")])
        with pytest.raises(MigrationError, match="changed after it was applied"):
            await pg_migrate.migrate(conn, [Migration(1, "one", "CREATE TABLE t2 (x int);")])


async def test_a_transactional_connection_is_given_back_as_it_came(pg_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(pg_url) as conn:
        assert await pg_migrate.migrate(conn, [Migration(1, "one", "CREATE TABLE t1 (x int);")])
        assert conn.autocommit is False
        await conn.execute("INSERT INTO t1 VALUES (1)")
        await conn.rollback()
        assert await scalar(conn, "SELECT count(*) FROM t1") == 0


async def test_status_names_versions_this_code_does_not_know(pg_url: str) -> None:
    shipped = [Migration(1, "one", "SELECT 1;")]
    async with await connect(pg_url) as conn:
        await pg_migrate.migrate(conn, [*shipped, Migration(99, "future", "SELECT 1;")])
        state = await pg_migrate.status(conn, shipped)
    assert (state.applied, state.pending, state.unknown) == ([1, 99], [], [99])


# --- audit chain ------------------------------------------------------------------------------


async def insert_audit(conn: psycopg.AsyncConnection, text: str, before: str | None) -> None:
    """An audit row as a store would send it on PostgreSQL: no seq, prev_hash or row_hash."""
    await conn.execute(
        "INSERT INTO audit(belief_id, agent_id, action, actor, at, before_status, after_status,"
        " before_hash, after_hash, version, detail) VALUES"
        " (%s, 'a1', 'kept', %s, %s, %s, 'active', %s, %s, 2, %s)",
        (f"b-{text[:8]}", f"actor {text}", NOW, before, None, audit.content_hash(text), text),
    )


async def audit_rows(conn: psycopg.AsyncConnection) -> list[dict]:
    cursor = conn.cursor(row_factory=dict_row)
    await cursor.execute("SELECT * FROM audit ORDER BY seq")
    return await cursor.fetchall()


async def test_the_database_chains_audit_rows_as_memory_audit_verifies(db) -> None:
    for index, text in enumerate(HOSTILE):
        await insert_audit(db, text, None if index % 2 else "pending")
    rows = await audit_rows(db)
    assert [row["seq"] for row in rows] == list(range(1, len(HOSTILE) + 1))
    assert rows[0]["prev_hash"] == audit.GENESIS
    assert all(row["row_hash"] == audit.row_hash(row) for row in rows)
    assert audit.verify_rows(rows) == (True, len(HOSTILE), None)


async def test_rows_hashed_by_memory_audit_are_accepted_and_forgeries_refused(db) -> None:
    await insert_audit(db, "first", None)
    head = (await audit_rows(db))[-1]
    fields = {
        "seq": head["seq"] + 1,
        "belief_id": "b2",
        "agent_id": "a1",
        "action": "forgotten",
        "actor": "reviewer",
        "at": NOW,
        "before_status": "active",
        "after_status": "forgotten",
        "before_hash": None,
        "after_hash": audit.content_hash("x"),
        "version": 3,
        "detail": "why",
        "prev_hash": head["row_hash"],
    }
    columns = ", ".join([*fields, "row_hash"])
    values = ", ".join(["%s"] * (len(fields) + 1))
    insert = f"INSERT INTO audit({columns}) VALUES ({values})"
    forged = {**fields, "detail": "rewritten"}
    with pytest.raises(errors.CheckViolation, match="row_hash does not match"):
        await db.execute(insert, (*forged.values(), audit.row_hash(fields)))
    stale = {**fields, "prev_hash": audit.GENESIS}
    with pytest.raises(errors.CheckViolation, match="prev_hash does not link"):
        await db.execute(insert, (*stale.values(), audit.row_hash(stale)))
    await db.execute(insert, (*fields.values(), audit.row_hash(fields)))
    assert audit.verify_rows(await audit_rows(db)) == (True, 2, None)


async def test_concurrent_appenders_keep_one_unbroken_chain(
    db, open_conn, pg_migrated_url: str
) -> None:
    writers = [await open_conn(pg_migrated_url) for _ in range(3)]

    async def append_many(conn: psycopg.AsyncConnection, name: str) -> None:
        for index in range(15):
            async with conn.transaction():
                await insert_audit(conn, f"{name}-{index}", "pending")

    await asyncio.gather(*(append_many(conn, f"w{i}") for i, conn in enumerate(writers)))
    rows = await audit_rows(db)
    assert [row["seq"] for row in rows] == list(range(1, 46))
    assert audit.verify_rows(rows) == (True, 45, None)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit SET detail = 'rewritten'",
        "DELETE FROM audit",
        "TRUNCATE audit",
    ],
)
async def test_audit_rows_cannot_be_changed_or_removed(db, statement: str) -> None:
    await insert_audit(db, "kept", None)
    before = await audit_rows(db)
    with pytest.raises(errors.RestrictViolation, match="append-only"):
        await db.execute(statement)
    assert await audit_rows(db) == before


# --- beliefs ----------------------------------------------------------------------------------


async def test_an_untrusted_belief_cannot_be_inserted_active(db) -> None:
    await add_agent(db)
    with pytest.raises(errors.CheckViolation, match="untrusted belief cannot be active"):
        await add_belief(db, "b1", status="active", provenance="untrusted")
    assert await scalar(db, "SELECT count(*) FROM beliefs") == 0


async def test_keep_of_an_untrusted_belief_is_refused_but_an_owner_edit_activates(db) -> None:
    await add_agent(db)
    await add_belief(db, "b1", provenance="untrusted")
    with pytest.raises(errors.CheckViolation, match="untrusted belief cannot be active"):
        await db.execute("UPDATE beliefs SET status = 'active' WHERE id = 'b1'")
    assert await scalar(db, "SELECT status FROM beliefs WHERE id = 'b1'") == "pending"
    await db.execute(
        "UPDATE beliefs SET status = 'active', provenance = 'owner', content = 'edited'"
        " WHERE id = 'b1'"
    )
    assert await scalar(db, "SELECT status FROM beliefs WHERE id = 'b1'") == "active"
    await add_belief(db, "b2", provenance="clean")
    await db.execute("UPDATE beliefs SET status = 'active' WHERE id = 'b2'")
    assert await scalar(db, "SELECT status FROM beliefs WHERE id = 'b2'") == "active"


async def test_the_change_log_is_fed_by_the_columns_the_gate_reads(db) -> None:
    await add_agent(db)
    await add_belief(db, "b1")
    await db.execute("UPDATE beliefs SET injection_count = injection_count + 1 WHERE id = 'b1'")
    await db.execute("UPDATE beliefs SET content = 'prefers spaces' WHERE id = 'b1'")
    await db.execute("UPDATE beliefs SET version = version + 1 WHERE id = 'b1'")
    cursor = await db.execute("SELECT agent_id, belief_id FROM belief_change_log ORDER BY seq")
    assert await cursor.fetchall() == [("a1", "b1")] * 3


async def test_belief_checks_refuse_values_outside_their_sets(db) -> None:
    await add_agent(db)
    with pytest.raises(errors.CheckViolation):
        await add_belief(db, "b1", status="invented")
    with pytest.raises(errors.CheckViolation):
        await add_belief(db, "b1", provenance="invented")
    assert await scalar(db, "SELECT count(*) FROM beliefs") == 0


async def test_a_superseded_belief_names_its_superseder_and_feeds_the_change_log(db) -> None:
    await add_agent(db)
    await add_belief(db, "old", status="active")
    await add_belief(db, "new", status="active")
    with pytest.raises(errors.CheckViolation, match="beliefs_superseded_check"):
        await db.execute("UPDATE beliefs SET status = 'superseded' WHERE id = 'old'")
    with pytest.raises(errors.ForeignKeyViolation):
        await db.execute(
            "UPDATE beliefs SET status = 'superseded', superseded_by = 'nobody' WHERE id = 'old'"
        )
    await db.execute("DELETE FROM belief_change_log")
    await db.execute(
        "UPDATE beliefs SET status = 'superseded', superseded_by = 'new' WHERE id = 'old'"
    )
    await db.execute("UPDATE beliefs SET superseded_by = 'new' WHERE id = 'old'")
    cursor = await db.execute("SELECT belief_id FROM belief_change_log ORDER BY seq")
    assert await cursor.fetchall() == [("old",), ("old",)]


async def test_an_unsourced_belief_may_be_kept(db) -> None:
    await add_agent(db)
    await add_belief(db, "b1", provenance="unsourced")
    await db.execute("UPDATE beliefs SET status = 'active' WHERE id = 'b1'")
    assert await scalar(db, "SELECT status FROM beliefs WHERE id = 'b1'") == "active"


# --- episodes ---------------------------------------------------------------------------------


async def add_episode(conn: psycopg.AsyncConnection, episode_id: str, summary: str) -> None:
    await conn.execute(
        "INSERT INTO episodes(id, agent_id, session_id, finished_at, summary, intervention_text,"
        " origin, created_at) VALUES (%s, 'a1', 's1', %s, %s, %s, 'clean', %s)",
        (episode_id, NOW, summary, "user corrected the indentation", NOW),
    )


SEARCH = (
    "SELECT id FROM episodes WHERE search_vector @@ websearch_to_tsquery('english', %s)"
    " ORDER BY ts_rank_cd(search_vector, websearch_to_tsquery('english', %s)) DESC, seq"
)


async def test_full_text_search_stems_and_follows_updates(db) -> None:
    await add_agent(db)
    await add_episode(db, "e1", "The agent was running the migrations")
    await add_episode(db, "e2", "Deploy notes for the weekend")
    found = await (await db.execute(SEARCH, ("runs migration", "runs migration"))).fetchall()
    assert found == [("e1",)]
    assert await (await db.execute(SEARCH, ("indentation",) * 2)).fetchall() == [("e1",), ("e2",)]
    await db.execute("UPDATE episodes SET summary = 'weekend plans' WHERE id = 'e1'")
    assert await (await db.execute(SEARCH, ("migrations",) * 2)).fetchall() == []


@pytest.mark.parametrize(
    "text",
    [
        '"unterminated quote',
        "foo & | ! bar",
        "):*( <-> <2> !!",
        "-",
        "OR",
        "or - or",
        "'; DROP TABLE episodes; --",
        "\\x \\\\ %s %(name)s",
        "ünïcødé 😀",
        "",
        "   ",
        "a" * 5000,
    ],
)
async def test_hostile_search_text_never_errors(db, text: str) -> None:
    await add_agent(db)
    await add_episode(db, "e1", "drop table episodes or not")
    found = await (await db.execute(SEARCH, (text, text))).fetchall()
    assert found in ([], [("e1",)])
    assert await scalar(db, "SELECT count(*) FROM episodes") == 1


async def test_episode_counters_follow_reflection_and_deletion(db) -> None:
    await add_agent(db)
    await add_episode(db, "e1", "one")
    await add_episode(db, "e2", "two")
    await db.execute("UPDATE episodes SET reflected_at = %s", (NOW,))
    await db.execute("UPDATE episodes SET reflected_at = %s", (NOW,))  # unchanged: no bump
    await db.execute("DELETE FROM episodes WHERE id = 'e1'")
    cursor = await db.execute("SELECT name, value FROM store_state ORDER BY name")
    state = dict(await cursor.fetchall())
    assert state["episode_reflections"] == 2
    assert state["episode_deletions"] == 1


async def test_seeded_wakes_carry_sqlite_style_timestamps(db) -> None:
    cursor = await db.execute("SELECT id, created_at FROM wakes ORDER BY id")
    wakes = await cursor.fetchall()
    assert [wake_id for wake_id, _ in wakes] == ["reflection-episodes-ready", "reflection-nightly"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", at) for _, at in wakes)


# --- the harness ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ci", "outcome"), [("true", pytest.fail.Exception), ("", pytest.skip.Exception)]
)
def test_no_postgres_fails_under_ci_and_skips_elsewhere(monkeypatch, ci, outcome) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="no binaries"):
        refuse_or_skip("no binaries")


def test_a_cluster_that_cannot_start_says_why(tmp_path) -> None:
    server = PostgresServer(tmp_path / "no-such-bindir")
    with pytest.raises(PostgresUnavailable, match="initdb failed"):
        server.start()
    server.stop()
    assert not server.root.exists()


async def test_the_throwaway_server_listens_on_loopback_without_fsync(db) -> None:
    assert await scalar(db, "SHOW listen_addresses") == "127.0.0.1"
    assert await scalar(db, "SHOW fsync") == "off"
    assert await scalar(db, "SELECT current_setting('server_version_num')::int") >= 150000
    assert await scalar(db, "SHOW server_encoding") == "UTF8"
