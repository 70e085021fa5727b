"""Benchmark: one full stub reflection job (50 episodes, 10 proposals) against 10,000 beliefs."""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.figures import figure
from credence.app import create_app
from credence.clock import rfc3339
from credence.embed import normalize_rows
from credence.models import EpisodeIn, InterventionIn
from credence.reflection import jobs
from credence.reflection.engine import Engine
from credence.settings import Settings

SEED = 20261203
BELIEFS = 10_000
EPISODES = 50
PROPOSALS = 10
RUNS = 15
TARGET_MS = 250.0
LEASE_S = 60.0
_WORDS_TEXT = (
    "deploy staging rollback migration friday pdf ingester upload chunk invoice report export"
    " spreadsheet webhook token cache expiry metric units grams kilometres email draft reply"
    " formal signature database index vacuum checkpoint tests suite push branch review squash"
    " merge lockfile pnpm workspace docker image python version timeout retry backoff queue"
    " customer refund voucher escalate language tone summary citation source format answer"
)
_WORDS = _WORDS_TEXT.split()


def _sentence(rng: random.Random, words: int = 9) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


async def _seed_beliefs(services, rng: random.Random) -> None:
    vectors = normalize_rows(
        np.random.default_rng(SEED)
        .standard_normal((BELIEFS, services.embedder.dim))
        .astype(np.float32)
    )
    now = rfc3339(services.clock())
    statuses = ["active"] * 6 + ["pending"] * 3 + ["forgotten"]
    rows = []
    for n in range(BELIEFS):
        content = f"{_sentence(rng)} ({n})"
        rows.append(
            {
                "id": f"b_{n:026d}",
                "content": content,
                "key": content.lower(),
                "status": statuses[n % len(statuses)],
                "embedding": vectors[n].astype("<f4").tobytes(),
                "now": now,
            }
        )

    async def insert(conn):
        await conn.run(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('bench', 'Bench', ?, ?)",
            (now, now),
        )
        await conn.run_many(
            "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
            " provenance, created_at, updated_at, embedding) VALUES (:id, 'bench', :content,"
            " :key, :status, 0.7, 'add', 'clean', :now, :now, :embedding)",
            rows,
        )

    await services.store.write(insert)


async def _one_run(services, engine: Engine, rng: random.Random, run: int) -> tuple[float, dict]:
    episodes = [
        EpisodeIn(
            session_id=f"s{run}",
            summary=_sentence(rng, 30),
            interventions=[InterventionIn("steer", _sentence(rng, 6))],
        )
        for _ in range(EPISODES)
    ]
    rows, _ = await services.episodes.ingest("bench", episodes)
    ids = [row.id for row in rows]
    answer = [
        {
            "op": "add",
            "belief": f"{_sentence(rng)} run {run} lesson {n}",
            "confidence": 0.6,
            "rationale": "The user corrected this repeatedly.",
            "source_episodes": rng.sample(ids, 3),
        }
        for n in range(PROPOSALS)
    ]
    job = await jobs.submit(
        services.store,
        agent_id="bench",
        trigger="manual",
        input_data={"agent_id": "bench", "reflector": "stub", "stub_output": json.dumps(answer)},
        now=rfc3339(services.clock()),
    )
    started = time.perf_counter()
    claimed = await jobs.claim(services.store, engine.owner, services.clock(), LEASE_S)
    assert claimed == job.id
    await engine.run(job.id)
    elapsed = (time.perf_counter() - started) * 1000
    done = await jobs.get(services.store, job.id)
    assert done is not None and done.status == "succeeded", done
    assert done.output_data.episodes_considered == EPISODES
    assert len(done.output_data.results) == PROPOSALS
    return elapsed, {step.name: step.duration_ms for step in done.steps}


async def _measure_async(runs: int) -> list[dict]:
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), scheduler=False)
        app = create_app(settings, components=[])
        async with app.lifespan():
            services = app.state.services
            await _seed_beliefs(services, rng)
            engine = Engine(services.reflection, "wrk_bench", lease_s=LEASE_S)
            await _one_run(services, engine, rng, -1)  # warm the embedder and caches
            totals, checks, submits = [], [], []
            for run in range(runs):
                elapsed, steps = await _one_run(services, engine, rng, run)
                totals.append(elapsed)
                checks.append(steps["check"])
                submits.append(steps["submit"])
    shape = f"{EPISODES} episodes, {PROPOSALS} proposals, {BELIEFS:,} beliefs"
    return [
        figure(f"reflection stub job end to end ({shape})", totals, TARGET_MS),
        figure(f"reflection check step (gate over {BELIEFS:,} live beliefs)", checks, 100.0),
        figure("reflection submit step (proposals logic and watermark)", submits, 100.0),
    ]


def measure(runs: int = RUNS) -> list[dict]:
    """Median, p10 and p90 of whole stub jobs (claim to success) and of their heavy steps."""
    return asyncio.run(_measure_async(runs))


if __name__ == "__main__":
    for row in measure():
        print(
            f"{row['name']}: median {row['median']:.1f} {row['unit']}"
            f" (p10 {row['p10']:.1f}, p90 {row['p90']:.1f}, target {row['target']})"
        )
