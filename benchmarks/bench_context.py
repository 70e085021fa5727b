"""Benchmark: memory context reads in process (1,000 active beliefs) and over HTTP vs /healthz."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx

from credence.clock import rfc3339, system_clock
from credence.db.store import Store
from credence.ids import new_id
from credence.memory.context import ContextService
from credence.reflection.text import normalise

SEED = 20261201
AGENT = "bench"
BELIEFS = 1000
IN_PROCESS_RUNS = 7
READS_PER_RUN = 2000
HTTP_ROUNDS = 10
REQUESTS_PER_ROUND = 2500
CONNECTIONS = 32
_DAYS_90 = timedelta(days=90)
_VOCABULARY = """ingester pdf upload chunk retry pnpm npm deploy staging rollback migration
    token cache
    timeout webhook invoice report summary lint test review branch release tag docker image build
    schema billing backup flag translation queue worker cron alert metric dashboard"""
_WORDS = _VOCABULARY.split()


async def _seed(path: Path, count: int) -> None:
    """An agent with ``count`` active, human-kept beliefs of varied confidence and age."""
    rng = random.Random(SEED)
    store = Store(path)
    await store.open()
    now = system_clock()
    stamp = rfc3339(now)

    async def work(conn) -> None:
        await conn.execute(
            "INSERT INTO agents(id, name, roles, settings, created_at, updated_at)"
            " VALUES (?, 'Bench', '[]', '{\"lambda_per_day\": 0.02}', ?, ?)",
            (AGENT, stamp, stamp),
        )
        rows = []
        for i in range(count):
            content = f"Lesson {i}: " + " ".join(rng.choice(_WORDS) for _ in range(12))
            made = rfc3339(now.replace(microsecond=0) - rng.random() * _DAYS_90)
            rows.append(
                (
                    new_id("b"),
                    AGENT,
                    content,
                    normalise(content),
                    round(rng.uniform(0.3, 0.95), 3),
                    made,
                    made,
                    stamp,
                )
            )
        await conn.executemany(
            "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
            " provenance, created_at, updated_at, decided_by, decided_at, version)"
            " VALUES (?, ?, ?, ?, 'active', ?, 'add', 'clean', ?, ?, 'key:bench', ?, 2)",
            rows,
        )

    await store.write(work)
    await store.close()


def _figure(name: str, unit: str, samples: list[float], target: float, better: str) -> dict:
    deciles = statistics.quantiles(samples, n=10) if len(samples) > 1 else samples * 9
    return {
        "name": name,
        "unit": unit,
        "median": statistics.median(samples),
        "p10": deciles[0],
        "p90": deciles[-1],
        "runs": len(samples),
        "target": target,
        "better": better,
    }


def _p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100)[98]


async def _in_process(path: Path) -> tuple[list[float], list[float], list[float]]:
    """Per run: p99 of warm context reads, median warm read, and one cold rebuild (ms)."""
    store = Store(path)
    await store.open()
    try:
        p99s, medians, rebuilds = [], [], []
        for _ in range(IN_PROCESS_RUNS):
            service = ContextService(store, system_clock)
            started = time.perf_counter()
            await service.context(AGENT, role=None, query=None, limit=10)
            rebuilds.append((time.perf_counter() - started) * 1000)
            samples = []
            for _ in range(READS_PER_RUN):
                started = time.perf_counter()
                await service.context(AGENT, role=None, query=None, limit=10)
                samples.append((time.perf_counter() - started) * 1000)
            await service.recorder.flush(store)
            p99s.append(_p99(samples))
            medians.append(statistics.median(samples))
        return p99s, medians, rebuilds
    finally:
        await store.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _agent_key(data_dir: Path) -> str:
    from credence.cli import main as credence_main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = credence_main(
            ["keys", "create", "--scope", "agent", "--agent", AGENT, "--data", str(data_dir)]
        )
    if code != 0:
        raise RuntimeError("could not create the agent key")
    return out.getvalue().strip().splitlines()[-1]


@contextlib.contextmanager
def _server(data_dir: Path) -> Iterator[tuple[int, int]]:
    """`credence serve` in its own process, so the load generator does not share its CPU."""
    port = _free_port()
    env = {
        **os.environ,
        "CREDENCE_SCHEDULER": "0",
        "CREDENCE_LOG_LEVEL": "warning",
        # A benchmark of the read path, not of the rate limiter.
        "CREDENCE_RATE_LIMIT_PER_MINUTE": str(10**9),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "credence.cli",
            "serve",
            "--data",
            str(data_dir),
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"server did not start: {process.stderr.read().decode()[-2000:]}"
                )
            time.sleep(0.05)
        yield port, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def _one_connection(port: int, request: bytes, remaining: list[int]) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    done = 0
    try:
        while remaining[0] > 0:
            remaining[0] -= 1
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = head[9:12]
            if status != b"200":
                raise RuntimeError(f"status {status.decode()} during the benchmark")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            done += 1
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    return done


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all threads included (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _throughput(port: int, pid: int, request: bytes, total: int) -> tuple[float, float]:
    """(requests per wall second, requests per server CPU second) for ``total`` requests.

    The second figure divides by the CPU time the server process itself spent, so it measures
    the server's cost per request even when other work shares the machine.
    """
    remaining = [total]
    cpu_before = _cpu_seconds(pid)
    started = time.perf_counter()
    done = await asyncio.gather(
        *(_one_connection(port, request, remaining) for _ in range(CONNECTIONS))
    )
    elapsed = time.perf_counter() - started
    cpu = max(_cpu_seconds(pid) - cpu_before, 1e-9)
    return sum(done) / elapsed, sum(done) / cpu


def _request(path: str, key: str | None = None) -> bytes:
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n".encode()


async def _http_rounds(port: int, pid: int, key: str) -> dict[str, list[float]]:
    health = _request("/healthz")
    context = _request(f"/api/v1/agents/{AGENT}/memory/context?limit=10", key)
    await _throughput(port, pid, health, 500)
    await _throughput(port, pid, context, 500)
    rates: dict[str, list[float]] = {
        "health": [],
        "context": [],
        "health_cpu": [],
        "context_cpu": [],
    }
    for round_index in range(HTTP_ROUNDS):
        # Alternate which goes first so neither always gets the warmer machine.
        order = [(health, "health"), (context, "context")]
        if round_index % 2:
            order.reverse()
        for request, name in order:
            wall, cpu = await _throughput(port, pid, request, REQUESTS_PER_ROUND)
            rates[name].append(wall)
            rates[f"{name}_cpu"].append(cpu)
    return rates


def measure() -> list[dict]:
    """In-process read latency (p99 per run) and HTTP throughput of context vs /healthz."""
    with tempfile.TemporaryDirectory(prefix="credence-bench-context-") as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        database = data_dir / "credence.sqlite3"
        asyncio.run(_seed(database, BELIEFS))
        p99s, medians, rebuilds = asyncio.run(_in_process(database))
        key = _agent_key(data_dir)
        with _server(data_dir) as (port, pid):
            rates = asyncio.run(_http_rounds(port, pid, key))
    health_wall = statistics.median(rates["health"])
    health_cpu = statistics.median(rates["health_cpu"])
    return [
        _figure("context_read_p99_1000_beliefs", "ms", p99s, 2.0, "lower"),
        _figure("context_read_median_1000_beliefs", "ms", medians, 1.0, "lower"),
        _figure("context_cache_rebuild_1000_beliefs", "ms", rebuilds, 20.0, "lower"),
        _figure("healthz_http", "per_s", rates["health"], 0.0, "higher"),
        # Targets are 70 % of the same server's /healthz rate in this very run.
        _figure("context_http", "per_s", rates["context"], 0.7 * health_wall, "higher"),
        _figure("healthz_http_per_cpu_s", "per_s", rates["health_cpu"], 0.0, "higher"),
        _figure(
            "context_http_per_cpu_s", "per_s", rates["context_cpu"], 0.7 * health_cpu, "higher"
        ),
    ]


if __name__ == "__main__":
    figures = measure()
    for figure in figures:
        print(
            f"{figure['name']:<36} median {figure['median']:>10.2f} {figure['unit']:<6}"
            f" p10 {figure['p10']:.2f}  p90 {figure['p90']:.2f}  runs {figure['runs']}"
            f"  target {figure['target']:.2f} ({figure['better']} is better)"
        )
    medians = {f["name"]: f["median"] for f in figures}
    for kind in ("", "_per_cpu_s"):
        share = 100 * medians[f"context_http{kind}"] / medians[f"healthz_http{kind}"]
        print(f"context{kind or ' (wall clock)'} at {share:.0f} % of /healthz (target ≥ 70 %)")
