"""Benchmark: the cost of /metrics, of counting on the context path, and of the memory report.

One SQLite store with 50 agents and 110,000 beliefs, 100,000 of them decided by reviewers over
the last 30 days for one agent. A scrape that re-reads the database-wide gauges (the worst case:
at most one per 5 s in service) and a cached scrape are timed in process; the context path is
read over ASGI (auth, rate limit, request metrics and spans included) with counting off and on,
alternating; the report covers the agent with 100,000 decisions.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import httpx

from benchmarks.figures import figure
from credence.access.keys import create_key
from credence.app import create_app
from credence.clock import rfc3339, system_clock
from credence.components import context_component
from credence.db.store import Store
from credence.ids import new_id
from credence.memory.lifecycle.report import memory_report
from credence.memory.semantics.tokens import normalise
from credence.observe import metrics
from credence.settings import Settings

SEED = 20261202
AGENTS = 50
BIG_AGENT = "a00"
BIG_DECISIONS = 100_000
OTHER_BELIEFS = 200  # per other agent: 49 × 200 = 9,800 more
SCRAPE_RUNS = 20
REPORT_RUNS = 10
CONTEXT_ROUNDS = 5
CONTEXT_READS = 1000
SCRAPE_TARGET_MS = 50.0
REPORT_TARGET_MS = 200.0
THROUGHPUT_RATIO_TARGET = 0.95  # at most 5% of context-path throughput lost to counting
STATUSES = ("active", "active", "active", "active", "active", "active", "forgotten", "forgotten")
REVIEWERS = ("key:alice", "key:bob", "key:carol")


def _seed(path: Path) -> None:
    """Migrate with the store, then bulk-insert agents and beliefs with plain sqlite3."""

    async def migrate() -> None:
        store = Store(path)
        await store.open()
        await store.close()

    asyncio.run(migrate())
    rng = random.Random(SEED)
    now = system_clock()
    stamp = rfc3339(now)
    conn = sqlite3.connect(path)
    conn.executemany(
        "INSERT INTO agents(id, name, roles, settings, created_at, updated_at)"
        " VALUES (?, ?, '[]', '{\"lambda_per_day\": 0.02}', ?, ?)",
        [(f"a{n:02d}", f"Agent {n}", stamp, stamp) for n in range(AGENTS)],
    )
    rows = []
    for n in range(AGENTS):
        agent = f"a{n:02d}"
        for i in range(BIG_DECISIONS if agent == BIG_AGENT else OTHER_BELIEFS):
            content = f"Lesson {agent}-{i} about step {rng.randint(1, 999)}"
            created = now - timedelta(days=rng.uniform(0, 30))
            decided = created + timedelta(hours=rng.uniform(0.1, 72))
            pending = rng.random() < 0.05
            status = "pending" if pending else rng.choice(STATUSES)
            reasons = rng.choice(
                ("[]", "[]", "[]", '["contradicts:b_x"]', '["near_duplicate_of:b_y"]')
            )
            served = (
                rfc3339(now - timedelta(days=rng.uniform(0, 60))) if rng.random() < 0.5 else None
            )
            rows.append(
                (
                    new_id("b"),
                    agent,
                    content,
                    normalise(content),
                    status,
                    round(rng.uniform(0.3, 0.95), 3),
                    reasons,
                    rfc3339(created),
                    rfc3339(min(decided, now)) if not pending else rfc3339(created),
                    None if pending else rng.choice(REVIEWERS),
                    None if pending else rfc3339(min(decided, now)),
                    content if not pending and rng.random() < 0.1 else None,
                    served,
                )
            )
    conn.executemany(
        "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
        " provenance, review_reasons, created_at, updated_at, decided_by, decided_at, version,"
        " proposed_content, last_injected_at)"
        " VALUES (?, ?, ?, ?, ?, ?, 'add', 'clean', ?, ?, ?, ?, ?, 2, ?, ?)",
        rows,
    )
    conn.commit()
    conn.close()


async def _scrapes(path: Path) -> tuple[list[float], list[float], int]:
    """(ms per scrape re-reading the database, ms per cached scrape, bytes per exposition)."""
    store = Store(path)
    await store.open()
    try:
        fresh, cached, size = [], [], 0
        for _ in range(SCRAPE_RUNS):
            metrics.DATABASE.refresh_s = 0.0
            began = time.perf_counter()
            await metrics.DATABASE.refresh(store, system_clock())
            size = len(metrics.render(store))
            fresh.append((time.perf_counter() - began) * 1000)
            metrics.DATABASE.refresh_s = metrics.DATABASE_REFRESH_S
            began = time.perf_counter()
            await metrics.DATABASE.refresh(store, system_clock())
            metrics.render(store)
            cached.append((time.perf_counter() - began) * 1000)
        return fresh, cached, size
    finally:
        await store.close()


async def _reports(path: Path) -> list[float]:
    """ms per memory report of the agent with 100,000 decisions."""
    store = Store(path)
    await store.open()
    try:
        timings = []
        for _ in range(REPORT_RUNS):
            began = time.perf_counter()
            report = await memory_report(store, BIG_AGENT, system_clock(), days=30)
            timings.append((time.perf_counter() - began) * 1000)
        assert report.time_to_decision.decisions > 0.9 * BIG_DECISIONS
        return timings
    finally:
        await store.close()


async def _context_throughput(data_dir: Path) -> tuple[list[float], list[float]]:
    """Context reads per second over ASGI, counting off and on, in alternating rounds."""
    settings = Settings(data_dir=data_dir, scheduler=False, rate_limit_per_minute=0, metrics=True)
    app = create_app(settings, components=[context_component()])
    async with app.lifespan():
        store = app.state.services.store

        async def key(conn):
            return await create_key(
                conn, scope="admin", agents=None, label="bench", clock=system_clock
            )

        secret, _ = await store.write(key)
        transport = httpx.ASGITransport(app=app)
        headers = {"Authorization": f"Bearer {secret}"}
        async with httpx.AsyncClient(
            transport=transport, base_url="http://bench", headers=headers
        ) as client:
            url = "/api/v1/agents/a01/memory/context"
            assert (await client.get(url)).status_code == 200
            off, on = [], []
            for _ in range(CONTEXT_ROUNDS):
                for enabled, rates in ((False, off), (True, on)):
                    metrics.enable(enabled)
                    began = time.perf_counter()
                    for _ in range(CONTEXT_READS):
                        await client.get(url)
                    rates.append(CONTEXT_READS / (time.perf_counter() - began))
        return off, on


def measure() -> list[dict]:
    """Seed once, then time scrapes, reports and the context path."""
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        path = data_dir / "credence.sqlite3"
        _seed(path)
        fresh, cached, size = asyncio.run(_scrapes(path))
        reports = asyncio.run(_reports(path))
        off, on = asyncio.run(_context_throughput(data_dir))
    ratios = [b / a for a, b in zip(off, on, strict=True)]
    return [
        figure(
            "metrics scrape reading the database (50 agents, 110k beliefs)", fresh, SCRAPE_TARGET_MS
        ),
        figure("metrics scrape from the cached gauges", cached, SCRAPE_TARGET_MS),
        figure("metrics exposition size", [size / 1024], 64.0, unit="KB"),
        figure("memory report over 100k decisions", reports, REPORT_TARGET_MS),
        figure("context reads with counting off", off, 0.0, unit="per_s", better="higher"),
        figure("context reads with counting on", on, 0.0, unit="per_s", better="higher"),
        figure(
            "context throughput kept with metrics on (on/off)",
            ratios,
            THROUGHPUT_RATIO_TARGET,
            unit="ratio",
            better="higher",
        ),
    ]


if __name__ == "__main__":
    for row in measure():
        print(row)
