"""A loopback HTTP/1.1 load generator, a `credence serve` subprocess to aim it at, CLI keys."""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from credence.memory.semantics.model import MINILM_DIM, MINILM_NAME

LOOPBACK = "127.0.0.1"
# Anything the server can take: the benchmarks measure the service, not the rate limiter's refusals.
UNLIMITED_RATE_ENV = {
    "CREDENCE_RATE_LIMIT_PER_MINUTE": str(10**9),
    "CREDENCE_PAIR_RATE_LIMIT_PER_MINUTE": str(10**9),
    "CREDENCE_READ_RATE_LIMIT_PER_MINUTE": "0",
    "CREDENCE_READ_CONCURRENCY_PER_KEY": "0",
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


class ServerProcess:
    """`credence serve` in a child process on a loopback port, so it has a GIL of its own.

    The log (stdout and stderr) goes to a file in the data dir's parent, not a pipe, so a chatty
    server can never block on a full pipe.
    """

    def __init__(
        self,
        data_dir: Path,
        env: Mapping[str, str] | None = None,
        *,
        log_path: Path | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.extra_env = dict(env or {})
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = log_path or self.data_dir.parent / f"{self.data_dir.name}-server.log"
        self._log_offset = 0

    @property
    def url(self) -> str:
        """The base URL, e.g. http://127.0.0.1:41234."""
        return f"http://{LOOPBACK}:{self.port}"

    def start(self, timeout: float = 120.0) -> ServerProcess:
        """Start the server and wait until /healthz answers; retries once on a port race."""
        for _ in range(3):
            self.port = free_port()
            env = {
                **os.environ,
                "CREDENCE_SCHEDULER": "0",
                "CREDENCE_LOG_LEVEL": "WARNING",
                **self.extra_env,
            }
            command = [sys.executable, "-m", "credence.cli", "serve", "--data", str(self.data_dir)]
            command += ["--host", LOOPBACK, "--port", str(self.port)]
            with self.log_path.open("ab") as log:
                self._log_offset = log.tell()
                self.process = subprocess.Popen(
                    command, stdout=log, stderr=subprocess.STDOUT, env=env
                )
            if self._wait_ready(timeout):
                return self
            self.kill()
            if "address already in use" not in self.log_since_start().lower():
                break
        raise RuntimeError(f"credence serve did not start:\n{self.log_since_start()[-3000:]}")

    def _wait_ready(self, timeout: float) -> bool:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1.0).status_code == 200:
                    return True
            except httpx.TransportError:
                pass
            time.sleep(0.02)
        return False

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used, all threads (Linux /proc).

        Requests per server CPU-second measure the server's own cost per request, which stays
        meaningful when other work on a small machine steals wall time.
        """
        assert self.process is not None
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        """SIGKILL the server (no shutdown code runs) and reap it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait(timeout=30)

    def stop(self) -> int | None:
        """Ask the server to shut down cleanly (SIGTERM); SIGKILL after 20 s. Returns its code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode

    def log_since_start(self) -> str:
        """What this server wrote since its latest start."""
        if not self.log_path.exists():
            return ""
        with self.log_path.open("rb") as log:
            log.seek(self._log_offset)
            return log.read().decode("utf-8", "replace")

    def log_text(self) -> str:
        """Everything every start of this server wrote."""
        return self.log_path.read_text("utf-8", "replace") if self.log_path.exists() else ""

    def __enter__(self) -> ServerProcess:
        return self.start() if self.process is None else self

    def __exit__(self, *_: object) -> None:
        self.stop()


# --- raw HTTP/1.1 keep-alive client -------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One request to send: method, path (with query), extra headers, body bytes."""

    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    def encode(self, host: str) -> bytes:
        """The request as HTTP/1.1 bytes on a keep-alive connection."""
        lines = [f"{self.method} {self.path} HTTP/1.1", f"Host: {host}"]
        lines += [f"{name}: {value}" for name, value in self.headers.items()]
        if self.body or self.method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(self.body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + self.body


@dataclass(frozen=True)
class Response:
    """Status, lower-cased headers and body of one response."""

    status: int
    headers: dict[str, str]
    body: bytes


class Connection:
    """One keep-alive HTTP/1.1 connection: far cheaper per request than a full client library."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        """Connect (again)."""
        await self.close()
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)

    async def close(self) -> None:
        """Close the socket if open."""
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
        self._reader = self._writer = None

    async def send(self, request: Request) -> Response:
        """Send one request and read its whole response."""
        if self._writer is None:
            await self.open()
        assert self._reader is not None and self._writer is not None
        self._writer.write(request.encode(f"{self.host}:{self.port}"))
        await self._writer.drain()
        head = await self._reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head[:-4].decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await self._reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._read_chunked()
        else:
            body = b""
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return Response(status, headers, body)

    async def _read_chunked(self) -> bytes:
        assert self._reader is not None
        parts = []
        while True:
            size = int((await self._reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self._reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await self._reader.readexactly(size))
            await self._reader.readexactly(2)


# --- load ---------------------------------------------------------------------------------

# source(worker, sequence) -> the next request of that worker, or None when it has no more.
RequestSource = Callable[[int, int], Request | None]


@dataclass
class LoadResult:
    """What one bounded load run measured."""

    completed: int
    elapsed_s: float
    latencies_ms: list[float]
    statuses: Counter[int]
    errors: int
    bodies: list[tuple[Request, Response]] = field(default_factory=list)

    @property
    def per_s(self) -> float:
        """Completed requests per second of wall time."""
        return self.completed / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def percentile(self, fraction: float) -> float:
        """Latency at ``fraction`` (0.5 = p50, 0.99 = p99) in ms, nearest rank."""
        if not self.latencies_ms:
            return math.nan
        ordered = sorted(self.latencies_ms)
        rank = max(0, min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1))
        return ordered[rank]

    @property
    def p50(self) -> float:
        """Median latency in ms."""
        return self.percentile(0.50)

    @property
    def p99(self) -> float:
        """99th-percentile latency in ms."""
        return self.percentile(0.99)


async def run_load(
    url: str,
    source: RequestSource,
    *,
    concurrency: int,
    duration_s: float,
    max_requests: int = 1_000_000,
    keep_responses: bool = False,
) -> LoadResult:
    """Drive ``concurrency`` keep-alive connections until ``duration_s`` passes or sources end.

    Bounded in both time and count, so a slow server cannot make a benchmark run forever. A
    request that fails at the transport level counts as an error and its connection reopens.
    """
    host, port = _host_port(url)
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    kept: list[tuple[Request, Response]] = []
    errors = 0
    issued = 0
    began = time.perf_counter()
    deadline = began + duration_s
    last_done = began

    async def worker(index: int) -> None:
        nonlocal errors, issued, last_done
        connection = Connection(host, port)
        sequence = 0
        try:
            await connection.open()
            while time.perf_counter() < deadline and issued < max_requests:
                request = source(index, sequence)
                if request is None:
                    return
                sequence += 1
                issued += 1
                sent = time.perf_counter()
                try:
                    response = await connection.send(request)
                except (OSError, asyncio.IncompleteReadError, ValueError):
                    errors += 1
                    await connection.open()
                    continue
                done = time.perf_counter()
                latencies.append((done - sent) * 1000.0)
                statuses[response.status] += 1
                last_done = max(last_done, done)
                if keep_responses:
                    kept.append((request, response))
        finally:
            await connection.close()

    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    return LoadResult(len(latencies), last_done - began, latencies, statuses, errors, kept)


def _host_port(url: str) -> tuple[str, int]:
    parsed = httpx.URL(url)
    if parsed.host not in (LOOPBACK, "localhost"):
        raise ValueError(f"load is loopback only, not {parsed.host}")
    return parsed.host, parsed.port or 80


def healthz_source(_: int, __: int) -> Request:
    """The baseline every HTTP figure is compared with: GET /healthz."""
    return Request("GET", "/healthz")


async def healthz_load(url: str, *, concurrency: int, duration_s: float) -> LoadResult:
    """The server's /healthz throughput and latency at the same concurrency."""
    return await run_load(url, healthz_source, concurrency=concurrency, duration_s=duration_s)


def summarise(samples: list[float]) -> dict[str, float]:
    """Median, p10 and p90 of a list of per-run figures."""
    if len(samples) == 1:
        return {"median": samples[0], "p10": samples[0], "p90": samples[0]}
    deciles = statistics.quantiles(samples, n=10, method="inclusive")
    return {"median": statistics.median(samples), "p10": deciles[0], "p90": deciles[-1]}


# --- data built before the server starts --------------------------------------------------


class RandomEmbedder:
    """Random unit vectors: seeded beliefs never collide as near-duplicates, and no model loads.

    Only for building fixtures. The vectors carry the name and size of the server's default
    model: under any other name the server's embedding backfill re-embeds every seeded belief
    in the background, and a benchmark would measure that instead of its own requests.
    """

    name = MINILM_NAME
    dim = MINILM_DIM

    def __init__(self, seed: int = 8) -> None:
        import numpy

        self._rng = numpy.random.default_rng(seed)

    async def embed(self, texts):
        """Random L2-normalised float32 rows, one per text."""
        import numpy

        matrix = self._rng.standard_normal((len(texts), self.dim)).astype(numpy.float32)
        return matrix / numpy.linalg.norm(matrix, axis=1, keepdims=True)


@dataclass(frozen=True)
class Seeded:
    """What seed_pending built: an admin key, the agents, and (belief id, version) per belief."""

    admin_key: str
    agents: list[str]
    pending: list[tuple[str, int]]


def seed_pending(data_dir: Path, *, agents: int, per_agent: int) -> Seeded:
    """Create agents, an admin key and pending beliefs through the real services, no server.

    Beliefs go through BeliefService.propose (audited, with change counters), so a Keep on them
    is the same work as on beliefs a reflection job proposed.
    """
    return asyncio.run(_seed(Path(data_dir), agents, per_agent))


async def _seed(data_dir: Path, agent_count: int, per_agent: int) -> Seeded:
    import msgspec

    from credence.access.keys import create_key
    from credence.clock import rfc3339, system_clock
    from credence.db.store import Store
    from credence.memory.lifecycle.beliefs import BeliefHooks, BeliefService
    from credence.models import ProposalIn, ProposedBy, ReflectionSettings

    store = Store(data_dir / "credence.sqlite3")
    await store.open()
    try:
        now = rfc3339(system_clock())
        agent_ids = [f"bench-{number:02d}" for number in range(agent_count)]
        settings = msgspec.json.encode(ReflectionSettings()).decode()

        async def setup(conn):
            for agent_id in agent_ids:
                await conn.run(
                    "INSERT INTO agents(id, name, roles, settings, created_at, updated_at)"
                    " VALUES (?, ?, '[]', ?, ?, ?)",
                    (agent_id, agent_id, settings, now, now),
                )
            secret, _ = await create_key(
                conn, scope="admin", agents=None, label="bench", clock=system_clock
            )
            return secret

        admin_key = await store.write(setup)
        service = BeliefService(store, RandomEmbedder(), system_clock, BeliefHooks())
        per_agent_ids: list[list[tuple[str, int]]] = []
        for agent_id in agent_ids:
            pending: list[tuple[str, int]] = []
            per_agent_ids.append(pending)
            for start in range(0, per_agent, 100):
                proposals = [
                    ProposalIn(
                        op="add",
                        belief=_seeded_lesson(agent_id, number),
                        confidence=0.7,
                        rationale="seeded for load",
                    )
                    for number in range(start, min(per_agent, start + 100))
                ]
                results = await service.propose(
                    agent_id, proposals, ProposedBy(reflector="bench"), "bench"
                )
                pending += [(r.belief_id, 1) for r in results if r.accepted]
        # interleaved across agents, so consecutive Keeps land on different agents
        mixed = [pair for row in itertools.zip_longest(*per_agent_ids) for pair in row if pair]
        return Seeded(admin_key, agent_ids, mixed)
    finally:
        await store.close()


# Seeded lessons differ in their words, not in one number: lessons alike but for a number are
# value changes of each other, and each would carry a reason for every other one in its batch
# (up to 99), which no real memory has and which a Keep would then decode.
_SEED_VERBS = ("check", "label", "archive", "review", "sort", "rename", "measure", "clean")
_SEED_THINGS = ("invoices", "photos", "uploads", "drafts", "tickets", "backups", "receipts")
_SEED_PLACES = ("folder", "queue", "inbox", "drive", "bucket", "ledger", "board", "shelf")


def _seeded_lesson(agent_id: str, number: int) -> str:
    verb = _SEED_VERBS[number % len(_SEED_VERBS)]
    thing = _SEED_THINGS[number // len(_SEED_VERBS) % len(_SEED_THINGS)]
    rest = number // (len(_SEED_VERBS) * len(_SEED_THINGS))
    place = _SEED_PLACES[rest % len(_SEED_PLACES)]
    return f"For {agent_id}, {verb} the {thing} in the {place} kept under shelf mark {rest}"


def create_key(data_dir: Path, *scope: str) -> str:
    """Create a key with `credence keys create --scope ...` (in-process); return the key."""
    from credence.cli import main as credence_main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = credence_main(["keys", "create", "--scope", *scope, "--data", str(data_dir)])
    if code != 0:
        raise RuntimeError(f"could not create the {scope[0]} key")
    return out.getvalue().strip().splitlines()[-1]
