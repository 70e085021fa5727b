"""The jobs table: submission (exactly once per window), leases, step records and finishing."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from credence.clock import parse_rfc3339, rfc3339
from credence.db.paging import newest_first, next_cursor
from credence.ids import new_id
from credence.memory.redact import REDACTION_SECRET, redact
from credence.models import Job, JobIn, JobInput, JobOutput, JobStep

if TYPE_CHECKING:
    from datetime import datetime

    import aiosqlite

    from credence.db.engine import Database

WORKFLOW = "agent-reflection"
STEPS = ("pull", "propose", "check", "submit")
DEFAULT_MAX_ATTEMPTS = 3
TERMINAL = ("succeeded", "failed")
MAX_ERROR_CHARS = 2000


class LeaseLost(RuntimeError):
    """This worker no longer holds the job's lease (another worker recovered it)."""


class JobInputRejected(ValueError):
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


def job_from_rows(row: Any, steps: Sequence[Any]) -> Job:
    """Turn a jobs row and its step rows into the API's Job."""
    output = row["output_data"]
    return Job(
        id=row["id"],
        workflow_id=row["workflow_id"],
        agent_id=row["agent_id"],
        trigger=row["trigger"],
        window_key=row["window_key"],
        wake_id=row["wake_id"],
        status=row["status"],
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
        # The job's agent is its row's; stored input written before it was typed may omit it.
        input_data=msgspec.convert(
            {"agent_id": row["agent_id"], **json.loads(row["input_data"])}, JobInput
        ),
        output_data=msgspec.json.decode(output, type=JobOutput) if output else None,
        error=row["error"],
        attempts=row["attempts"],
        created_at=row["created_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        updated_at=row["updated_at"],
    )


async def _fetch(conn: aiosqlite.Connection, job_id: str) -> tuple[Any, list[Any]] | None:
    async with conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)) as cur:
        row = await cur.fetchone()
    if row is None:
        return None
    async with conn.execute(
        "SELECT * FROM job_steps WHERE job_id = ? ORDER BY position", (job_id,)
    ) as cur:
        steps = list(await cur.fetchall())
    return row, steps


async def insert_job(
    conn: aiosqlite.Connection,
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
    once even when several processes tick the same schedule.
    """
    if window_key is not None:
        async with conn.execute(
            "SELECT id FROM jobs WHERE workflow_id = ? AND agent_id = ? AND window_key = ?",
            (WORKFLOW, agent_id, window_key),
        ) as cur:
            existing = await cur.fetchone()
        if existing is not None:
            return existing["id"], False
    job_id = new_id("job")
    await conn.execute(
        "INSERT INTO jobs(id, workflow_id, agent_id, trigger, window_key, wake_id, status,"
        " input_data, max_attempts, submitted_by, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?)",
        (
            job_id,
            WORKFLOW,
            agent_id,
            trigger,
            window_key,
            wake_id,
            json.dumps(input_data, ensure_ascii=False),
            max_attempts,
            submitted_by,
            now,
            now,
        ),
    )
    await conn.executemany(
        "INSERT INTO job_steps(job_id, position, name, status) VALUES (?, ?, ?, 'pending')",
        [(job_id, position, name) for position, name in enumerate(STEPS)],
    )
    return job_id, True


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

    async def work(conn: aiosqlite.Connection) -> Job:
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
        found = await _fetch(conn, job_id)
        assert found is not None
        return job_from_rows(*found)

    return await store.write(work)


async def get(store: Database, job_id: str) -> Job | None:
    """One job with its steps, or None."""

    async def work(conn: aiosqlite.Connection) -> Job | None:
        found = await _fetch(conn, job_id)
        return job_from_rows(*found) if found else None

    return await store.read(work)


async def raw(store: Database, job_id: str) -> tuple[Any, dict[str, Any]] | None:
    """The jobs row and its steps by name (the engine's view, including step outputs)."""

    async def work(conn: aiosqlite.Connection):
        found = await _fetch(conn, job_id)
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
    where, params = newest_first(agent_ids=agent_ids, status=status, cursor=cursor)

    async def work(conn: aiosqlite.Connection):
        async with conn.execute(
            f"SELECT * FROM jobs {where} ORDER BY id DESC LIMIT ?", (*params, limit + 1)
        ) as cur:
            rows = list(await cur.fetchall())
        page = rows[:limit]
        steps: dict[str, list[Any]] = {row["id"]: [] for row in page}
        if page:
            marks = ",".join("?" * len(page))
            async with conn.execute(
                f"SELECT * FROM job_steps WHERE job_id IN ({marks})", tuple(steps)
            ) as cur:
                for step in await cur.fetchall():
                    steps[step["job_id"]].append(step)
        return [job_from_rows(row, steps[row["id"]]) for row in page], next_cursor(rows, limit)

    return await store.read(work)


# --- leases ---------------------------------------------------------------------------------


def lease_until(now: datetime, lease_s: float) -> str:
    """The lease expiry for a lease taken or renewed at ``now``."""
    return rfc3339(now + timedelta(seconds=lease_s))


async def claim(store: Database, owner: str, now: datetime, lease_s: float) -> str | None:
    """Take the oldest queued job whose agent has no running job; returns its id or None."""
    at = rfc3339(now)
    until = lease_until(now, lease_s)

    async def work(conn: aiosqlite.Connection) -> str | None:
        async with conn.execute(
            "SELECT id FROM jobs WHERE status = 'queued' AND agent_id NOT IN"
            " (SELECT agent_id FROM jobs WHERE status = 'running')"
            " ORDER BY created_at, id LIMIT 1"
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        await conn.execute(
            "UPDATE jobs SET status = 'running', lease_owner = ?, lease_expires_at = ?,"
            " heartbeat_at = ?, attempts = attempts + 1, started_at = COALESCE(started_at, ?),"
            " updated_at = ? WHERE id = ?",
            (owner, until, at, at, at, row["id"]),
        )
        return row["id"]

    return await store.write(work)


async def require_lease(conn: aiosqlite.Connection, job_id: str, owner: str) -> None:
    """Raise LeaseLost unless ``owner`` still runs the job (call inside a write)."""
    async with conn.execute(
        "SELECT 1 FROM jobs WHERE id = ? AND status = 'running' AND lease_owner = ?",
        (job_id, owner),
    ) as cur:
        if await cur.fetchone() is None:
            raise LeaseLost(job_id)


async def heartbeat(
    store: Database, job_id: str, owner: str, now: datetime, lease_s: float
) -> bool:
    """Renew the lease; False when this worker no longer holds it."""

    async def work(conn: aiosqlite.Connection) -> bool:
        cur = await conn.execute(
            "UPDATE jobs SET heartbeat_at = ?, lease_expires_at = ?"
            " WHERE id = ? AND status = 'running' AND lease_owner = ?",
            (rfc3339(now), lease_until(now, lease_s), job_id, owner),
        )
        return cur.rowcount == 1

    return await store.write(work)


async def advance(
    store: Database,
    job_id: str,
    owner: str,
    *,
    at: str,
    done: tuple[str, float, dict[str, Any] | None] | None = None,
    start: str | None = None,
) -> None:
    """Finish one step (name, duration, output) and start the next, in one fenced write."""

    async def work(conn: aiosqlite.Connection) -> None:
        await require_lease(conn, job_id, owner)
        if done is not None:
            await _step_done(conn, job_id, done[0], at, done[1], done[2])
        if start is not None:
            await conn.execute(
                "UPDATE job_steps SET status = 'running', started_at = ?, finished_at = NULL,"
                " duration_ms = NULL, error = NULL WHERE job_id = ? AND name = ?",
                (at, job_id, start),
            )
        await conn.execute("UPDATE jobs SET updated_at = ? WHERE id = ?", (at, job_id))

    await store.write(work)


async def _step_done(
    conn: aiosqlite.Connection,
    job_id: str,
    name: str,
    at: str,
    duration_ms: float,
    output: dict[str, Any] | None,
) -> None:
    await conn.execute(
        "UPDATE job_steps SET status = 'succeeded', finished_at = ?, duration_ms = ?,"
        " error = NULL, output = COALESCE(?, output) WHERE job_id = ? AND name = ?",
        (
            at,
            round(duration_ms, 3),
            json.dumps(output, ensure_ascii=False) if output is not None else None,
            job_id,
            name,
        ),
    )
    await conn.execute("UPDATE jobs SET updated_at = ? WHERE id = ?", (at, job_id))


async def store_answer(
    store: Database, job_id: str, owner: str, answer: str, meta: dict[str, Any]
) -> None:
    """Persist the reflector's raw answer (and what it covered) before anything applies it."""

    async def work(conn: aiosqlite.Connection) -> None:
        await require_lease(conn, job_id, owner)
        await conn.execute("UPDATE jobs SET answer = ? WHERE id = ?", (answer, job_id))
        await conn.execute(
            "UPDATE job_steps SET output = ? WHERE job_id = ? AND name = 'propose'",
            (json.dumps(meta, ensure_ascii=False), job_id),
        )

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
    submit_output: dict[str, Any] | None = None,
) -> None:
    """Finish the job and move the episode watermark, in one transaction."""

    async def work(conn: aiosqlite.Connection) -> None:
        await require_lease(conn, job_id, owner)
        await _step_done(conn, job_id, "submit", at, duration_ms, submit_output)
        for start in range(0, len(reflected_ids), 500):
            chunk = list(reflected_ids[start : start + 500])
            await conn.execute(
                "UPDATE episodes SET reflected_at = ?, reflected_job = ?"
                f" WHERE agent_id = ? AND reflected_at IS NULL"
                f" AND id IN ({','.join('?' * len(chunk))})",
                (at, job_id, agent_id, *chunk),
            )
        await conn.execute(
            "UPDATE jobs SET status = 'succeeded', output_data = ?, error = NULL,"
            " finished_at = ?, updated_at = ?, lease_owner = NULL, lease_expires_at = NULL"
            " WHERE id = ?",
            (msgspec.json.encode(output).decode(), at, at, job_id),
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

    async def work(conn: aiosqlite.Connection) -> None:
        await require_lease(conn, job_id, owner)
        if step is not None:
            await conn.execute(
                "UPDATE job_steps SET status = 'failed', finished_at = ?, duration_ms = ?,"
                " error = ? WHERE job_id = ? AND name = ?",
                (
                    at,
                    round(duration_ms, 3) if duration_ms is not None else None,
                    error,
                    job_id,
                    step,
                ),
            )
        await conn.execute(
            "UPDATE jobs SET status = 'failed', error = ?, finished_at = ?, updated_at = ?,"
            " lease_owner = NULL, lease_expires_at = NULL WHERE id = ?",
            (f"{step}: {error}" if step else error, at, at, job_id),
        )

    await store.write(work)


async def release(store: Database, job_id: str, owner: str, at: str, reason: str) -> None:
    """Give a job back to the queue (shutdown), without counting the interrupted attempt."""

    async def work(conn: aiosqlite.Connection) -> None:
        try:
            await require_lease(conn, job_id, owner)
        except LeaseLost:
            return
        await _requeue_rows(conn, job_id, at, reason)
        await conn.execute(
            "UPDATE jobs SET attempts = MAX(attempts - 1, 0) WHERE id = ?", (job_id,)
        )

    await store.write(work)


async def _requeue_rows(conn: aiosqlite.Connection, job_id: str, at: str, reason: str) -> None:
    await conn.execute(
        "UPDATE job_steps SET status = 'pending', error = ?"
        " WHERE job_id = ? AND status = 'running'",
        (reason, job_id),
    )
    await conn.execute(
        "UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL,"
        " updated_at = ? WHERE id = ?",
        (at, job_id),
    )


async def recover(
    store: Database, now: datetime, owner_is_dead: Callable[[str], bool], me: str
) -> list[tuple[str, str]]:
    """Retry (or fail after max attempts) running jobs whose worker is gone.

    A worker is gone when its lease expired without a heartbeat, or when ``owner_is_dead``
    says so (its process lock is free). Returns [(job id, new status)]. Each change is fenced
    on the same owner, so a worker that is alive after all keeps its job.
    """
    rows = await store.fetchall(
        "SELECT id, lease_owner, lease_expires_at, attempts, max_attempts FROM jobs"
        " WHERE status = 'running'"
    )
    at = rfc3339(now)
    changed: list[tuple[str, str]] = []
    for row in rows:
        owner = row["lease_owner"]
        if owner == me:
            continue
        expired = row["lease_expires_at"] is None or parse_rfc3339(row["lease_expires_at"]) < now
        if not expired and not (owner and owner_is_dead(owner)):
            continue
        give_up = row["attempts"] >= row["max_attempts"]

        async def work(conn: aiosqlite.Connection, row=row, owner=owner, give_up=give_up):
            async with conn.execute(
                "SELECT 1 FROM jobs WHERE id = ? AND status = 'running' AND lease_owner IS ?",
                (row["id"], owner),
            ) as cur:
                if await cur.fetchone() is None:
                    return None
            if not give_up:
                await _requeue_rows(
                    conn, row["id"], at, "interrupted: the worker running this step stopped"
                )
                return "queued"
            error = (
                f"the worker running this job stopped {row['attempts']} times"
                f" (max_attempts {row['max_attempts']}); giving up"
            )
            await conn.execute(
                "UPDATE job_steps SET status = 'failed', finished_at = ?, error = ?"
                " WHERE job_id = ? AND status = 'running'",
                (at, "interrupted: the worker running this step stopped", row["id"]),
            )
            await conn.execute(
                "UPDATE jobs SET status = 'failed', error = ?, finished_at = ?, updated_at = ?,"
                " lease_owner = NULL, lease_expires_at = NULL WHERE id = ?",
                (error, at, at, row["id"]),
            )
            return "failed"

        outcome = await store.write(work)
        if outcome is not None:
            changed.append((row["id"], outcome))
    return changed
