"""The job runner: claims queued jobs under a lease, runs their steps, recovers crashed ones."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import msgspec

from credence.clock import fixed_clock, parse_rfc3339, rfc3339
from credence.db.beliefs import BeliefRecord
from credence.db.engine import Connection
from credence.ids import new_id
from credence.memory.semantics import live
from credence.models import Job
from credence.observe import tracing
from credence.reflection import jobs, wakes
from credence.reflection.attempt import Attempt
from credence.reflection.deps import ReflectionDeps
from credence.reflection.llm import Sleep
from credence.reflection.steps import JobRun
from credence.tasks import cancel_and_wait, wait_or_timeout

try:  # process liveness via advisory locks; absent on platforms without fcntl
    import fcntl
except ImportError:  # pragma: no cover - Credence targets Linux
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("credence.reflection")

LEASE_S = 30.0
POLL_S = 1.0
TICK_S = 20.0
PRUNE_S = 600.0
CONCURRENCY = 2


class Engine:
    """Runs one claimed job through pull, propose, check and submit, heartbeating its lease."""

    def __init__(
        self, deps: ReflectionDeps, owner: str, *, lease_s: float, sleep: Sleep = asyncio.sleep
    ) -> None:
        self.deps = deps
        self.owner = owner
        self.lease_s = lease_s
        self.sleep = sleep
        self.running: set[str] = set()

    async def fence(self, conn: Connection, belief: BeliefRecord) -> None:
        """In-transaction hook: a belief this worker's job proposes needs the job's lease.

        A worker that lost its lease (stalled past it while another took the job over) must
        not create beliefs; raising here rolls the whole proposals write back.
        """
        job_id = belief.proposed_by.get("job_id")
        if job_id in self.running:
            await jobs.require_lease(conn, job_id, self.owner)

    async def run(self, job_id: str) -> None:
        """Run a job this worker holds the lease of; every outcome is written to the job."""
        store = self.deps.store
        found = await jobs.raw(store, job_id)
        if found is None:
            return
        row, records = found
        try:
            job_input = jobs.job_input(row)
        except msgspec.ValidationError as exc:
            at = rfc3339(self.deps.clock())
            error = f"stored input_data unreadable: {exc}"
            await jobs.fail(
                store, job_id, self.owner, step="pull", at=at, duration_ms=None, error=error
            )
            return
        clock = self.deps.clock
        if job_input.now:
            clock = fixed_clock(parse_rfc3339(job_input.now))
        run = JobRun(
            job_id=job_id,
            agent_id=row.agent_id,
            owner=self.owner,
            input=job_input,
            clock=clock,
            sleep=self.sleep,
            stored_answer=row.answer,
        )
        lost = asyncio.Event()
        beat = asyncio.create_task(self._heartbeat(job_id, lost, asyncio.current_task()))
        self.running.add(job_id)
        try:
            with tracing.span(
                "reflection job", {"credence.job.id": job_id, "credence.agent.id": run.agent_id}
            ):
                await Attempt(self.deps, run, records).steps()
        except jobs.LeaseLost:
            log.warning("job %s: lease lost to another worker; stopping", job_id)
        except asyncio.CancelledError:
            if not lost.is_set():
                with contextlib.suppress(Exception):
                    await jobs.release(
                        store, job_id, self.owner, rfc3339(self.deps.clock()), "interrupted"
                    )
                raise
            log.warning("job %s: lease lost to another worker; stopped", job_id)
        finally:
            self.running.discard(job_id)
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat

    async def _heartbeat(
        self, job_id: str, lost: asyncio.Event, runner: asyncio.Task[Any] | None
    ) -> None:
        interval = max(0.05, self.lease_s / 3)
        while True:
            await asyncio.sleep(interval)
            try:
                held = await jobs.heartbeat(
                    self.deps.store, job_id, self.owner, self.deps.clock(), self.lease_s
                )
            except Exception:  # a failed renewal is retried; the lease covers three of them
                log.exception("job %s: heartbeat failed", job_id)
                continue
            if not held:
                lost.set()
                if runner is not None:
                    runner.cancel()
                return


class ReflectionRunner:
    """Owns the worker loop of one process: recovery, claiming, running and cron ticks.

    Queued jobs always run (manual and event jobs need no scheduler); only the cron ticking
    depends on ``cron``. Each process holds an advisory lock on ``<data>/run/<owner>.lock``
    while it lives, so a restarted process can tell at once that a crashed owner is gone and
    retry its jobs without waiting for their leases to expire.
    """

    def __init__(
        self,
        deps: ReflectionDeps,
        *,
        cron: bool,
        lease_s: float = LEASE_S,
        poll_s: float = POLL_S,
        tick_s: float = TICK_S,
        concurrency: int = CONCURRENCY,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.deps = deps
        self.cron = cron
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.tick_s = tick_s
        self.concurrency = concurrency
        self.owner = new_id("wrk")
        self.engine = Engine(deps, self.owner, lease_s=lease_s, sleep=sleep)
        self.run_dir = Path(deps.settings.data_dir) / "run"
        self._wakeup = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._running: dict[str, asyncio.Task[None]] = {}
        self._finished: dict[str, asyncio.Event] = {}
        self._lock_fd: int | None = None
        self._seen_windows: set[tuple[str, str]] = set()
        self._last_tick = float("-inf")
        self._last_prune = time.monotonic()

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Take this process's liveness lock, recover orphaned jobs and start the loop."""
        self._take_lock()
        self.deps.hooks.in_txn_pending.append(self.engine.fence)
        await self.recover()
        self._loop_task = asyncio.create_task(self._loop(), name="credence-reflection")

    async def stop(self) -> None:
        """Stop claiming, hand running jobs back to the queue, release the lock."""
        if self._loop_task is not None:
            await cancel_and_wait(self._loop_task)
            self._loop_task = None
        for task in list(self._running.values()):
            await cancel_and_wait(task)
        with contextlib.suppress(ValueError):
            self.deps.hooks.in_txn_pending.remove(self.engine.fence)
        self._release_lock()

    def wake(self) -> None:
        """Look for queued work now instead of at the next poll."""
        self._wakeup.set()

    async def wait(self, job_id: str, timeout: float) -> Job | None:
        """Wait until the job is finished (or the timeout passes) and return it."""
        deadline = time.monotonic() + timeout
        while True:
            job = await jobs.get(self.deps.store, job_id)
            if job is None or job.status in jobs.TERMINAL or time.monotonic() >= deadline:
                return job
            event = self._finished.setdefault(job_id, asyncio.Event())
            await wait_or_timeout(event, min(self.poll_s, deadline - time.monotonic()))

    # --- liveness locks ---------------------------------------------------------------------

    def _take_lock(self) -> None:
        if fcntl is None:
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.run_dir / f"{self.owner}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._lock_fd = fd

    def _release_lock(self) -> None:
        if self._lock_fd is None:
            return
        with contextlib.suppress(OSError):
            (self.run_dir / f"{self.owner}.lock").unlink()
        os.close(self._lock_fd)
        self._lock_fd = None

    def owner_is_dead(self, owner: str) -> bool:
        """True when no live process holds ``owner``'s lock (so its jobs can be retried now)."""
        if fcntl is None:
            return False  # fall back to lease expiry alone
        path = self.run_dir / f"{owner}.lock"
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            # Replicas on one PostgreSQL may run on other hosts or data dirs: a lock file that
            # is not here says nothing about them, so only their lease tells.
            return self.deps.store.dialect != "postgresql"
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError:
            return False
        else:
            with contextlib.suppress(OSError):
                path.unlink()
            return True
        finally:
            os.close(fd)

    # --- the loop ---------------------------------------------------------------------------

    async def recover(self) -> list[tuple[str, str]]:
        """Retry or fail running jobs whose worker is gone; returns what changed."""
        changed = await jobs.recover(
            self.deps.store, self.deps.clock(), self.owner_is_dead, self.owner
        )
        for job_id, status in changed:
            log.warning("job %s: its worker stopped; now %s", job_id, status)
        return changed

    async def tick(self) -> list[str]:
        """Submit the jobs of due cron windows (exactly once per window across processes)."""
        created = await wakes.tick(self.deps.store, self.deps.clock(), self._seen_windows)
        for job_id in created:
            log.info("cron wake submitted job %s", job_id)
        return created

    async def _loop(self) -> None:
        while True:
            self._wakeup.clear()
            try:
                if self.cron and time.monotonic() - self._last_tick >= self.tick_s:
                    self._last_tick = time.monotonic()
                    await self.tick()
                await self.recover()
                await self._claim_all()
                if time.monotonic() - self._last_prune >= PRUNE_S:
                    self._last_prune = time.monotonic()
                    await live.prune_log(self.deps.store)
            except asyncio.CancelledError:
                raise
            except Exception:  # keep the worker alive; the next poll tries again
                log.exception("reflection worker loop failed")
            await wait_or_timeout(self._wakeup, self.poll_s)

    async def _claim_all(self) -> None:
        while len(self._running) < self.concurrency:
            job_id = await jobs.claim(self.deps.store, self.owner, self.deps.clock(), self.lease_s)
            if job_id is None:
                return
            task = asyncio.create_task(self._run(job_id), name=f"credence-job-{job_id}")
            self._running[job_id] = task

    async def _run(self, job_id: str) -> None:
        try:
            await self.engine.run(job_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("job %s crashed the engine", job_id)
        finally:
            self._running.pop(job_id, None)
            event = self._finished.pop(job_id, None)
            if event is not None:
                event.set()
            self._wakeup.set()


class ReflectionHost(Protocol):
    """What the reflection component needs from the app: its dependencies, and where the
    running runner is published for the API and the CLI to wake."""

    @property
    def reflection(self) -> ReflectionDeps:
        """The reflection job's dependencies."""
        ...

    runner: ReflectionRunner | None


def runner_of(host: ReflectionHost) -> ReflectionRunner | None:
    """The process's runner, when the reflection component is running."""
    return host.runner


def reflection_component(
    *,
    lease_s: float = LEASE_S,
    poll_s: float = POLL_S,
    tick_s: float = TICK_S,
    concurrency: int = CONCURRENCY,
) -> Callable[[ReflectionHost], AbstractAsyncContextManager[ReflectionRunner]]:
    """The job runner as an app component; cron ticks only when ``settings.scheduler``."""

    @asynccontextmanager
    async def component(host: ReflectionHost) -> AsyncIterator[ReflectionRunner]:
        deps = host.reflection
        runner = ReflectionRunner(
            deps,
            cron=deps.settings.scheduler,
            lease_s=lease_s,
            poll_s=poll_s,
            tick_s=tick_s,
            concurrency=concurrency,
        )
        await runner.start()
        host.runner = runner
        try:
            yield runner
        finally:
            host.runner = None
            await runner.stop()

    return component
