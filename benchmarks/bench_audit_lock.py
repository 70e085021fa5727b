"""Another agent's Keep while one agent is under audited-write load, on PostgreSQL (issue 22.12).

Every decision appends to the audit chain inside its transaction. Before migration 0046 the
chain was one, extended under one advisory lock held to COMMIT, so every audited write of every
agent queued behind every other. Now each agent has a chain and a lock of its own. A `credence
serve` child on a throwaway PostgreSQL serves two agents: BUSY_WRITERS clients cycle Keep and
Reopen on the busy agent's beliefs (two audited writes per cycle), while one client keeps (and
reopens, untimed) the calm agent's belief; the figures are the calm agent's Keep p50 and p95,
idle and under that load. The same run repeats on a database whose trigger takes the old single
lock ahead of the agent's (the pre-0046 behaviour, for comparison).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psycopg
from harness.httpload import UNLIMITED_RATE_ENV, ServerProcess, seed_pending
from harness.pg import throwaway_postgres

from benchmarks.engines import PG_DURABLE, copy_to_database
from benchmarks.figures import figure

BUSY_WRITERS = 8
CALM_KEEPS = 40
ROUNDS = 3
P95_TARGET_MS = 100.0
START_TIMEOUT_S = 180.0
MIGRATION = (
    Path(__file__).resolve().parent.parent / "server/credence/db/postgres/0046_audit_per_agent.sql"
)
AGENT_LOCK = "PERFORM pg_advisory_xact_lock(29298, hashtext(NEW.agent_id));"
# Version 2 rows, but behind the one lock every appender took before 0046.
SINGLE_LOCK = "PERFORM pg_advisory_xact_lock(7165901438906098804);\n    " + AGENT_LOCK


def _single_lock_trigger() -> str:
    """The shipped trigger function with the old global lock taken first."""
    text = MIGRATION.read_text()
    start = text.index("CREATE OR REPLACE FUNCTION audit_extend_chain()")
    function = text[start:]
    assert AGENT_LOCK in function, "the trigger no longer takes the agent lock this bench names"
    return function.replace(AGENT_LOCK, SINGLE_LOCK)


class Cycler:
    """Keep, then Reopen, one belief over and over, following its version."""

    def __init__(self, client: httpx.AsyncClient, belief_id: str, version: int) -> None:
        self.client, self.belief_id, self.version = client, belief_id, version

    async def decide(self, action: str) -> float:
        """One decision at the current version; its latency in ms."""
        began = time.perf_counter()
        response = await self.client.post(
            f"/api/v1/beliefs/{self.belief_id}/{action}",
            headers={"If-Match": f'"{self.version}"'},
        )
        elapsed = (time.perf_counter() - began) * 1000
        if response.status_code != 200:
            raise RuntimeError(f"{action} {self.belief_id}: {response.status_code} {response.text}")
        self.version = response.json()["version"]
        return elapsed

    async def keep_timed(self) -> float:
        """Keep (timed), then Reopen so the next Keep has a pending belief again."""
        elapsed = await self.decide("keep")
        await self.decide("reopen")
        return elapsed


async def _calm_keeps(calm: Cycler) -> list[float]:
    return [await calm.keep_timed() for _ in range(CALM_KEEPS)]


async def _round(url: str, admin: str, busy: list[tuple[str, int]], calm: Cycler) -> list[float]:
    """The calm agent's Keep latencies while BUSY_WRITERS cycle the busy agent's beliefs."""
    stop = asyncio.Event()
    headers = {"Authorization": f"Bearer {admin}"}
    limits = httpx.Limits(max_connections=BUSY_WRITERS)
    async with httpx.AsyncClient(
        base_url=url, headers=headers, limits=limits, timeout=60
    ) as client:
        cyclers = [Cycler(client, belief_id, version) for belief_id, version in busy]

        async def writer(cycler: Cycler) -> None:
            while not stop.is_set():
                await cycler.keep_timed()

        tasks = [asyncio.create_task(writer(c)) for c in cyclers]
        await asyncio.sleep(0.5)
        try:
            return await _calm_keeps(calm)
        finally:
            stop.set()
            await asyncio.gather(*tasks)
            busy[:] = [(c.belief_id, c.version) for c in cyclers]


async def _measure(url: str, admin: str, pending: list[tuple[str, int]], busy_agent: str):
    """(idle p50s, idle p95s, loaded p50s, loaded p95s) over ROUNDS."""
    series: tuple[list[float], list[float], list[float], list[float]] = ([], [], [], [])
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {admin}"}, timeout=60
    ) as client:
        owner = {
            belief_id: (await client.get(f"/api/v1/beliefs/{belief_id}")).json()["agent_id"]
            for belief_id, _ in pending
        }
        busy = [p for p in pending if owner[p[0]] == busy_agent][:BUSY_WRITERS]
        calm = Cycler(client, *next(p for p in pending if owner[p[0]] != busy_agent))
        for _ in range(ROUNDS):
            idle = await _calm_keeps(calm)
            loaded = await _round(url, admin, busy, calm)
            for samples, value in zip(
                series, (_p50(idle), _p95(idle), _p50(loaded), _p95(loaded)), strict=True
            ):
                samples.append(value)
    return series


def _p50(samples: list[float]) -> float:
    return statistics.median(samples)


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def measure() -> list[dict]:
    """The calm agent's Keep p50/p95, idle and under load, per-agent chains and single lock."""
    rows: list[dict] = []
    with (
        tempfile.TemporaryDirectory(prefix="credence-bench-audit-") as root,
        throwaway_postgres(durable=PG_DURABLE) as pg,
    ):
        data_dir = Path(root) / "data"
        seeded = seed_pending(data_dir, agents=2, per_agent=BUSY_WRITERS)
        busy_agent = seeded.agents[0]
        for variant in ("per-agent chains", "single lock"):
            url = copy_to_database(data_dir, pg, f"audit-{variant[:6]}")
            if variant == "single lock":
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute(_single_lock_trigger())
            own = Path(root) / variant.replace(" ", "-")
            own.mkdir()
            env = {**UNLIMITED_RATE_ENV, "CREDENCE_DATABASE_URL": url}
            # A slow start on a busy machine is not what this measures: allow it time.
            with ServerProcess(own, env).start(timeout=START_TIMEOUT_S) as server:
                idle50, idle95, load50, load95 = asyncio.run(
                    _measure(server.url, seeded.admin_key, seeded.pending, busy_agent)
                )
            label = f"audit {variant}: other agent's Keep"
            load = f"{BUSY_WRITERS} writers on one agent"
            rows += [
                figure(f"{label} p50, idle", idle50, P95_TARGET_MS),
                figure(f"{label} p95, idle", idle95, P95_TARGET_MS),
                figure(f"{label} p50, {load}", load50, P95_TARGET_MS),
                figure(f"{label} p95, {load}", load95, P95_TARGET_MS),
            ]
    return rows


if __name__ == "__main__":
    for row in measure():
        print(f"{row['name']:<70} median {row['median']:>8.1f} ms", file=sys.stdout)
