"""Benchmark: the bundled sentence model's cold load, single-summary latency and throughput."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
from collections.abc import Callable

from benchmarks.figures import figure
from credence.memory.semantics.model import MiniLMEmbedder

SEED = 20261201
_VOCABULARY = """the ingester crashed on large pdf uploads over ten megabytes so the agent split
    the file into chunks retried the upload and the reviewer asked to use pnpm instead of npm
    for installs deploy staging rollback migration token cache timeout webhook invoice report
    summary"""
_WORDS = _VOCABULARY.split()

_COLD_LOAD = (
    "import time; t = time.perf_counter();"
    " from credence.memory.semantics.model import MiniLMEmbedder;"
    " MiniLMEmbedder().load(); print((time.perf_counter() - t) * 1000)"
)


def _summary(rng: random.Random) -> str:
    """A summary-sized text (~60 words, like an episode's Request/Did/Outcome line)."""
    return " ".join(rng.choice(_WORDS) for _ in range(60))


# Beliefs as reviewers keep them: one sentence of 6 to 20 words (issue 20's "embedding a
# belief ≤ 5 ms"; a 60-word summary costs four to ten times a belief, since the model's cost
# grows with its word pieces: 18.6 ms against 4.1 ms on these six in one run).
_BELIEFS = (
    "The user prefers tea to coffee.",
    "Deploys to production happen only on Tuesdays after the change review.",
    "The user's daughter Mia is allergic to peanuts and tree nuts.",
    "Split PDFs over ten megabytes before uploading them to the ingester.",
    "Use pnpm instead of npm for installs in this repository.",
    "The user's landlord wants the rent by the first of each month, paid by bank transfer.",
)


def _timings(action: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def _async_timings(embedder: MiniLMEmbedder, texts: list[str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await embedder.embed(texts)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def measure() -> list[dict]:
    """Measure cold load (fresh processes), one summary's and one belief's latency, and
    256-text batch throughput."""
    rng = random.Random(SEED)
    cold = []
    for _ in range(5):
        completed = subprocess.run(
            [sys.executable, "-c", _COLD_LOAD], capture_output=True, text=True, check=True
        )
        cold.append(float(completed.stdout.strip()))

    embedder = MiniLMEmbedder()
    embedder.load()
    one = [_summary(rng)]
    single = asyncio.run(_async_timings(embedder, one, 200))
    beliefs = [ms for text in _BELIEFS for ms in asyncio.run(_async_timings(embedder, [text], 50))]

    batch = [_summary(rng) for _ in range(256)]
    batch_ms = _timings(lambda: embedder.embed_sync(batch), 30)
    throughput = [len(batch) / (ms / 1000) for ms in batch_ms]
    return [
        figure("embed_cold_load", cold, 1000.0, unit="ms", better="lower"),
        figure("embed_one_summary", single, 5.0, unit="ms", better="lower"),
        figure("embed_one_belief", beliefs, 5.0, unit="ms", better="lower"),
        figure("embed_batch_throughput", throughput, 200.0, unit="per_s", better="higher"),
    ]


if __name__ == "__main__":
    for row in measure():
        print(
            f"{row['name']:<26} median {row['median']:>10.2f} {row['unit']:<6}"
            f" p10 {row['p10']:.2f}  p90 {row['p90']:.2f}  runs {row['runs']}"
            f"  target {row['target']} ({row['better']} is better)"
        )
