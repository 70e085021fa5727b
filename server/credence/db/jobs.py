"""Store functions of reflection jobs: queueing, claiming (leases are db/lease.py's), steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from credence.db import lease
from credence.db.engine import Connection, Row, one_row, placeholders, skip_locked
from credence.db.episodes import EpisodeRecord
from credence.db.paging import newest_first, next_cursor
from credence.db.records import Record
from credence.models.reflection import JobStatus, JobTrigger, WorkflowId


class JobRecord(Record, frozen=True, kw_only=True):
    """One jobs row; ``input_data`` and ``output_data`` decoded (output None until it ends)."""

    JSON_FIELDS = frozenset({"input_data", "output_data"})

    id: str
    workflow_id: WorkflowId
    agent_id: str
    trigger: JobTrigger
    window_key: str | None
    wake_id: str | None
    status: JobStatus
    input_data: dict[str, Any]
    output_data: dict[str, Any] | None
    error: str | None
    answer: str | None
    attempts: int
    max_attempts: int
    lease_owner: str | None
    lease_until: str | None
    heartbeat_at: str | None
    submitted_by: str
    created_at: str
    started_at: str | None
    finished_at: str | None
    updated_at: str


class _AgentSettings(Record, frozen=True, kw_only=True):
    JSON_FIELDS = frozenset({"settings"})

    settings: dict[str, Any]


JOB_COLUMNS = JobRecord.columns()
STEP_COLUMNS = "job_id, position, name, status, started_at, finished_at, duration_ms, error, output"
CHUNK = 500


async def fetch(conn: Connection, job_id: str) -> tuple[JobRecord, list[Any]] | None:
    """The job and its step rows (by position), or None."""
    row = await conn.one(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,))
    if row is None:
        return None
    steps = await conn.rows(
        f"SELECT {STEP_COLUMNS} FROM job_steps WHERE job_id = ? ORDER BY position", (job_id,)
    )
    return JobRecord.from_row(row), steps


async def submitted_by(conn: Connection, job_id: str) -> str | None:
    """Who queued the job (``key:<id>``, ``cli``, a wake …), or None for an unknown job."""
    row = await conn.one("SELECT submitted_by FROM jobs WHERE id = ?", (job_id,))
    return None if row is None else row["submitted_by"]


async def insert_job(
    conn: Connection,
    *,
    job_id: str,
    workflow_id: str,
    agent_id: str,
    trigger: str,
    input_json: str,
    now: str,
    steps: Sequence[str],
    window_key: str | None,
    wake_id: str | None,
    submitted_by: str,
    max_attempts: int,
) -> tuple[str, bool]:
    """Insert a queued job and its pending steps; returns (job id, created).

    A job for a window that already has one is not inserted: the unique window index decides,
    so replicas racing to submit the same window end with one job, and the loser gets its id.
    """
    row = await conn.one(
        "INSERT INTO jobs(id, workflow_id, agent_id, trigger, window_key, wake_id, status,"
        " input_data, max_attempts, submitted_by, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?)"
        " ON CONFLICT (workflow_id, agent_id, window_key) WHERE window_key IS NOT NULL"
        " DO NOTHING RETURNING id",
        (
            job_id,
            workflow_id,
            agent_id,
            trigger,
            window_key,
            wake_id,
            input_json,
            max_attempts,
            submitted_by,
            now,
            now,
        ),
    )
    if row is None:
        existing = await conn.one(
            "SELECT id FROM jobs WHERE workflow_id = ? AND agent_id = ? AND window_key = ?",
            (workflow_id, agent_id, window_key),
        )
        assert existing is not None, "a conflicting window job must exist"
        return existing["id"], False
    await conn.run_many(
        "INSERT INTO job_steps(job_id, position, name, status) VALUES (?, ?, ?, 'pending')",
        [(job_id, position, name) for position, name in enumerate(steps)],
    )
    return job_id, True


async def page(
    conn: Connection,
    *,
    agent_ids: Sequence[str] | None,
    status: str | None,
    limit: int,
    cursor: str | None,
) -> tuple[list[tuple[JobRecord, list[Any]]], str | None]:
    """A page of jobs newest first with their steps; returns ([(job, steps)], next cursor)."""
    where, params = newest_first(agent_ids=agent_ids, status=status, cursor=cursor)
    rows = await conn.rows(
        f"SELECT {JOB_COLUMNS} FROM jobs {where} ORDER BY id DESC LIMIT ?", (*params, limit + 1)
    )
    shown = rows[:limit]
    steps: dict[str, list[Any]] = {row["id"]: [] for row in shown}
    if shown:
        for step in await conn.rows(
            f"SELECT {STEP_COLUMNS} FROM job_steps WHERE job_id IN ({placeholders(len(shown))})",
            tuple(steps),
        ):
            steps[step["job_id"]].append(step)
    return [(JobRecord.from_row(row), steps[row["id"]]) for row in shown], next_cursor(rows, limit)


async def queued_for_wake(conn: Connection, agent_id: str, wake_id: str) -> str | None:
    """The oldest queued job a wake submitted for an agent, or None."""
    row = await conn.one(
        "SELECT id FROM jobs WHERE agent_id = ? AND wake_id = ? AND status = 'queued'"
        " ORDER BY created_at, id LIMIT 1",
        (agent_id, wake_id),
    )
    return row["id"] if row is not None else None


# --- leases -----------------------------------------------------------------------------------


async def _agent_free(conn: Connection, agent_id: str) -> bool:
    # Replicas claim concurrently on PostgreSQL: a transaction-scoped advisory lock per agent
    # makes "no running job for this agent" a decision one claimer takes at a time.
    if conn.dialect == "postgresql":
        locked = await one_row(
            conn,
            "SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0)) AS ok",
            (f"credence.job-agent:{agent_id}",),
        )
        if not locked["ok"]:
            return False
    busy = await conn.one(
        "SELECT 1 FROM jobs WHERE agent_id = ? AND status = 'running' LIMIT 1", (agent_id,)
    )
    return busy is None


async def claim(conn: Connection, owner: str, at: str, until: str) -> str | None:
    """Lease the oldest queued job whose agent runs nothing to ``owner``; its id, or None.

    On PostgreSQL the candidates are read ``FOR UPDATE SKIP LOCKED``, so replicas claiming at
    once take different jobs and never the same one.
    """
    candidates = await conn.rows(
        "SELECT id, agent_id FROM jobs WHERE status = 'queued' AND agent_id NOT IN"
        " (SELECT agent_id FROM jobs WHERE status = 'running')"
        f" ORDER BY created_at, id LIMIT 8{skip_locked(conn)}"
    )
    tried: set[str] = set()
    for row in candidates:
        if row["agent_id"] in tried:
            continue
        tried.add(row["agent_id"])
        if not await _agent_free(conn, row["agent_id"]):
            continue
        if await lease.take(conn, "jobs", row["id"], owner=owner, now=at, until=until):
            return str(row["id"])
    return None


async def start_step(conn: Connection, job_id: str, name: str, at: str) -> None:
    """Mark one step running."""
    await conn.run(
        "UPDATE job_steps SET status = 'running', started_at = ?, finished_at = NULL,"
        " duration_ms = NULL, error = NULL WHERE job_id = ? AND name = ?",
        (at, job_id, name),
    )


async def step_done(
    conn: Connection, job_id: str, name: str, at: str, duration_ms: float, output: str | None
) -> None:
    """Mark one step succeeded (keeping an earlier output when ``output`` is None)."""
    await conn.run(
        "UPDATE job_steps SET status = 'succeeded', finished_at = ?, duration_ms = ?,"
        " error = NULL, output = COALESCE(?, output) WHERE job_id = ? AND name = ?",
        (at, round(duration_ms, 3), output, job_id, name),
    )
    await touch(conn, job_id, at)


async def step_failed(
    conn: Connection, job_id: str, name: str, at: str, duration_ms: float | None, error: str
) -> None:
    """Mark one step failed with its error."""
    await conn.run(
        "UPDATE job_steps SET status = 'failed', finished_at = ?, duration_ms = ?, error = ?"
        " WHERE job_id = ? AND name = ?",
        (at, round(duration_ms, 3) if duration_ms is not None else None, error, job_id, name),
    )


async def touch(conn: Connection, job_id: str, at: str) -> None:
    """Move the job's updated_at."""
    await conn.run("UPDATE jobs SET updated_at = ? WHERE id = ?", (at, job_id))


async def save_answer(conn: Connection, job_id: str, answer: str, meta_json: str) -> None:
    """Store the reflector's raw answer and the propose step's output."""
    await conn.run("UPDATE jobs SET answer = ? WHERE id = ?", (answer, job_id))
    await conn.run(
        "UPDATE job_steps SET output = ? WHERE job_id = ? AND name = 'propose'",
        (meta_json, job_id),
    )


async def mark_reflected(
    conn: Connection, agent_id: str, job_id: str, episode_ids: Sequence[str], at: str
) -> None:
    """Move the episode watermark past the episodes a job considered."""
    for start in range(0, len(episode_ids), CHUNK):
        chunk = list(episode_ids[start : start + CHUNK])
        await conn.run(
            "UPDATE episodes SET reflected_at = ?, reflected_job = ?"
            " WHERE agent_id = ? AND reflected_at IS NULL"
            f" AND id IN ({placeholders(len(chunk))})",
            (at, job_id, agent_id, *chunk),
        )


async def finish(
    conn: Connection, job_id: str, *, status: str, at: str, output: str | None, error: str | None
) -> None:
    """Finish the job (succeeded or failed) and drop its lease."""
    await conn.run(
        lease.finish_statement(
            "jobs",
            "status = ?, output_data = COALESCE(?, output_data), error = ?, finished_at = ?,"
            " updated_at = ?",
        ),
        (status, output, error, at, at, job_id),
    )


async def reset_running_steps(conn: Connection, job_id: str, reason: str) -> None:
    """Mark the job's running steps pending again, noting why (its lease was given back)."""
    await conn.run(
        "UPDATE job_steps SET status = 'pending', error = ?"
        " WHERE job_id = ? AND status = 'running'",
        (reason, job_id),
    )


async def fail_running_steps(conn: Connection, job_id: str, at: str, error: str) -> None:
    """Fail every step of the job still marked running."""
    await conn.run(
        "UPDATE job_steps SET status = 'failed', finished_at = ?, error = ?"
        " WHERE job_id = ? AND status = 'running'",
        (at, error, job_id),
    )


# --- what the steps read --------------------------------------------------------------------


async def agent_settings(conn: Connection, agent_id: str) -> dict[str, Any] | None:
    """An agent's reflection settings (decoded), or None when there is no such agent."""
    row = await conn.one("SELECT settings FROM agents WHERE id = ?", (agent_id,))
    return _AgentSettings.from_row(row).settings if row is not None else None


async def agent_exists(conn: Connection, agent_id: str) -> bool:
    """Whether the agent exists."""
    return await conn.one("SELECT 1 FROM agents WHERE id = ?", (agent_id,)) is not None


async def episodes_by_id(
    conn: Connection, agent_id: str, ids: Sequence[str]
) -> list[EpisodeRecord]:
    """The agent's episodes among ``ids`` (any order)."""
    rows: list[Any] = []
    for start in range(0, len(ids), CHUNK):
        chunk = list(ids[start : start + CHUNK])
        rows += await conn.rows(
            f"SELECT {EpisodeRecord.columns()} FROM episodes WHERE agent_id = ?"
            f" AND id IN ({placeholders(len(chunk))})",
            (agent_id, *chunk),
        )
    return EpisodeRecord.from_rows(rows)


async def window_jobs(conn: Connection, wake_id: str | None = None) -> list[Row]:
    """Jobs submitted for cron windows (id, agent_id, window_key, status, attempts), by window.

    Exactly once across replicas means one row per (agent, window key) here.
    """
    where = "window_key IS NOT NULL" + (" AND wake_id = ?" if wake_id is not None else "")
    return await conn.rows(
        "SELECT id, agent_id, wake_id, window_key, status, attempts FROM jobs"
        f" WHERE {where} ORDER BY window_key, agent_id, id",
        (wake_id,) if wake_id is not None else (),
    )
