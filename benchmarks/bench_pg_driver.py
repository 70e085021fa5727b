"""PostgreSQL drivers side by side: psycopg 3 (+ pipeline, + pool) vs asyncpg on a throwaway server.

Figures are per operation over loopback against the real schema (its triggers included) on a
cluster with fsync off: they measure the driver's round trips and CPU, not the disk.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack

import asyncpg
import psycopg
import psycopg_pool
from harness.pg import throwaway_postgres

from benchmarks.figures import figure
from credence.db import pg_migrate

BELIEFS = 1000
OPS = 400
RUNS = 5
TASKS = 16
NOW = "2026-12-01T20:00:00.000Z"
READ = "SELECT id, content, status, version FROM beliefs WHERE id = {}"
BUMP = "UPDATE beliefs SET version = version + 1, updated_at = {} WHERE id = {}"
AUDIT = (
    "INSERT INTO audit(belief_id, agent_id, action, actor, at, before_status, after_status,"
    " after_hash, version, detail) VALUES ({}, 'a1', 'kept', 'bench', {}, 'pending', 'active',"
    " 'h', 1, '')"
)
# A point read's target leaves room for several reads in a context request; a decision's write
# (update + audit row in one transaction) must fit the Keep budget of ≥ 0.2 × /healthz.
READ_TARGET_MS = 0.3
WRITE_TARGET_MS = 1.5
POOL_TARGET_PER_S = 5000.0
Operation = tuple[str, Callable[[int], Awaitable[None]]]


def _psycopg(query: str) -> str:
    return query.format(*(["%s"] * query.count("{}")))


def _asyncpg(query: str) -> str:
    return query.format(*(f"${n}" for n in range(1, query.count("{}") + 1)))


async def seed(url: str) -> None:
    """Migrate and fill one agent's beliefs."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await pg_migrate.migrate(conn)
        await conn.execute(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('a1', 'a1', %s, %s)",
            (NOW, NOW),
        )
        async with conn.cursor() as cursor:
            await cursor.executemany(
                "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
                " provenance, created_at, updated_at)"
                " VALUES (%s, 'a1', %s, %s, 'pending', 0.7, 'add', 'clean', %s, %s)",
                [(f"b{i}", f"belief {i}", f"belief {i}", NOW, NOW) for i in range(BELIEFS)],
            )


async def timed_ms(operation: Callable[[int], Awaitable[None]]) -> float:
    """Milliseconds per call over OPS sequential calls of ``operation(i)``."""
    began = time.perf_counter()
    for i in range(OPS):
        await operation(i)
    return (time.perf_counter() - began) * 1000 / OPS


async def timed_per_s(operation: Callable[[int], Awaitable[None]]) -> float:
    """Calls per second with TASKS concurrent callers (sharing one pool)."""

    async def worker(offset: int) -> None:
        for i in range(OPS // 4):
            await operation(offset + i)

    began = time.perf_counter()
    await asyncio.gather(*(worker(t * 7) for t in range(TASKS)))
    return TASKS * (OPS // 4) / (time.perf_counter() - began)


def _key(i: int) -> str:
    return f"b{i % BELIEFS}"


async def psycopg_operations(url: str, stack: AsyncExitStack) -> dict[str, Operation]:
    """psycopg 3 async: point read, write transaction (plain and pipelined), pooled reads."""
    read, bump, add = _psycopg(READ), _psycopg(BUMP), _psycopg(AUDIT)
    conn = await stack.enter_async_context(
        await psycopg.AsyncConnection.connect(url, autocommit=True)
    )
    pool = await stack.enter_async_context(
        psycopg_pool.AsyncConnectionPool(
            url, min_size=4, max_size=4, kwargs={"autocommit": True}, open=False
        )
    )

    async def point_read(i: int) -> None:
        await (await conn.execute(read, (_key(i),))).fetchone()

    async def write(i: int) -> None:
        async with conn.transaction():
            await conn.execute(bump, (NOW, _key(i)))
            await conn.execute(add, (_key(i), NOW))

    async def pipelined_write(i: int) -> None:
        async with conn.pipeline(), conn.transaction():
            await conn.execute(bump, (NOW, _key(i)))
            await conn.execute(add, (_key(i), NOW))

    async def pooled_read(i: int) -> None:
        async with pool.connection() as pooled:
            await (await pooled.execute(read, (_key(i),))).fetchone()

    return {
        "pg point read: psycopg": ("ms", point_read),
        "pg write txn: psycopg": ("ms", write),
        "pg write txn: psycopg pipeline": ("ms", pipelined_write),
        f"pg pool reads, {TASKS} tasks: psycopg-pool": ("per_s", pooled_read),
    }


async def asyncpg_operations(url: str, stack: AsyncExitStack) -> dict[str, Operation]:
    """asyncpg: point read, write transaction, its own pool's reads."""
    read, bump, add = _asyncpg(READ), _asyncpg(BUMP), _asyncpg(AUDIT)
    conn = await asyncpg.connect(url)
    stack.push_async_callback(conn.close)
    pool = await asyncpg.create_pool(url, min_size=4, max_size=4)
    stack.push_async_callback(pool.close)

    async def point_read(i: int) -> None:
        await conn.fetchrow(read, _key(i))

    async def write(i: int) -> None:
        async with conn.transaction():
            await conn.execute(bump, NOW, _key(i))
            await conn.execute(add, _key(i), NOW)

    async def pooled_read(i: int) -> None:
        async with pool.acquire() as pooled:
            await pooled.fetchrow(read, _key(i))

    return {
        "pg point read: asyncpg": ("ms", point_read),
        "pg write txn: asyncpg": ("ms", write),
        f"pg pool reads, {TASKS} tasks: asyncpg": ("per_s", pooled_read),
    }


async def measure_all(url: str) -> list[dict]:
    """Every operation of both drivers, interleaved run by run so machine noise hits both alike."""
    async with AsyncExitStack() as stack:
        operations = {
            **await psycopg_operations(url, stack),
            **await asyncpg_operations(url, stack),
        }
        samples: dict[str, list[float]] = {name: [] for name in operations}
        for run in range(RUNS + 1):
            for name, (unit, operation) in operations.items():
                value = await (timed_ms if unit == "ms" else timed_per_s)(operation)
                if run:  # the first run warms connections, statement caches and the pools
                    samples[name].append(value)
    rows = []
    for name, (unit, _) in operations.items():
        if unit == "per_s":
            rows.append(
                figure(name, samples[name], POOL_TARGET_PER_S, unit="per_s", better="higher")
            )
        else:
            target = READ_TARGET_MS if "read" in name else WRITE_TARGET_MS
            rows.append(figure(name, samples[name], target))
    return rows


def measure() -> list[dict]:
    """Both drivers against one seeded database on a throwaway cluster."""
    with throwaway_postgres() as server, server.database("bench") as url:
        asyncio.run(seed(url))
        return asyncio.run(measure_all(url))


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
