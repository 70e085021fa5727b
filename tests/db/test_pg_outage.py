"""PostgreSQL goes away under the store: fast StoreUnavailable, then reconnection by itself."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Iterator

import pytest
from harness.pg import PostgresServer, PostgresUnavailable, refuse_or_skip, throwaway_postgres

from credence.db.engine import StoreError, StoreUnavailable
from credence.db.pgstore import PostgresStore

# The store answers within AWAY_WAIT_S once it knows; the first failure may take a few stale
# connections to find out. Generous for two loaded cores, far below the 5 s pool timeout.
FAST_S = 2.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresServer]:
    """A cluster of this module's own, so stopping it disturbs no other test's database."""
    try:
        with throwaway_postgres(durable=True) as server:
            yield server
    except PostgresUnavailable as exc:
        refuse_or_skip(f"PostgreSQL unavailable: {exc}")


@pytest.fixture
async def store(cluster: PostgresServer, request: pytest.FixtureRequest):
    with cluster.database(request.node.name) as url:
        opened = PostgresStore(url, pool_size=4)
        await opened.open()
        await opened.write(lambda conn: conn.run("CREATE TABLE acked (n integer PRIMARY KEY)"))
        try:
            yield opened
        finally:
            await opened.close()


async def _insert(store: PostgresStore, n: int) -> None:
    await store.write(lambda conn: conn.run("INSERT INTO acked(n) VALUES (?)", (n,)))


async def _rows(store: PostgresStore) -> list[int]:
    return [row["n"] for row in await store.fetchall("SELECT n FROM acked ORDER BY n")]


async def _timed_unavailable(call) -> float:
    started = time.monotonic()
    with pytest.raises(StoreUnavailable):
        await call()
    return time.monotonic() - started


async def _halt(cluster: PostgresServer, mode: str) -> None:
    await asyncio.to_thread(cluster.halt, mode)


async def _resume(cluster: PostgresServer) -> None:
    await asyncio.to_thread(cluster.resume)


@pytest.mark.parametrize("mode", ["fast", "immediate"])
async def test_away_is_unavailable_at_once_and_back_is_served_without_reopening(
    cluster: PostgresServer, store: PostgresStore, mode: str
) -> None:
    for n in range(4):  # several pooled connections, all of them stale after the restart
        await asyncio.gather(*(_insert(store, 10 * n + k) for k in range(4)))
    acknowledged = await _rows(store)
    await _halt(cluster, mode)
    try:
        assert await _timed_unavailable(lambda: store.fetchall("SELECT n FROM acked")) < FAST_S
        assert not store.available
        for _ in range(3):  # known away: every later unit fails fast, reads and writes alike
            assert await _timed_unavailable(lambda: _insert(store, 999)) < FAST_S
            assert await _timed_unavailable(lambda: _rows(store)) < FAST_S
    finally:
        await _resume(cluster)
    # The same store, never reopened: the first unit after the restart succeeds.
    await _insert(store, 1000)
    assert store.available
    assert await _rows(store) == [*acknowledged, 1000]


async def test_a_connection_dying_mid_transaction_rolls_the_unit_back(
    cluster: PostgresServer, store: PostgresStore
) -> None:
    await _insert(store, 1)
    inside = asyncio.Event()
    halted = asyncio.Event()

    async def slow_unit(conn) -> None:
        await conn.run("INSERT INTO acked(n) VALUES (2)")
        inside.set()
        await halted.wait()
        await conn.run("INSERT INTO acked(n) VALUES (3)")

    async def crash_while_inside() -> None:
        await inside.wait()
        await _halt(cluster, "immediate")
        halted.set()

    try:
        results = await asyncio.gather(
            store.write(slow_unit), crash_while_inside(), return_exceptions=True
        )
        assert isinstance(results[0], StoreUnavailable), results
    finally:
        await _resume(cluster)
    # Never committed, so not half-present either; the acknowledged row survived the crash.
    assert await _rows(store) == [1]


async def test_a_unit_that_outlives_the_statement_timeout_is_unavailable_not_a_hang(
    store: PostgresStore,
) -> None:
    row = await store.fetchone("SELECT current_setting('statement_timeout') AS t")
    assert row["t"] == "30s"

    async def stuck(conn) -> None:
        await conn.run("SET LOCAL statement_timeout = '200ms'")
        await conn.run("SELECT pg_sleep(5)")

    assert await _timed_unavailable(lambda: store.write(stuck)) < FAST_S
    assert store.available  # a slow statement is not the database going away
    await _insert(store, 7)
    assert await _rows(store) == [7]


async def test_options_in_the_url_win_over_the_defaults(cluster: PostgresServer) -> None:
    name = cluster.create_database("options")
    url = cluster.url(name) + "?options=-c%20statement_timeout%3D1234"
    store = PostgresStore(url, pool_size=1)
    await store.open()
    try:
        row = await store.fetchone("SELECT current_setting('statement_timeout') AS t")
        assert row["t"] == "1234ms"
        row = await store.fetchone(
            "SELECT current_setting('idle_in_transaction_session_timeout') AS t"
        )
        assert row["t"] == "1min"
    finally:
        await store.close()
        cluster.drop_database(name)


async def test_opening_waits_for_a_database_still_starting_and_names_a_dead_one(
    cluster: PostgresServer,
) -> None:
    name = cluster.create_database("starting")
    try:
        await _halt(cluster, "fast")
        try:
            started = time.monotonic()
            with pytest.raises(StoreError, match=r"Connection refused|connection failed"):
                await PostgresStore(cluster.url(name), timeout_s=1.0).open()
            assert time.monotonic() - started < 5.0
            late = PostgresStore(cluster.url(name), timeout_s=20.0)
            opening = asyncio.create_task(late.open())
            await asyncio.sleep(1.0)  # the store keeps asking while the database is down
        finally:
            await _resume(cluster)
        await opening
        try:
            assert late.available and late.schema_version > 0
        finally:
            await late.close()
    finally:
        cluster.drop_database(name)


async def test_an_outage_is_one_log_line_each_way(
    cluster: PostgresServer, store: PostgresStore, caplog: pytest.LogCaptureFixture
) -> None:
    """Away: "database unreachable: …" once, however many units fail; then "back after N s"."""
    await _insert(store, 1)
    with caplog.at_level(logging.WARNING, logger="credence.db.pgstore"):
        await _halt(cluster, "fast")
        try:
            for _ in range(5):
                await _timed_unavailable(lambda: _rows(store))
        finally:
            await _resume(cluster)
        deadline = time.monotonic() + 30
        while True:
            try:
                await _rows(store)
                break
            except StoreUnavailable:
                assert time.monotonic() < deadline, "the database did not come back"
                await asyncio.sleep(0.1)
        await _rows(store)
    lines = [r.getMessage() for r in caplog.records if r.name == "credence.db.pgstore"]
    assert len(lines) == 2, lines
    assert lines[0].startswith("database unreachable: ")
    assert re.fullmatch(r"database back after \d+\.\d s", lines[1])
    assert all(not r.exc_info for r in caplog.records)
