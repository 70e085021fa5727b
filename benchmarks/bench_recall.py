"""Benchmark: recall search (FTS5 BM25 fused with cosine) over 100,000 episodes of one agent."""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from credence.db.store import Store
from credence.embed import normalize_rows
from credence.memory.read import recall
from credence.memory.semantics.model import MINILM_DIM, MiniLMEmbedder

SEED = 20261202
EPISODES = 100_000
TARGET_MS = 50.0
RUNS = 40
# Eight named topics the queries aim at, plus many generated ones, so that each topic word
# occurs in a few hundred episodes; everyday words occur in thousands and stop words in all.
_NAMED_TOPICS = (
    "pdf ingester upload chunk megabytes timeout retry split file",
    "deploy staging rollback migration release friday pipeline",
    "pnpm npm install lockfile workspace dependency node",
    "invoice report summary finance monthly export spreadsheet",
    "webhook token cache expiry refresh auth header bearer",
    "metric units imperial kilometres miles temperature celsius",
    "email draft reply tone formal greeting signature",
    "database index query slow vacuum sqlite wal checkpoint",
)
GENERATED_TOPICS = 392
_EVERYDAY_TEXT = (
    "agent user asked checked logs noted result fixed tried ran found wrote answer step task"
    " turn today morning later quickly carefully large small time out error fail work new old"
    " first last again help need want make change update add remove open close start stop"
)
_FILLER_TEXT = "the a an and or of to in on for with it is was then so but that this"
_EVERYDAY = _EVERYDAY_TEXT.split()
_FILLER = _FILLER_TEXT.split()
QUERIES = (
    ["large pdf uploads time out"],
    ["deploy on friday", "rollback the migration"],
    ["use pnpm not npm", "lockfile conflicts", "workspace install"],
)


def _topics(rng: random.Random) -> list[list[str]]:
    topics = [topic.split() for topic in _NAMED_TOPICS]
    letters = "abcdefghijklmnopqrstuvwxyz"
    for _ in range(GENERATED_TOPICS):
        topics.append(["".join(rng.choice(letters) for _ in range(7)) for _ in range(8)])
    return topics


def _summary(rng: random.Random, topics: list[list[str]]) -> tuple[str, str]:
    topic = rng.choice(topics)
    words = []
    for _ in range(40):
        draw = rng.random()
        pool = topic if draw < 0.35 else _EVERYDAY if draw < 0.6 else _FILLER
        words.append(rng.choice(pool))
    said = " ".join(rng.choice(topic) for _ in range(6)) if rng.random() < 0.3 else ""
    return " ".join(words), said


async def build(data_dir: Path, episodes: int = EPISODES) -> Store:
    """A store holding one agent with ``episodes`` synthetic episodes (random unit embeddings)."""
    rng = random.Random(SEED)
    topics = _topics(rng)
    vectors = normalize_rows(
        np.random.default_rng(SEED).standard_normal((episodes, MINILM_DIM)).astype(np.float32)
    )
    store = Store(data_dir / "credence.sqlite3")
    await store.open()

    async def agent(conn):
        await conn.run(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('bench', 'Bench',"
            " '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')"
        )

    await store.write(agent)
    chunk = 5000
    for start in range(0, episodes, chunk):
        rows = []
        for offset in range(start, min(episodes, start + chunk)):
            summary, said = _summary(rng, topics)
            minute = offset % 60
            rows.append(
                (
                    f"ep_{offset:026d}",
                    summary,
                    said,
                    f"2026-01-{1 + offset * 28 // episodes:02d}T10:{minute:02d}:00.000000Z",
                    "untrusted" if offset % 17 == 0 else "clean",
                    vectors[offset].astype("<f4").tobytes(),
                )
            )

        async def insert(conn, rows=rows):
            await conn.run_many(
                "INSERT INTO episodes(id, agent_id, session_id, finished_at, summary,"
                " intervention_text, origin, embedding, created_at) VALUES"
                " (?1, 'bench', 's', ?4, ?2, ?3, ?5, ?6, ?4)",
                rows,
            )

        await store.write(insert)
    return store


async def _measure_async(episodes: int, runs: int) -> list[dict]:
    embedder = MiniLMEmbedder()
    embedder.load()
    with tempfile.TemporaryDirectory() as tmp:
        store = await build(Path(tmp), episodes)
        try:
            started = time.perf_counter()
            await recall.search(store, embedder, "bench", ["warm the cache"], 50)
            cold_ms = (time.perf_counter() - started) * 1000
            samples = []
            for run in range(runs):
                queries = QUERIES[run % len(QUERIES)]
                started = time.perf_counter()
                hits = await recall.search(store, embedder, "bench", queries, 50, reflected=False)
                samples.append((time.perf_counter() - started) * 1000)
                assert len(hits) == 50

            async def watermark(conn):
                await conn.run(
                    "UPDATE episodes SET reflected_at = '2026-02-01T00:00:00.000000Z'"
                    " WHERE seq % 2000 != 0"
                )

            await store.write(watermark)
            pulls = []
            for run in range(runs):
                queries = QUERIES[run % len(QUERIES)]
                started = time.perf_counter()
                hits = await recall.search(store, embedder, "bench", queries, 50, reflected=False)
                pulls.append((time.perf_counter() - started) * 1000)
                assert hits and all(not h.episode.reflected_at for h in hits)
        finally:
            await store.close()
    deciles = statistics.quantiles(samples, n=10)
    pull_deciles = statistics.quantiles(pulls, n=10)
    return [
        {
            "name": f"recall search k=50 over {episodes:,} episodes (1-3 queries)",
            "unit": "ms",
            "median": statistics.median(samples),
            "p10": deciles[0],
            "p90": deciles[-1],
            "runs": len(samples),
            "target": TARGET_MS,
            "better": "lower",
        },
        {
            "name": f"recall pull: 50 un-reflected among {episodes:,} episodes",
            "unit": "ms",
            "median": statistics.median(pulls),
            "p10": pull_deciles[0],
            "p90": pull_deciles[-1],
            "runs": len(pulls),
            "target": TARGET_MS,
            "better": "lower",
        },
        {
            "name": f"recall first search (loads the {episodes:,}-row matrix cache)",
            "unit": "ms",
            "median": cold_ms,
            "p10": cold_ms,
            "p90": cold_ms,
            "runs": 1,
            "target": 5000.0,
            "better": "lower",
        },
    ]


def measure(episodes: int = EPISODES, runs: int = RUNS) -> list[dict]:
    """Median, p10 and p90 of warm recall searches, plus the one cold (cache-loading) search."""
    return asyncio.run(_measure_async(episodes, runs))


if __name__ == "__main__":
    for figure in measure():
        print(
            f"{figure['name']}: median {figure['median']:.2f} {figure['unit']}"
            f" (p10 {figure['p10']:.2f}, p90 {figure['p90']:.2f}, target {figure['target']})"
        )
