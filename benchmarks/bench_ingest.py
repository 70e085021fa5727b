"""Benchmark: episodes per second through the batch endpoint (redaction + embedding + store).

Measured on SQLite and on PostgreSQL in one run, each beside the /healthz of its own server.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

from harness.httpload import Request, healthz_source, seed_pending, summarise
from harness.pg import throwaway_postgres

from benchmarks.engines import ENGINES, PG_DURABLE, Servers, serving, spread_load

SEED = 20261208
BATCH = 250
CONCURRENCY = 4  # a few agents flushing their turn logs at once
RUNS = 4
RUN_SECONDS = 2.0
BODIES = 24  # distinct pre-encoded batches, cycled, so the client spends no time building JSON
TARGET_PER_S = 2_000.0

_TEXT = (
    "the agent split the large pdf upload into chunks because the ingester timed out after"
    " ten megabytes then retried the request with a smaller page size and checked the logs"
    " for the webhook token expiry before answering the user who asked for a monthly invoice"
    " report in the finance spreadsheet with metric units and a formal greeting"
)
_WORDS = _TEXT.split(" ")
# One secret in roughly every fourth episode, of the kinds agents actually leak into logs.
_SECRETS = (
    "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4",
    "AKIA" + "IOSFODNN7EXAMPLE",
    "ghp_" + "x" * 36,
    "xoxb-" + "1234567890-abcdefghij",
    "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
)


def _episode(rng: random.Random, number: int) -> dict:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(30, 70))]
    if rng.random() < 0.25:
        words.insert(rng.randrange(len(words)), rng.choice(_SECRETS))
    episode: dict = {
        "session_id": f"sess-{number // 20}",
        "summary": " ".join(words),
        "role_label": rng.choice(["coder", "writer", "analyst"]),
        "finished_at": f"2026-11-{1 + number % 28:02d}T{number % 24:02d}:00:00Z",
    }
    if rng.random() < 0.3:
        episode["interventions"] = [
            {"trigger": rng.choice(["steer", "denial", "followup"]), "text": "use pnpm not npm"}
        ]
    if rng.random() < 0.1:
        episode["metadata"] = {"tool": "web_fetch", "url": "https://example.org/page"}
    return episode


def batch_bodies(count: int = BODIES, size: int = BATCH) -> list[bytes]:
    """Pre-encoded batch request bodies of ``size`` episodes each."""
    rng = random.Random(SEED)
    numbers = itertools.count()
    return [
        json.dumps({"episodes": [_episode(rng, next(numbers)) for _ in range(size)]}).encode()
        for _ in range(count)
    ]


def ingest_source(agent_id: str, key: str, bodies: list[bytes]):
    """Each request posts the next pre-encoded batch to the agent's batch endpoint."""
    cycle = itertools.cycle(bodies)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    path = f"/api/v1/agents/{agent_id}/episodes/batch"
    return lambda _worker, _sequence: Request("POST", path, headers, next(cycle))


async def _measure(servers: Servers, agent_id: str, key: str) -> dict[str, list[float]]:
    source = ingest_source(agent_id, key, batch_bodies())
    warm = await spread_load(servers, source, concurrency=CONCURRENCY, duration_s=1.0)
    _check(warm.statuses, warm.errors)
    series: dict[str, list[float]] = {"episodes": [], "health": []}
    for _ in range(RUNS):
        health = await spread_load(servers, healthz_source, concurrency=CONCURRENCY, duration_s=1.0)
        batches = await spread_load(
            servers, source, concurrency=CONCURRENCY, duration_s=RUN_SECONDS
        )
        _check(batches.statuses, batches.errors)
        series["episodes"].append(batches.per_s * BATCH)
        series["health"].append(health.per_s)
    return series


def _check(statuses, errors: int) -> None:
    if errors or set(statuses) != {201}:
        raise RuntimeError(f"ingest: statuses {dict(statuses)}, transport errors {errors}")


def figure(engine: str, series: dict[str, list[float]]) -> dict:
    """One engine's episodes/s figure beside its server's /healthz."""
    ratios = [e / h for e, h in zip(series["episodes"], series["health"], strict=True)]
    return {
        "name": f"ingest {engine}: episodes/s via batch endpoint"
        f" ({BATCH}/batch, {CONCURRENCY} clients)",
        "unit": "per_s",
        **summarise(series["episodes"]),
        "runs": len(series["episodes"]),
        "target": TARGET_PER_S,
        "better": "higher",
        "healthz_per_s": summarise(series["health"])["median"],
        "ratio": summarise(ratios),
    }


def measure() -> list[dict]:
    """Serve a fresh installation on each engine from a subprocess and post batches to it."""
    rows = []
    with (
        tempfile.TemporaryDirectory(prefix="credence-bench-ingest-") as root,
        throwaway_postgres(durable=PG_DURABLE) as pg,
    ):
        data_dir = Path(root) / "data"
        seeded = seed_pending(data_dir, agents=1, per_agent=0)
        pristine = Path(root) / "pristine"
        shutil.copytree(data_dir, pristine)
        for engine in ENGINES:
            with serving(data_dir if engine == "sqlite" else pristine, engine, pg) as servers:
                series = asyncio.run(_measure(servers, seeded.agents[0], seeded.admin_key))
            rows.append(figure(engine, series))
    return rows


if __name__ == "__main__":
    for figure in measure():
        print(
            f"{figure['name']:<60} median {figure['median']:>9.1f} {figure['unit']}"
            f"  p10 {figure['p10']:.1f}  p90 {figure['p90']:.1f}  target {figure['target']}"
            f"  healthz {figure['healthz_per_s']:.0f}/s",
            file=sys.stdout,
        )
