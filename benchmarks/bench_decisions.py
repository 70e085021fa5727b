"""Benchmark: Keep decisions with 64 concurrent loopback clients, against the server's /healthz.

Measured on SQLite and on PostgreSQL in one run (the same seed, copied), each beside the /healthz
of its own server.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import sys
import tempfile
from pathlib import Path

from harness.httpload import Request, healthz_source, seed_pending, summarise
from harness.pg import throwaway_postgres

from benchmarks.engines import ENGINES, PG_DURABLE, Servers, serving, spread_load

CONCURRENCY = 64
RUNS = 4
RUN_SECONDS = 1.2
WARMUP_KEEPS = 300
# Enough pending beliefs for the warm-up and every run at ~3,000 Keeps a second (seeding them
# through BeliefService is the slow part of this bench, so not many more). A run that uses them
# up fails rather than reporting a short run's rate.
AGENTS = 8
PER_AGENT = 2000
# Keep throughput against /healthz (issues 14 §6 and 25): SQLite with synchronous=FULL, PostgreSQL.
THROUGHPUT_RATIO_TARGET = {"sqlite": 0.3, "postgresql": 0.15}
# Server CPU per Keep (issue 25: a Keep reads the belief once and writes in one batch). The
# PostgreSQL figure is ours: psycopg's per-statement cost is about twice SQLite's.
CPU_MS_TARGET = {"sqlite": 0.4, "postgresql": 0.8}
P50_RATIO_TARGET = 2.0  # what the throughput target means for latency at a fixed concurrency
P99_TARGET_MS = 250.0  # a swipe must still feel immediate under a 64-client burst


class OutOfBeliefs(RuntimeError):
    """The seed's pending beliefs ran out during a run: its rate would be a short run's."""


def keep_source(pending: list[tuple[str, int]], admin_key: str):
    """Each request keeps its own pending belief, with If-Match on its version."""
    supply = iter(pending)
    counter = itertools.count()

    def next_request(_: int, __: int) -> Request | None:
        belief = next(supply, None)
        if belief is None:
            raise OutOfBeliefs(f"all {len(pending)} pending beliefs were kept: seed more")
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


async def _measure(servers: Servers, seeded) -> dict[str, list[float]]:
    source = keep_source(seeded.pending, seeded.admin_key)
    await spread_load(servers, healthz_source, concurrency=CONCURRENCY, duration_s=0.5)
    warm = await spread_load(
        servers, source, concurrency=CONCURRENCY, duration_s=30, max_requests=WARMUP_KEEPS
    )
    _check(warm.statuses, warm.errors, "warm-up")
    names = ("keep", "health", "keep50", "keep99", "health50", "health99", "keep_cpu", "health_cpu")
    series: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(RUNS):
        cpu = servers.cpu_seconds()
        health = await spread_load(
            servers, healthz_source, concurrency=CONCURRENCY, duration_s=RUN_SECONDS
        )
        health_cpu = servers.cpu_seconds() - cpu
        keeps = await spread_load(servers, source, concurrency=CONCURRENCY, duration_s=RUN_SECONDS)
        keep_cpu = servers.cpu_seconds() - cpu - health_cpu
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


def figures(series: dict[str, list[float]], engine: str = "sqlite") -> list[dict]:
    """Turn one engine's per-run samples into the Keep figures, each beside its /healthz."""
    ratio_target = THROUGHPUT_RATIO_TARGET[engine]
    durability = "synchronous=FULL" if engine == "sqlite" else "synchronous_commit=on"
    health = summarise(series["health"])["median"]
    throughput_ratio = summarise(_ratios(series["keep"], series["health"]))
    p50_ratio = summarise(_ratios(series["keep50"], series["health50"]))
    p99_ratio = summarise(_ratios(series["keep99"], series["health99"]))
    return [
        {
            "name": f"decisions {engine}: Keep throughput, {CONCURRENCY} clients, {durability}",
            "unit": "per_s",
            **summarise(series["keep"]),
            "runs": len(series["keep"]),
            "target": ratio_target * health,
            "better": "higher",
            "healthz_per_s": health,
            "ratio": throughput_ratio,
            "ratio_target": ratio_target,
        },
        {
            "name": f"decisions {engine}: Keeps per Credence CPU-second (noise-robust form)",
            "unit": "per_s",
            **summarise(series["keep_cpu"]),
            "runs": len(series["keep_cpu"]),
            "target": ratio_target * summarise(series["health_cpu"])["median"],
            "better": "higher",
            "healthz_per_s": summarise(series["health_cpu"])["median"],
            "ratio": summarise(_ratios(series["keep_cpu"], series["health_cpu"])),
            "ratio_target": ratio_target,
        },
        {
            "name": f"decisions {engine}: server CPU per Keep",
            "unit": "ms",
            **summarise([1000.0 / per_s for per_s in series["keep_cpu"]]),
            "runs": len(series["keep_cpu"]),
            "target": CPU_MS_TARGET[engine],
            "better": "lower",
        },
        {
            "name": f"decisions {engine}: Keep latency p50, {CONCURRENCY} clients",
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
            "name": f"decisions {engine}: Keep latency p99, {CONCURRENCY} clients",
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
    """Seed pending beliefs once, then time Keeps against /healthz on each engine's server."""
    rows: list[dict] = []
    with (
        tempfile.TemporaryDirectory(prefix="credence-bench-decisions-") as root,
        throwaway_postgres(durable=PG_DURABLE) as pg,
    ):
        data_dir = Path(root) / "data"
        seeded = seed_pending(data_dir, agents=AGENTS, per_agent=PER_AGENT)
        # Copy before SQLite's run uses the pending beliefs up, so both engines start alike.
        pristine = Path(root) / "pristine"
        shutil.copytree(data_dir, pristine)
        for engine in ENGINES:
            source_dir = data_dir if engine == "sqlite" else pristine
            with serving(source_dir, engine, pg) as servers:
                rows += figures(asyncio.run(_measure(servers, seeded)), engine)
    return rows


if __name__ == "__main__":
    for figure in measure():
        ratio = figure.get("ratio")
        beside = (
            f"  healthz {figure['healthz_per_s']:.0f}/s  ratio {ratio['median']:.2f}"
            if isinstance(ratio, dict)
            else ""
        )
        print(
            f"{figure['name']:<58} median {figure['median']:>9.2f} {figure['unit']:<5}"
            f" p10 {figure['p10']:.2f} p90 {figure['p90']:.2f}  target {figure['target']:.2f}"
            + beside,
            file=sys.stdout,
        )
