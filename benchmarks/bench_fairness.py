"""One key's flood of context reads against another key's latency (issue 22, finding 6).

A `credence serve` child process with the shipped read limits (per-key read budget and
concurrency bound) serves two agents. One agent key floods context queries from 32 concurrent
workers while the other key reads its context one request at a time; the figure is that other
key's p95 latency, beside the same key's p95 on an idle server and on a server with the read
limits turned off (the flood then reaches the event loop and the embedder unbounded).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from harness.httpload import ServerProcess, create_key

from benchmarks.figures import figure

FLOOD_WORKERS = 32
CALM_REQUESTS = 60
ROUNDS = 3
P95_TARGET_MS = 250.0
# Writes unlimited so seeding is quick; reads keep their shipped defaults unless turned off.
BOUNDED_ENV = {"CREDENCE_RATE_LIMIT_PER_MINUTE": str(10**9), "CREDENCE_LOG_LEVEL": "WARNING"}
UNBOUNDED_ENV = {
    **BOUNDED_ENV,
    "CREDENCE_READ_RATE_LIMIT_PER_MINUTE": "0",
    "CREDENCE_READ_CONCURRENCY_PER_KEY": "0",
}


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def _seed(url: str, admin: str) -> None:
    """Two agents with a few episodes each, so a context query ranks something."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {admin}"}) as client:
        for agent in ("flood", "calm"):
            client.post("/api/v1/agents", json={"id": agent, "name": agent}).raise_for_status()
            episodes = [
                {"session_id": f"s{n}", "summary": f"ingested report {n}: split the pdf first"}
                for n in range(40)
            ]
            client.post(
                f"/api/v1/agents/{agent}/episodes/batch", json={"episodes": episodes}
            ).raise_for_status()


async def _calm_reads(url: str, key: str) -> list[float]:
    """CALM_REQUESTS context queries one after another; latencies in ms."""
    latencies = []
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}) as c:
        for n in range(CALM_REQUESTS):
            began = time.perf_counter()
            response = await c.get(
                "/api/v1/agents/calm/memory/context", params={"query": f"pdf report {n}"}
            )
            response.raise_for_status()
            latencies.append((time.perf_counter() - began) * 1000)
    return latencies


async def _under_flood(url: str, calm: str, flood: str) -> list[float]:
    """The calm key's latencies while FLOOD_WORKERS loops read the flood agent's context."""
    stop = asyncio.Event()
    limits = httpx.Limits(max_connections=FLOOD_WORKERS)
    headers = {"Authorization": f"Bearer {flood}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits) as client:

        async def worker(n: int) -> None:
            while not stop.is_set():
                response = await client.get(
                    "/api/v1/agents/flood/memory/context", params={"query": f"split pdf {n}"}
                )
                if response.status_code == 429:  # refused at once: the flood tries again
                    await asyncio.sleep(0.01)

        workers = [asyncio.create_task(worker(n)) for n in range(FLOOD_WORKERS)]
        await asyncio.sleep(0.5)
        try:
            return await _calm_reads(url, calm)
        finally:
            stop.set()
            await asyncio.gather(*workers, return_exceptions=True)


def _run(env: dict[str, str]) -> tuple[list[float], list[float]]:
    """(idle p95s, under-flood p95s) over ROUNDS, on a fresh server with ``env``."""
    with tempfile.TemporaryDirectory(prefix="credence-bench-fairness-") as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        admin = create_key(data_dir, "admin")
        with ServerProcess(data_dir, env).start() as server:
            _seed(server.url, admin)
            calm = create_key(data_dir, "agent", "--agent", "calm")
            flood = create_key(data_dir, "agent", "--agent", "flood")
            idle, flooded = [], []
            for _ in range(ROUNDS):
                idle.append(_p95(asyncio.run(_calm_reads(server.url, calm))))
                flooded.append(_p95(asyncio.run(_under_flood(server.url, calm, flood))))
    return idle, flooded


def measure() -> list[dict]:
    """The other key's context p95: idle, under a flood with read limits, and without them."""
    idle, bounded = _run(BOUNDED_ENV)
    _, unbounded = _run(UNBOUNDED_ENV)
    return [
        figure("fairness_other_key_context_p95_idle", idle, P95_TARGET_MS),
        figure("fairness_other_key_context_p95_flood_32", bounded, P95_TARGET_MS),
        figure(
            "fairness_other_key_context_p95_flood_32_unlimited",
            unbounded,
            10 * P95_TARGET_MS,
        ),
    ]
