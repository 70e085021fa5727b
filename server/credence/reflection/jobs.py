"""The jobs table: submission (exactly once per window), leases, step records and finishing."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from credence.clock import rfc3339
from credence.db import jobs as db_jobs
from credence.db import lease
from credence.errors import Unprocessable
from credence.ids import new_id
from credence.memory.ingest.redact import REDACTION_SECRET, redact
from credence.models import Job, JobIn, JobInput, JobOutput, JobStep
from credence.models.reasons import decode, decode_all, structured
from credence.reflection.checkpoints import AnswerMeta, Checkpoint, SubmitCheckpoint, encode

if TYPE_CHECKING:
    from datetime import datetime

    from credence.db.engine import Connection, Database
    from credence.db.jobs import JobRecord

WORKFLOW = "agent-reflection"
STEPS = ("pull", "propose", "check", "submit")
DEFAULT_MAX_ATTEMPTS = 3
TERMINAL = ("succeeded", "failed")
MAX_ERROR_CHARS = 2000


class LeaseLost(RuntimeError):
    """This worker no longer holds the job's lease (another worker recovered it)."""


class JobInputRejected(Unprocessable):
    """A manual job's input names a combination that cannot run; the message says why."""


def manual_input(data: JobIn, llm_configured: bool, digest_key: bytes) -> dict[str, Any]:
    """The stored input_data of a manual job; JobInputRejected for combinations that cannot run.

    ``digest_key`` keys the placeholders of secrets redacted from the stub output.
    """
    given = data.input_data
    reflector = given.reflector
    if reflector is None and given.stub_output is not None:
        reflector = "stub"
    if reflector == "stub" and given.stub_output is None:
        raise JobInputRejected(
            "input_data.stub_output: the stub reflector returns it, so it is required"
        )
    if reflector not in (None, "stub") and given.stub_output is not None:
        raise JobInputRejected("input_data.stub_output: only the stub reflector uses it")
    if reflector == "llm" and not llm_configured:
        raise JobInputRejected("input_data.reflector: llm needs CREDENCE_LLM_URL on the server")
    stored: dict[str, Any] = {"agent_id": given.agent_id}
    if reflector is not None:
        stored["reflector"] = reflector
    if given.stub_output is not None:
        # Raw model text is stored, so secrets in it are redacted first, like any episode.
        stored["stub_output"] = redact(given.stub_output, digest_key=digest_key).text
    for name in ("now", "since"):
        moment = getattr(given, name)
        if moment is not None:
            try:
                stored[name] = rfc3339(moment)
            except (ValueError, OverflowError) as exc:
                raise JobInputRejected(f"input_data.{name}: {exc}") from None
    return stored


def _cut(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _structured(output: JobOutput) -> JobOutput:
    """The stored output with each result's reasons in their structured form (read from the
    string form the output is stored with, so jobs stored before it read the same)."""
    return msgspec.structs.replace(
        output,
        results=[
            msgspec.structs.replace(
                result,
                structured_reasons=structured(decode_all(result.reasons)),
                rejected=(
                    structured([decode(result.rejected_reason)])[0]
                    if result.rejected_reason
                    else None
                ),
            )
            for result in output.results
        ],
    )


def job_input(row: JobRecord) -> JobInput:
    """A job's stored input; input stored before it was typed may omit the agent."""
    return msgspec.convert({"agent_id": row.agent_id, **row.input_data}, JobInput)


def job_from_rows(row: JobRecord, steps: Sequence[Any]) -> Job:
    """Turn a stored job and its step rows into the API's Job."""
    output = row.output_data
    return Job(
        id=row.id,
        workflow_id=row.workflow_id,
        agent_id=row.agent_id,
        trigger=row.trigger,
        window_key=row.window_key,
        wake_id=row.wake_id,
        status=row.status,
        steps=[
            JobStep(
                name=step["name"],
                status=step["status"],
                started_at=step["started_at"],
                finished_at=step["finished_at"],
                duration_ms=step["duration_ms"],
                error=step["error"],
            )
            for step in sorted(steps, key=lambda s: s["position"])
        ],
        input_data=job_input(row),
        output_data=_structured(msgspec.convert(output, JobOutput)) if output is not None else None,
        error=row.error,
        attempts=row.attempts,
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        updated_at=row.updated_at,
    )


async def insert_job(
    conn: Connection,
    *,
    agent_id: str,
    trigger: str,
    input_data: dict[str, Any],
    now: str,
    window_key: str | None = None,
    wake_id: str | None = None,
    submitted_by: str = "",
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> tuple[str, bool]:
    """Queue a job inside the caller's transaction; returns (job id, created).

    A job keyed by a window that already exists is not created again: the existing job's id
    comes back with ``created`` False. That unique key is what makes a scheduled window run
    once even when several processes (or replicas) tick the same schedule.
    """
    return await db_jobs.insert_job(
        conn,
        job_id=new_id("job"),
        workflow_id=WORKFLOW,
        agent_id=agent_id,
        trigger=trigger,
        input_json=json.dumps(input_data, ensure_ascii=False),
        now=now,
        steps=STEPS,
        window_key=window_key,
        wake_id=wake_id,
        submitted_by=submitted_by,
        max_attempts=max_attempts,
    )


async def submit(
    store: Database,
    *,
    agent_id: str,
    trigger: str,
    input_data: dict[str, Any],
    now: str,
    window_key: str | None = None,
    wake_id: str | None = None,
    submitted_by: str = "",
) -> Job:
    """Queue one job (or find the one already queued for its window) and return it."""

    async def work(conn: Connection) -> Job:
        job_id, _ = await insert_job(
            conn,
            agent_id=agent_id,
            trigger=trigger,
            input_data=input_data,
            now=now,
            window_key=window_key,
            wake_id=wake_id,
            submitted_by=submitted_by,
        )
        found = await db_jobs.fetch(conn, job_id)
        assert found is not None
        return job_from_rows(*found)

    return await store.write(work)


async def get(store: Database, job_id: str) -> Job | None:
    """One job with its steps, or None."""

    async def work(conn: Connection) -> Job | None:
        found = await db_jobs.fetch(conn, job_id)
        return job_from_rows(*found) if found else None

    return await store.read(work)


async def raw(store: Database, job_id: str) -> tuple[JobRecord, dict[str, Any]] | None:
    """The job and its steps by name (the engine's view, including step outputs)."""

    async def work(conn: Connection) -> tuple[JobRecord, dict[str, Any]] | None:
        found = await db_jobs.fetch(conn, job_id)
        if found is None:
            return None
        row, steps = found
        return row, {step["name"]: step for step in steps}

    return await store.read(work)


async def list_jobs(
    store: Database,
    *,
    agent_ids: Sequence[str] | None,
    status: str | None,
    limit: int,
    cursor: str | None,
) -> tuple[list[Job], str | None]:
    """Jobs newest first, optionally by agents and status; returns (jobs, next cursor)."""

    async def work(conn: Connection) -> tuple[list[tuple[Any, list[Any]]], str | None]:
        return await db_jobs.page(
            conn, agent_ids=agent_ids, status=status, limit=limit, cursor=cursor
        )

    found, cursor_next = await store.read(work)
    return [job_from_rows(row, steps) for row, steps in found], cursor_next


# --- leases ---------------------------------------------------------------------------------


def lease_until(now: datetime, lease_s: float) -> str:
    """The lease expiry for a lease taken or renewed at ``now``."""
    return rfc3339(now + timedelta(seconds=lease_s))


async def claim(store: Database, owner: str, now: datetime, lease_s: float) -> str | None:
    """Take the oldest queued job whose agent has no running job; returns its id or None.

    Replicas on one PostgreSQL claim with ``SKIP LOCKED``: never the same job twice, and never
    two jobs of one agent at once.
    """
    at, until = rfc3339(now), lease_until(now, lease_s)
    return await store.write(lambda conn: db_jobs.claim(conn, owner, at, until))


async def require_lease(conn: Connection, job_id: str, owner: str) -> None:
    """Raise LeaseLost unless ``owner`` still runs the job (call inside a write).

    On PostgreSQL the job row stays locked until the caller commits, so another replica's
    recovery cannot take the job over between this check and the commit.
    """
    if not await lease.holds(conn, "jobs", job_id, owner):
        raise LeaseLost(job_id)


async def heartbeat(
    store: Database, job_id: str, owner: str, now: datetime, lease_s: float
) -> bool:
    """Renew the lease; False when this worker no longer holds it."""
    at, until = rfc3339(now), lease_until(now, lease_s)
    return await store.write(
        lambda conn: lease.renew(conn, "jobs", job_id, owner=owner, now=at, until=until)
    )


async def advance(
    store: Database,
    job_id: str,
    owner: str,
    *,
    at: str,
    done: tuple[str, float, Checkpoint] | None = None,
    start: str | None = None,
) -> None:
    """Finish one step (name, duration, checkpoint) and start the next, in one fenced write."""

    async def work(conn: Connection) -> None:
        await require_lease(conn, job_id, owner)
        if done is not None:
            await db_jobs.step_done(conn, job_id, done[0], at, done[1], encode(done[2]))
        if start is not None:
            await db_jobs.start_step(conn, job_id, start, at)
        await db_jobs.touch(conn, job_id, at)

    await store.write(work)


async def store_answer(
    store: Database, job_id: str, owner: str, answer: str, meta: AnswerMeta
) -> None:
    """Persist the reflector's raw answer (and what it covered) before anything applies it."""

    async def work(conn: Connection) -> None:
        await require_lease(conn, job_id, owner)
        await db_jobs.save_answer(conn, job_id, answer, encode(meta))

    await store.write(work)


async def succeed(
    store: Database,
    job_id: str,
    owner: str,
    *,
    agent_id: str,
    at: str,
    duration_ms: float,
    output: JobOutput,
    reflected_ids: Sequence[str],
    submit_output: SubmitCheckpoint | None = None,
) -> None:
    """Finish the job and move the episode watermark, in one transaction."""

    async def work(conn: Connection) -> None:
        await require_lease(conn, job_id, owner)
        output_json = encode(submit_output) if submit_output is not None else None
        await db_jobs.step_done(conn, job_id, "submit", at, duration_ms, output_json)
        await db_jobs.mark_reflected(conn, agent_id, job_id, reflected_ids, at)
        await db_jobs.finish(
            conn,
            job_id,
            status="succeeded",
            at=at,
            output=msgspec.json.encode(output).decode(),
            error=None,
        )

    await store.write(work)


async def fail(
    store: Database,
    job_id: str,
    owner: str,
    *,
    step: str | None,
    at: str,
    duration_ms: float | None,
    error: str,
) -> None:
    """Fail the job (and the step that failed); the watermark does not move."""
    # Errors quote model answers and server replies.
    error = _cut(redact(error, digest_key=store.secret(REDACTION_SECRET)).text)

    async def work(conn: Connection) -> None:
        await require_lease(conn, job_id, owner)
        if step is not None:
            await db_jobs.step_failed(conn, job_id, step, at, duration_ms, error)
        await db_jobs.finish(
            conn,
            job_id,
            status="failed",
            at=at,
            output=None,
            error=f"{step}: {error}" if step else error,
        )

    await store.write(work)


async def release(store: Database, job_id: str, owner: str, at: str, reason: str) -> None:
    """Give a job back to the queue (shutdown), without counting the interrupted attempt."""

    async def work(conn: Connection) -> None:
        if await lease.release(conn, "jobs", job_id, owner=owner, now=at):
            await db_jobs.reset_running_steps(conn, job_id, reason)

    await store.write(work)


INTERRUPTED = "interrupted: the worker running this step stopped"


def _lapsed(row: Any, now: datetime) -> bool:
    return lease.lapsed(row["lease_until"], rfc3339(now))


async def _take_over(
    conn: Connection, job_id: str, owner: str | None, at: str, now: datetime, dead: bool
) -> str | None:
    row = await lease.lock_held(conn, "jobs", job_id, owner)
    # Re-read under the lock: the owner may have renewed its lease since the scan.
    if row is None or not (dead or _lapsed(row, now)):
        return None
    if row["attempts"] < row["max_attempts"]:
        await lease.reclaim(conn, "jobs", job_id, now=at)
        await db_jobs.reset_running_steps(conn, job_id, INTERRUPTED)
        return "queued"
    await db_jobs.fail_running_steps(conn, job_id, at, INTERRUPTED)
    error = (
        f"the worker running this job stopped {row['attempts']} times"
        f" (max_attempts {row['max_attempts']}); giving up"
    )
    await db_jobs.finish(conn, job_id, status="failed", at=at, output=None, error=error)
    return "failed"


async def recover(
    store: Database, now: datetime, owner_is_dead: Callable[[str], bool], me: str
) -> list[tuple[str, str]]:
    """Retry (or fail after max attempts) running jobs whose worker is gone.

    A worker is gone when its lease expired without a heartbeat, or when ``owner_is_dead``
    says so (its process lock is free). Returns [(job id, new status)]. Each change is fenced
    on the same owner and re-checked under a row lock, so a worker that is alive after all
    keeps its job, and of replicas recovering at once exactly one takes each job over.
    """
    rows = await store.read(lambda conn: lease.held_leases(conn, "jobs"))
    at = rfc3339(now)
    changed: list[tuple[str, str]] = []
    for row in rows:
        owner = row["lease_owner"]
        if owner == me:
            continue
        dead = bool(owner) and owner_is_dead(owner)
        if not dead and not _lapsed(row, now):
            continue

        async def work(
            conn: Connection, job_id: str = row["id"], owner: Any = owner, dead: bool = dead
        ) -> str | None:
            return await _take_over(conn, job_id, owner, at, now, dead)

        outcome = await store.write(work)
        if outcome is not None:
            changed.append((row["id"], outcome))
    return changed
