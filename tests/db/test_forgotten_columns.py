"""Migration 0065: the machinery's markers leave forgotten_reason for columns, on both engines."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from credence.db import beliefs as rows_of
from credence.db import make_store, pg_migrate
from credence.db.engine import Database
from credence.db.store import migrations, split_statements
from credence.memory.lifecycle.beliefs import belief_from_row
from credence.memory.lifecycle.feedback import ON_FORGET_REQUEST, recent_feedback

COLUMNS_ADDED = 65
NOW = "2026-01-01T00:00:00.000000Z"
# (id, status, op, target, forgotten_reason) as the code before 0065 wrote them.
OLD_ROWS = [
    ("b_new", "active", "add", None, None),
    ("b_req", "forgotten", "forget", "b_tgt", "applied:forget:b_tgt"),
    ("b_tgt", "forgotten", "add", None, "forgotten_by:b_req"),
    ("b_legacy", "forgotten", "add", None, "superseded_by:b_new"),
    ("b_refused", "forgotten", "add", None, "too broad"),
    ("b_silent", "forgotten", "add", None, None),
]
_AGENT = "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('a', 'A', ?, ?)"
_BELIEF = (
    "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
    " target_belief_id, provenance, created_at, updated_at, decided_at, forgotten_reason)"
    " VALUES (?, 'a', ?, ?, ?, 0.5, ?, ?, 'clean', ?, ?, ?, ?)"
)


def _seed_rows() -> list[tuple[Any, ...]]:
    # Targets first: target_belief_id references a belief.
    ordered = sorted(OLD_ROWS, key=lambda row: row[3] is not None)
    return [
        (bid, f"Lesson {bid}", f"lesson {bid}", status, op, target, NOW, NOW, NOW, reason)
        for bid, status, op, target, reason in ordered
    ]


def _old_sqlite(path: Path) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)"
    )
    for version, name, sql in migrations():
        if version >= COLUMNS_ADDED:
            break
        for statement in split_statements(sql):
            db.execute(statement)
        db.execute("INSERT INTO schema_version VALUES (?, ?, 'then')", (version, name))
    db.execute(_AGENT, (NOW, NOW))
    db.executemany(_BELIEF, _seed_rows())
    db.close()


async def _old_postgres(url: str) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        older = [m for m in pg_migrate.migrations() if m.version < COLUMNS_ADDED]
        await pg_migrate.migrate(conn, older)
        await conn.execute(_AGENT.replace("?", "%s"), (NOW, NOW))
        async with conn.cursor() as cursor:
            await cursor.executemany(_BELIEF.replace("?", "%s"), _seed_rows())


@pytest.fixture
async def upgraded(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Database]:
    """A database written before 0065, opened (and so migrated) by today's store."""
    url = None
    if engine == "sqlite":
        _old_sqlite(tmp_path / "old.sqlite3")
    else:
        url = request.getfixturevalue("pg_url")
        await _old_postgres(url)
    store = make_store(url, tmp_path / "old.sqlite3")
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def test_the_upgrade_moves_every_marker_into_its_column(upgraded: Database) -> None:
    rows = await upgraded.read(
        lambda conn: conn.rows(
            "SELECT id, forgotten_reason, forgotten_by, retired_by FROM beliefs ORDER BY id"
        )
    )
    assert {r["id"]: (r["forgotten_reason"], r["forgotten_by"], r["retired_by"]) for r in rows} == {
        "b_legacy": (None, None, "b_new"),
        "b_new": (None, None, None),
        "b_refused": ("too broad", None, None),
        "b_req": (None, None, "b_req"),
        "b_silent": (None, None, None),
        "b_tgt": (None, "b_req", None),
    }


async def test_an_upgraded_database_answers_as_the_markers_did(upgraded: Database) -> None:
    # Refusals: the reviewer's, and a target of a kept forget request (told as such); never the
    # applied request itself nor a belief forgotten as superseded before 0004.
    refused = await upgraded.read(lambda conn: rows_of.refused(conn, "a", 10))
    assert sorted(r["id"] for r in refused) == ["b_refused", "b_silent", "b_tgt"]
    feedback = await recent_feedback(upgraded, "a")
    assert {r.belief_id: r.reason for r in feedback.refused} == {
        "b_refused": "too broad",
        "b_silent": None,
        "b_tgt": ON_FORGET_REQUEST,
    }
    # A reopen restores what each decision retired, and nothing retires itself.
    for by, retired in (("b_req", ["b_tgt"]), ("b_new", ["b_legacy"]), ("b_tgt", [])):
        found = await upgraded.write(lambda conn, by=by: rows_of.retired_by(conn, "a", by))
        assert [r["id"] for r in found] == retired, by
    # The API's deprecated forgotten_reason reads exactly as the stored marker did.
    for bid, _, _, _, reason in OLD_ROWS:
        row = await upgraded.read(lambda conn, bid=bid: rows_of.get(conn, bid))
        assert belief_from_row(row).forgotten_reason == reason, bid
