"""Benchmark: Keep decisions with 64 concurrent loopback clients, against the server's /healthz."""

from __future__ import annotations

import asyncio
import itertools
import sys
import tempfile
from pathlib import Path

from harness.httpload import (
    UNLIMITED_RATE_ENV,
    Request,
    ServerProcess,
    healthz_load,
    run_load,
    seed_pending,
    summarise,
)

CONCURRENCY = 64
RUNS = 5
RUN_SECONDS = 1.5
WARMUP_KEEPS = 300
# Enough pending beliefs that no run runs dry even at several thousand Keeps a second.
AGENTS = 8
PER_AGENT = 1_500
THROUGHPUT_RATIO_TARGET = 0.5  # Keep throughput ≥ half of /healthz throughput, synchronous=FULL
P50_RATIO_TARGET = 2.0  # what the throughput target means for latency at a fixed concurrency
P99_TARGET_MS = 250.0  # a swipe must still feel immediate under a 64-client burst


def keep_source(pending: list[tuple[str, int]], admin_key: str):
    """Each request keeps its own pending belief, with If-Match on its version."""
    supply = iter(pending)
    counter = itertools.count()

    def next_request(_: int, __: int) -> Request | None:
        belief = next(supply, None)
        if belief is None:
            return None
        belief_id, version = belief
        return Request(
            "POST",
            f"/api/v1/beliefs/{belief_id}/keep",
            {
                "Authorization": f"Bearer {admin_key}",
                "If-Match": f'"{version}"',
                "Idempotency-Key": f"bench-keep-{next(counter)}",
            },
        )

    return next_request


async def _measure(server: ServerProcess, seeded) -> dict[str, list[float]]:
    source = keep_source(seeded.pending, seeded.admin_key)
    await healthz_load(server.url, concurrency=CONCURRENCY, duration_s=0.5)
    warm = await run_load(
        server.url, source, concurrency=CONCURRENCY, duration_s=30, max_requests=WARMUP_KEEPS
    )
    _check(warm.statuses, warm.errors, "warm-up")
    names = ("keep", "health", "keep50", "keep99", "health50", "health99", "keep_cpu", "health_cpu")
    series: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(RUNS):
        cpu = server.cpu_seconds()
        health = await healthz_load(server.url, concurrency=CONCURRENCY, duration_s=RUN_SECONDS)
        health_cpu = server.cpu_seconds() - cpu
        keeps = await run_load(server.url, source, concurrency=CONCURRENCY, duration_s=RUN_SECONDS)
        keep_cpu = server.cpu_seconds() - cpu - health_cpu
        _check(keeps.statuses, keeps.errors, "keep run")
        series["keep"].append(keeps.per_s)
        series["health"].append(health.per_s)
        series["keep_cpu"].append(keeps.completed / max(keep_cpu, 1e-9))
        series["health_cpu"].append(health.completed / max(health_cpu, 1e-9))
        series["keep50"].append(keeps.p50)
        series["keep99"].append(keeps.p99)
        series["health50"].append(health.p50)
        series["health99"].append(health.p99)
    return series


def _check(statuses, errors: int, what: str) -> None:
    if errors or set(statuses) != {200}:
        raise RuntimeError(f"{what}: statuses {dict(statuses)}, transport errors {errors}")


def _ratios(top: list[float], bottom: list[float]) -> list[float]:
    return [a / b for a, b in zip(top, bottom, strict=True)]


def figures(series: dict[str, list[float]]) -> list[dict]:
    """Turn per-run samples into the three Keep figures, each with its /healthz comparison."""
    health = summarise(series["health"])["median"]
    throughput_ratio = summarise(_ratios(series["keep"], series["health"]))
    p50_ratio = summarise(_ratios(series["keep50"], series["health50"]))
    p99_ratio = summarise(_ratios(series["keep99"], series["health99"]))
    return [
        {
            "name": f"decisions: Keep throughput, {CONCURRENCY} clients, synchronous=FULL",
            "unit": "per_s",
            **summarise(series["keep"]),
            "runs": len(series["keep"]),
            "target": THROUGHPUT_RATIO_TARGET * health,
            "better": "higher",
            "healthz_per_s": health,
            "ratio": throughput_ratio,
            "ratio_target": THROUGHPUT_RATIO_TARGET,
        },
        {
            "name": "decisions: Keeps per server CPU-second (noise-robust form of the above)",
            "unit": "per_s",
            **summarise(series["keep_cpu"]),
            "runs": len(series["keep_cpu"]),
            "target": THROUGHPUT_RATIO_TARGET * summarise(series["health_cpu"])["median"],
            "better": "higher",
            "healthz_per_s": summarise(series["health_cpu"])["median"],
            "ratio": summarise(_ratios(series["keep_cpu"], series["health_cpu"])),
            "ratio_target": THROUGHPUT_RATIO_TARGET,
        },
        {
            "name": f"decisions: Keep latency p50, {CONCURRENCY} clients",
            "unit": "ms",
            **summarise(series["keep50"]),
            "runs": len(series["keep50"]),
            "target": P50_RATIO_TARGET * summarise(series["health50"])["median"],
            "better": "lower",
            "healthz_per_s": health,
            "ratio": p50_ratio,
            "ratio_target": P50_RATIO_TARGET,
        },
        {
            "name": f"decisions: Keep latency p99, {CONCURRENCY} clients",
            "unit": "ms",
            **summarise(series["keep99"]),
            "runs": len(series["keep99"]),
            "target": P99_TARGET_MS,
            "better": "lower",
            "healthz_per_s": health,
            "ratio": p99_ratio,
        },
    ]


def measure() -> list[dict]:
    """Seed pending beliefs, serve them from a subprocess, and time Keeps against /healthz."""
    with tempfile.TemporaryDirectory(prefix="credence-bench-decisions-") as root:
        data_dir = Path(root) / "data"
        seeded = seed_pending(data_dir, agents=AGENTS, per_agent=PER_AGENT)
        server = ServerProcess(data_dir, UNLIMITED_RATE_ENV).start()
        try:
            series = asyncio.run(_measure(server, seeded))
        finally:
            server.stop()
    return figures(series)


if __name__ == "__main__":
    for figure in measure():
        ratio = figure["ratio"]["median"]
        print(
            f"{figure['name']:<58} median {figure['median']:>9.1f} {figure['unit']:<5}"
            f" p10 {figure['p10']:.1f} p90 {figure['p90']:.1f}  target {figure['target']:.1f}"
            f"  healthz {figure['healthz_per_s']:.0f}/s  ratio {ratio:.2f}",
            file=sys.stdout,
        )
