"""The store: pragmas that must hold, migrations, group commit, rollback and cancellation."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from credence.db.store import Store, StoreError, migrations, split_statements


@pytest.fixture
async def store(tmp_path: Path):
    opened = Store(tmp_path / "s.sqlite3")
    await opened.open()
    yield opened
    await opened.close()


async def test_required_pragmas_are_in_force(store: Store) -> None:
    assert (await store.fetchone("PRAGMA journal_mode"))[0] == "wal"
    assert (await store.fetchone("PRAGMA synchronous"))[0] == 2
    assert (await store.fetchone("PRAGMA foreign_keys"))[0] == 1
    assert (await store.fetchone("PRAGMA busy_timeout"))[0] >= 5000


async def test_start_up_refuses_when_a_pragma_does_not_take(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # journal_mode=WAL cannot take on an in-memory database: it reads back "memory". The store
    # first creates its file privately, which for ":memory:" is a file of that name in the
    # working directory: run from a temporary one, so the checkout gains no stray file.
    monkeypatch.chdir(tmp_path)
    bad = Store(Path(":memory:"))
    with pytest.raises(StoreError, match="journal_mode"):
        await bad.open()
    assert [p.name for p in tmp_path.iterdir()] == [":memory:"]


async def test_migrations_are_applied_once_and_recorded(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    for _ in range(2):
        store = Store(path)
        await store.open()
        rows = await store.fetchall("SELECT version FROM schema_version ORDER BY version")
        assert [r[0] for r in rows] == [n for n, _, _ in migrations()]
        assert store.schema_version == migrations()[-1][0]
        await store.close()


def test_split_statements_keeps_trigger_bodies_whole() -> None:
    sql = (
        "CREATE TABLE t (a INT);\n"
        "CREATE TRIGGER x BEFORE DELETE ON t BEGIN\n  SELECT RAISE(ABORT, 'no');\nEND;\n"
        "INSERT INTO t VALUES (1);\n"
    )
    parts = split_statements(sql)
    assert len(parts) == 3
    assert parts[1].startswith("CREATE TRIGGER") and parts[1].endswith("END;")


async def test_a_failing_write_rolls_back_alone_inside_a_group_commit(store: Store) -> None:
    await store.write(lambda c: c.run("CREATE TABLE t (v INTEGER UNIQUE)"))

    async def insert(value: int):
        async def work(conn):
            await conn.run("INSERT INTO t VALUES (?)", (value,))
            if value == 3:
                await conn.run("INSERT INTO t VALUES (?)", (value + 100,))
                raise ValueError("refused after a partial write")
            return value

        return work

    works = [await insert(v) for v in range(6)]
    results = await asyncio.gather(*(store.write(w) for w in works), return_exceptions=True)
    assert [r for r in results if isinstance(r, ValueError)] and results[3].args
    assert [r for r in results if not isinstance(r, Exception)] == [0, 1, 2, 4, 5]
    rows = await store.fetchall("SELECT v FROM t ORDER BY v")
    assert [r[0] for r in rows] == [0, 1, 2, 4, 5]  # neither 3 nor its partial 103


def counting_trips(store: Store) -> list[str]:
    """The calls made on the store's database thread from now on, by the function run."""
    trips: list[str] = []
    raw = store._conn
    assert raw is not None
    execute = raw._execute

    async def counted(fn, *args, **kwargs):
        trips.append(getattr(args[2], "__name__", "?") if len(args) > 2 else fn.__name__)
        return await execute(fn, *args, **kwargs)

    raw._execute = counted  # type: ignore[method-assign]
    return trips


async def test_a_one_statement_write_is_three_trips_with_its_savepoint_riding_along(
    store: Store,
) -> None:
    await store.write(lambda c: c.run("CREATE TABLE one (v INTEGER)"))
    trips = counting_trips(store)
    await store.write(lambda c: c.run("INSERT INTO one VALUES (1)"))
    # BEGIN IMMEDIATE, the insert (after SAVEPOINT, in the same call), COMMIT (after RELEASE).
    assert len(trips) == 3, trips
    assert (await store.fetchone("SELECT COUNT(*) FROM one"))[0] == 1


async def test_an_inline_write_leaves_only_begin_and_commit_to_the_database_thread(
    store: Store,
) -> None:
    await store.write(lambda c: c.run("CREATE TABLE inl (v INTEGER)"))
    trips = counting_trips(store)

    async def three_statements(conn):
        await conn.run("INSERT INTO inl VALUES (1)")
        await conn.run("INSERT INTO inl VALUES (2)")
        return (await conn.one("SELECT COUNT(*) FROM inl"))[0]

    assert await store.write(three_statements, inline=True) == 2
    assert len(trips) == 2, trips  # BEGIN IMMEDIATE and COMMIT, where the disk is waited on
    trips.clear()
    await store.write(lambda c: c.run("INSERT INTO inl VALUES (3)"))
    assert len(trips) == 3, trips  # a unit that is not inline goes to the thread as before


async def test_an_inline_read_makes_no_trip_to_the_database_thread(store: Store) -> None:
    await store.write(lambda c: c.run("CREATE TABLE lk (v INTEGER)"))
    await store.write(lambda c: c.run("INSERT INTO lk VALUES (7)"))
    trips = counting_trips(store)
    assert (await store.read(lambda c: c.one("SELECT v FROM lk"), inline=True))["v"] == 7
    assert trips == []
    assert (await store.read(lambda c: c.one("SELECT v FROM lk")))["v"] == 7
    assert len(trips) == 1, trips  # a read that is not inline goes to the thread as before


async def test_an_inline_read_waits_for_the_write_in_flight_and_sees_it_committed(
    store: Store,
) -> None:
    await store.write(lambda c: c.run("CREATE TABLE fl (v INTEGER)"))
    inserted, release = asyncio.Event(), asyncio.Event()

    async def slow_insert(conn):
        await conn.run("INSERT INTO fl VALUES (1)")
        inserted.set()
        await release.wait()  # the transaction stays open, its row uncommitted

    write = asyncio.create_task(store.write(slow_insert, inline=True))
    await inserted.wait()
    read = asyncio.create_task(
        store.read(lambda c: c.one("SELECT COUNT(*) AS n FROM fl"), inline=True)
    )
    for _ in range(20):
        await asyncio.sleep(0)
    waited = not read.done()  # it waits its turn: it would have counted an uncommitted row
    release.set()
    await write
    assert waited
    assert (await read)["n"] == 1 and not store._conn.in_transaction


async def test_rows_together_answers_each_query_in_order_in_one_trip(store: Store) -> None:
    await store.write(lambda c: c.run("CREATE TABLE tog (v INTEGER)"))
    await store.write(lambda c: c.run_many("INSERT INTO tog VALUES (?)", [(1,), (2,), (3,)]))
    trips = counting_trips(store)
    queries = [
        ("SELECT v FROM tog WHERE v > ? ORDER BY v", (1,)),
        ("SELECT v FROM tog WHERE v > ?", (9,)),
        ("SELECT COUNT(*) AS n FROM tog", ()),
    ]
    later, none, count = await store.read(lambda c: c.rows_together(queries))
    assert [r["v"] for r in later] == [2, 3] and none == [] and count[0]["n"] == 3
    assert len(trips) == 1, trips


async def test_inline_and_threaded_units_in_one_group_commit_roll_back_alone(
    store: Store,
) -> None:
    await store.write(lambda c: c.run("CREATE TABLE mix (v INTEGER UNIQUE)"))

    def unit(value: int, *, fail: bool = False):
        async def work(conn):
            await conn.run("INSERT INTO mix VALUES (?)", (value,))
            if fail:
                raise ValueError("refused after a partial write")
            return value

        return work

    writes = [
        store.write(unit(1), inline=True),
        store.write(unit(2, fail=True), inline=True),
        store.write(unit(3)),
        store.write(unit(4, fail=True)),
        store.write(unit(5), inline=True),
    ]
    results = await asyncio.gather(*writes, return_exceptions=True)
    assert [r if not isinstance(r, Exception) else "refused" for r in results] == [
        1,
        "refused",
        3,
        "refused",
        5,
    ]
    rows = await store.fetchall("SELECT v FROM mix ORDER BY v")
    assert [r[0] for r in rows] == [1, 3, 5]
    assert not store._conn.in_transaction


async def test_a_write_that_fails_before_or_in_its_first_statement_rolls_back_alone(
    store: Store,
) -> None:
    await store.write(lambda c: c.run("CREATE TABLE u (v INTEGER UNIQUE)"))
    await store.write(lambda c: c.run("INSERT INTO u VALUES (0)"))

    async def refuse_at_once(conn):
        raise ValueError("refused before any statement")

    def insert(value: int):
        return lambda conn: conn.run("INSERT INTO u VALUES (?)", (value,))

    works = [insert(1), refuse_at_once, insert(0), insert(2)]
    results = await asyncio.gather(*(store.write(w) for w in works), return_exceptions=True)
    assert isinstance(results[1], ValueError)
    assert isinstance(results[2], sqlite3.IntegrityError)  # failed in its first statement
    assert results[0] == results[3] == 1
    rows = await store.fetchall("SELECT v FROM u ORDER BY v")
    assert [r[0] for r in rows] == [0, 1, 2]
    assert not store._conn.in_transaction


async def test_concurrent_writes_are_grouped_into_fewer_commits(store: Store) -> None:
    await store.write(lambda c: c.run("CREATE TABLE n (v INTEGER)"))
    before = store.commits

    async def work(conn):
        await conn.run("INSERT INTO n VALUES (1)")

    await asyncio.gather(*(store.write(work) for _ in range(200)))
    assert (await store.fetchone("SELECT COUNT(*) FROM n"))[0] == 200
    assert 1 <= store.commits - before <= 200 // 10  # batches of up to 64, not 200 fsyncs


async def test_a_cancelled_caller_never_leaves_a_partial_write(store: Store) -> None:
    await store.write(lambda c: c.run("CREATE TABLE pair (a INTEGER, b INTEGER)"))
    started = asyncio.Event()

    async def slow_pair(conn):
        await conn.run("INSERT INTO pair(a) VALUES (1)")
        started.set()
        await asyncio.sleep(0.05)
        await conn.run("UPDATE pair SET b = 2 WHERE a = 1")

    task = asyncio.create_task(store.write(slow_pair))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the write ran to completion in the store's executor: both halves or nothing
    await store.fetchall("SELECT 1")
    rows = await store.fetchall("SELECT a, b FROM pair")
    assert [tuple(r) for r in rows] in ([(1, 2)], [])
    assert not store._conn.in_transaction


async def test_reads_never_see_an_uncommitted_write(store: Store, tmp_path: Path) -> None:
    await store.write(lambda c: c.run("CREATE TABLE seen (v INTEGER)"))
    release = asyncio.Event()

    async def held(conn):
        await conn.run("INSERT INTO seen VALUES (1)")
        await release.wait()

    writer = asyncio.create_task(store.write(held))
    await asyncio.sleep(0.01)
    reader = asyncio.create_task(store.fetchone("SELECT COUNT(*) FROM seen"))
    await asyncio.sleep(0.01)
    assert not reader.done()  # queued behind the open transaction, not reading through it
    release.set()
    await writer
    assert (await reader)[0] == 1


async def test_another_process_sees_committed_data(store: Store) -> None:
    await store.write(lambda c: c.run("CREATE TABLE shared (v INTEGER)"))
    await store.write(lambda c: c.run("INSERT INTO shared VALUES (7)"))
    other = sqlite3.connect(store.path)
    try:
        assert other.execute("SELECT v FROM shared").fetchall() == [(7,)]
    finally:
        other.close()


async def test_migration_4_rebuilds_beliefs_keeping_rows_references_and_triggers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v3.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)"
    )
    for version, name, sql in migrations()[:3]:
        for statement in split_statements(sql):
            db.execute(statement)
        db.execute("INSERT INTO schema_version VALUES (?, ?, 'then')", (version, name))
    now = "2026-01-01T00:00:00Z"
    db.execute("INSERT INTO api_keys VALUES ('k', 'h', 'admin', NULL, '', ?, NULL)", (now,))
    db.execute(
        "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('a', 'A', ?, ?)", (now, now)
    )
    for belief_id, provenance in (("b_old", "clean"), ("b_web", "untrusted")):
        db.execute(
            "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
            " provenance, created_at, updated_at) VALUES (?, 'a', 'x', 'x', 'pending', 0.5, 'add',"
            " ?, ?, ?)",
            (belief_id, provenance, now, now),
        )
    db.execute(
        "INSERT INTO push_subscriptions VALUES ('s', 'k', 'https://p/1', 'p', 'a', NULL, ?, ?)",
        (now, now),
    )
    db.execute(
        "INSERT INTO push_outbox(id, subscription_id, belief_id, kind, payload, urgency, ttl,"
        " created_at, expires_at, next_attempt_at) VALUES ('o', 's', 'b_old', 'belief.pending',"
        " x'00', 'normal', 60, ?, ?, ?)",
        (now, now, now),
    )
    db.close()

    store = Store(path)
    await store.open()
    try:
        assert store.schema_version == migrations()[-1][0]
        assert (await store.fetchone("PRAGMA foreign_keys"))[0] == 1
        assert await store.fetchall("PRAGMA foreign_key_check") == []
        row = await store.fetchone("SELECT status, superseded_by FROM beliefs WHERE id = 'b_old'")
        assert tuple(row) == ("pending", None)
        before = (await store.fetchone("SELECT COUNT(*) FROM belief_change_log"))[0]
        await store.write(
            lambda c: c.run(
                "UPDATE beliefs SET status = 'superseded', superseded_by = 'b_web'"
                " WHERE id = 'b_old'"
            )
        )
        assert (await store.fetchone("SELECT COUNT(*) FROM belief_change_log"))[0] == before + 1
        with pytest.raises(sqlite3.IntegrityError, match="untrusted"):
            await store.write(
                lambda c: c.run("UPDATE beliefs SET status = 'active' WHERE id = 'b_web'")
            )
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            await store.write(
                lambda c: c.run("UPDATE push_outbox SET belief_id = 'b_none' WHERE id = 'o'")
            )
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            await store.write(
                lambda c: c.run("UPDATE beliefs SET superseded_by = 'b_none' WHERE id = 'b_old'")
            )
    finally:
        await store.close()


async def _insert_belief(store: Store, provenance: str) -> None:
    """A pending belief of agent ada with this provenance (the CHECK decides if it may be)."""
    now = "2030-01-01T00:00:00.000000Z"

    async def work(conn):
        await conn.run(
            "INSERT OR IGNORE INTO agents(id, name, created_at, updated_at)"
            " VALUES ('ada', 'Ada', ?, ?)",
            (now, now),
        )
        await conn.run(
            "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
            " provenance, created_at, updated_at) VALUES (?, 'ada', 'x', 'x', 'pending', 0.5,"
            " 'add', ?, ?, ?)",
            (f"b_{provenance}", provenance, now, now),
        )

    await store.write(work)


async def test_migration_0007_widens_provenance_to_unsourced_and_nothing_else(
    store: Store,
) -> None:
    await _insert_belief(
        store, "unsourced"
    )  # the very connection that migrated sees the wider check
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        await _insert_belief(store, "hearsay")
    (check,) = await store.fetchall("PRAGMA integrity_check")
    assert check[0] == "ok"


async def test_migration_0030_admits_imported_provenance(store: Store) -> None:
    await _insert_belief(store, "imported")
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        await _insert_belief(store, "rumoured")
    (check,) = await store.fetchall("PRAGMA integrity_check")
    assert check[0] == "ok"
