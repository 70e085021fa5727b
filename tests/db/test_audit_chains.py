"""One audit chain per agent (migration 0046): the single chain written before it still
verifies, and on PostgreSQL an appender waits only for appenders of its own agent."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from psycopg import errors
from psycopg.rows import dict_row

from credence.db import pg_migrate
from credence.db.audit import APPEND, GENESIS, row_hash
from credence.db.store import Store
from credence.db.store import migrations as sqlite_migrations
from credence.memory.lifecycle import audit

NOW = "2026-12-02T08:00:00.000Z"
PER_AGENT = 46


def fields(agent_id: str, text: str) -> dict:
    """What a store sends for one audit row (no seq, prev_hash or row_hash)."""
    return {
        "belief_id": f"b-{agent_id}-{text}",
        "agent_id": agent_id,
        "action": "kept",
        "actor": "key:k1",
        "at": NOW,
        "before_status": "pending",
        "after_status": "active",
        "before_hash": None,
        "after_hash": audit.content_hash(text),
        "version": 2,
        "detail": text,
    }


async def append(store: Store, agent_id: str, text: str) -> None:
    """memory/audit.append inside one store write."""
    row = fields(agent_id, text)

    async def work(conn):
        await audit.append(
            conn,
            **{k: v for k, v in row.items() if not k.endswith("_hash")},
            before_content=None,
            after_content=text,
        )

    await store.write(work)


def legacy_sqlite(path: Path) -> None:
    """A SQLite file migrated up to 0045, holding three rows of the old single chain."""
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL)"
    )
    for version, name, script in sqlite_migrations():
        if version < PER_AGENT:
            db.executescript(script)
            db.execute("INSERT INTO schema_version VALUES (?, ?, ?)", (version, name, NOW))
    previous = GENESIS
    for seq, agent in enumerate(("a1", "a2", "a1"), start=1):
        row = {"seq": seq, **fields(agent, f"old {seq}"), "prev_hash": previous}
        row["row_hash"] = previous = row_hash(row)
        db.execute(
            f"INSERT INTO audit({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()),
        )
    db.commit()
    db.close()


async def test_sqlite_keeps_the_old_chain_and_starts_one_per_agent(tmp_path: Path) -> None:
    legacy_sqlite(tmp_path / "credence.sqlite3")
    store = Store(tmp_path / "credence.sqlite3")
    await store.open()
    try:
        for agent, text in (("a1", "x"), ("a2", "y"), ("a1", "z")):
            await append(store, agent, text)
        assert await audit.verify(store) == (True, 6, None)
        rows = await store.read(lambda conn: conn.rows("SELECT * FROM audit ORDER BY seq"))
    finally:
        await store.close()
    rows = [dict(r) for r in rows]
    assert [r["chain_version"] for r in rows] == [1, 1, 1, 2, 2, 2]
    # Each agent's first new row starts its own chain; its next links to it, not to a2's.
    assert rows[3]["prev_hash"] == GENESIS and rows[4]["prev_hash"] == GENESIS
    assert rows[5]["prev_hash"] == rows[3]["row_hash"]
    rows[4]["detail"] = "rewritten"
    assert audit.verify_rows(rows) == (False, 6, 5)


async def test_a_statement_batch_extends_each_agents_own_chain_on_sqlite(tmp_path: Path) -> None:
    # A Keep appends through the batch statement, other writes through append(): both must
    # link a row to its own agent's head, or the chain no longer verifies.
    store = Store(tmp_path / "credence.sqlite3")
    await store.open()
    try:
        await append(store, "a1", "first")

        async def batch(conn):
            entries = [fields("a2", "second"), fields("a1", "third")]
            await conn.batch([(APPEND["sqlite"], entries)])

        await store.write(batch)
        await append(store, "a2", "fourth")
        assert await audit.verify(store) == (True, 4, None)
        rows = await store.read(lambda conn: conn.rows("SELECT * FROM audit ORDER BY seq"))
    finally:
        await store.close()
    rows = [dict(r) for r in rows]
    assert [r["chain_version"] for r in rows] == [2, 2, 2, 2]
    assert rows[1]["prev_hash"] == GENESIS  # a2's first row starts a2's chain
    assert rows[2]["prev_hash"] == rows[0]["row_hash"]
    assert rows[3]["prev_hash"] == rows[1]["row_hash"]


@pytest.fixture
async def pg(pg_url: str) -> AsyncIterator[psycopg.AsyncConnection]:
    """An autocommit connection to an empty database of this test's own."""
    conn = await psycopg.AsyncConnection.connect(pg_url, autocommit=True)
    yield conn
    await conn.close()


async def insert(conn: psycopg.AsyncConnection, agent_id: str, text: str) -> None:
    """An audit row as the PostgreSQL store sends it; the trigger chains it."""
    row = fields(agent_id, text)
    await conn.execute(
        f"INSERT INTO audit({', '.join(row)}) VALUES ({', '.join(['%s'] * len(row))})",
        tuple(row.values()),
    )


async def all_rows(conn: psycopg.AsyncConnection) -> list[dict]:
    cursor = conn.cursor(row_factory=dict_row)
    await cursor.execute("SELECT * FROM audit ORDER BY seq")
    return await cursor.fetchall()


async def test_postgres_keeps_the_old_chain_and_starts_one_per_agent(pg) -> None:
    shipped = pg_migrate.migrations()
    await pg_migrate.migrate(pg, [m for m in shipped if m.version < PER_AGENT])
    for agent, text in (("a1", "old 1"), ("a2", "old 2"), ("a1", "old 3")):
        await insert(pg, agent, text)
    await pg_migrate.migrate(pg, shipped)
    for agent, text in (("a1", "x"), ("a2", "y"), ("a1", "z")):
        await insert(pg, agent, text)
    rows = await all_rows(pg)
    assert [r["seq"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert [r["chain_version"] for r in rows] == [1, 1, 1, 2, 2, 2]
    assert rows[1]["prev_hash"] == rows[0]["row_hash"]  # the old chain crossed agents
    assert rows[3]["prev_hash"] == GENESIS and rows[5]["prev_hash"] == rows[3]["row_hash"]
    assert audit.verify_rows(rows) == (True, 6, None)
    # A row of the old chain can no longer follow per-agent rows.
    with pytest.raises(errors.CheckViolation, match="single chain"):
        await pg.execute(
            "INSERT INTO audit(belief_id, agent_id, action, actor, at, after_status, after_hash,"
            " version, chain_version) VALUES ('b', 'a1', 'kept', 'k', %s, 'active', 'h', 1, 1)",
            (NOW,),
        )


async def test_an_appender_waits_only_for_its_own_agent(pg_migrated_url: str) -> None:
    conns = [
        await psycopg.AsyncConnection.connect(pg_migrated_url, autocommit=True) for _ in range(3)
    ]
    holder, other, same = conns
    try:
        for conn in (other, same):
            await conn.execute("SET lock_timeout = '1s'")
        async with holder.transaction():
            await insert(holder, "a1", "held")  # a1's lock is held until this commits
            await insert(other, "a2", "not blocked")
            with pytest.raises(errors.LockNotAvailable):
                await insert(same, "a1", "waits for a1")
        await insert(same, "a1", "after")
        rows = await all_rows(holder)
    finally:
        for conn in conns:
            await conn.close()
    assert [(r["agent_id"], r["detail"]) for r in rows] == [
        ("a1", "held"),
        ("a2", "not blocked"),
        ("a1", "after"),
    ]
    assert audit.verify_rows(rows) == (True, 3, None)


async def test_concurrent_agents_each_keep_an_unbroken_chain(pg_migrated_url: str) -> None:
    conns = [
        await psycopg.AsyncConnection.connect(pg_migrated_url, autocommit=True) for _ in range(4)
    ]

    async def append_many(conn: psycopg.AsyncConnection, agent_id: str, name: str) -> None:
        for index in range(12):
            async with conn.transaction():
                await insert(conn, agent_id, f"{name}-{index}")

    try:
        await asyncio.gather(*(append_many(c, f"a{i % 2}", f"w{i}") for i, c in enumerate(conns)))
        rows = await all_rows(conns[0])
    finally:
        for conn in conns:
            await conn.close()
    assert sorted(r["seq"] for r in rows) == list(range(1, 49))
    assert audit.verify_rows(rows) == (True, 48, None)
