"""The engines an HTTP bench runs against: the seeded SQLite file as is, or a PostgreSQL copy.

A bench seeds one SQLite data dir, then `serving(...)` starts `credence serve` on it — directly
(SQLite) or on a throwaway PostgreSQL database the seed was copied into with `credence db copy`'s
own code (PostgreSQL), once or as several replicas on that one database. The bench's measuring
code is the same for every engine; only the servers' environment differs.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.httpload import UNLIMITED_RATE_ENV, LoadResult, RequestSource, ServerProcess, run_load
from harness.pg import PostgresServer

ENGINES = ("sqlite", "postgresql")
# The throwaway cluster runs with fsync off (harness/pg.py); durable=True at least keeps
# synchronous_commit on, so a commit waits for its WAL write as a production server's would.
PG_DURABLE = True


@dataclass
class Servers:
    """One or more `credence serve` processes on one store; load is spread across all of them."""

    engine: str
    processes: list[ServerProcess]

    @property
    def label(self) -> str:
        """sqlite, postgresql, or postgresql ×N replicas."""
        count = len(self.processes)
        return self.engine if count == 1 else f"{self.engine} ×{count} replicas"

    def cpu_seconds(self) -> float:
        """CPU time of every Credence process (not of PostgreSQL's backends)."""
        return sum(process.cpu_seconds() for process in self.processes)


async def spread_load(
    servers: Servers, source: RequestSource, *, concurrency: int, duration_s: float, **kwargs
) -> LoadResult:
    """``run_load`` with the connections split evenly over every replica, results merged."""
    count = len(servers.processes)
    shares = [concurrency // count + (1 if i < concurrency % count else 0) for i in range(count)]

    def shifted(offset: int) -> RequestSource:
        # Worker numbers stay distinct across replicas, so sources that key on them still do.
        return lambda worker, sequence: source(worker + offset, sequence)

    offsets = [sum(shares[:i]) for i in range(count)]
    results = await asyncio.gather(
        *(
            run_load(p.url, shifted(o), concurrency=s, duration_s=duration_s, **kwargs)
            for p, o, s in zip(servers.processes, offsets, shares, strict=True)
        )
    )
    if count == 1:
        return results[0]
    merged = results[0]
    for other in results[1:]:
        merged.completed += other.completed
        merged.latencies_ms += other.latencies_ms
        merged.statuses.update(other.statuses)
        merged.errors += other.errors
        merged.bodies += other.bodies
        merged.elapsed_s = max(merged.elapsed_s, other.elapsed_s)
    return merged


def copy_to_database(data_dir: Path, pg: PostgresServer, prefix: str) -> str:
    """Copy the seeded SQLite installation into a new database on ``pg``; return its URL."""
    from credence.db.copy import copy_to_postgres
    from credence.memory.lifecycle import audit

    url = pg.url(pg.create_database(prefix))
    asyncio.run(copy_to_postgres(data_dir / "credence.sqlite3", url, audit.verify_rows))
    return url


# A loaded 2-core machine can take longer than the default 30 s to import and start a server.
START_TIMEOUT_S = 180.0


@contextlib.contextmanager
def serving(
    data_dir: Path,
    engine: str,
    pg: PostgresServer | None = None,
    *,
    replicas: int = 1,
    url: str | None = None,
) -> Iterator[Servers]:
    """Serve the seeded data dir on ``engine`` (``replicas`` processes on PostgreSQL).

    On PostgreSQL the seed is copied into a fresh database (or ``url`` is reused, so several
    configurations can share one copy); each replica gets a data dir of its own, as replicas on
    different machines would, and only the database in common.
    """
    if engine == "sqlite":
        if replicas != 1:
            raise ValueError("SQLite is one process on one file: replicas must be 1")
        processes = [ServerProcess(data_dir, UNLIMITED_RATE_ENV)]
    else:
        assert pg is not None, "PostgreSQL needs a cluster"
        url = url or copy_to_database(data_dir, pg, data_dir.parent.name)
        env = {**UNLIMITED_RATE_ENV, "CREDENCE_DATABASE_URL": url}
        processes = []
        for index in range(replicas):
            own = data_dir.parent / f"replica-{index}-{secrets.token_hex(3)}"
            own.mkdir()
            # Whatever else the seed left in the data dir, but never the SQLite store itself.
            for item in data_dir.iterdir():
                if item.is_file() and not item.name.startswith("credence.sqlite3"):
                    shutil.copy2(item, own / item.name)
            processes.append(ServerProcess(own, env))
    started: list[ServerProcess] = []
    try:
        for process in processes:
            started.append(process.start(timeout=START_TIMEOUT_S))
        yield Servers(engine, processes)
    finally:
        for process in started:
            process.stop()
