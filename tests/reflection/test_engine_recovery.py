"""Leases: claiming, fencing, expiry, retries and giving up; process liveness locks."""

from __future__ import annotations

import fcntl
import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from credence.clock import rfc3339
from credence.db import make_store
from credence.db.engine import Database
from credence.reflection import jobs
from credence.reflection.checkpoints import AnswerMeta
from tests.reflection.jobtools import wait_job

T0 = datetime(2030, 1, 1, tzinfo=UTC)
LEASE = 30.0


@pytest.fixture
async def store(tmp_path: Path, database_url: str | None) -> AsyncIterator[Database]:
    """A migrated store of the test's engine with one agent."""
    store = make_store(database_url, tmp_path / "credence.sqlite3")
    await store.open()

    async def agent(conn):
        await conn.run(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('ada', 'Ada', ?, ?)",
            (rfc3339(T0), rfc3339(T0)),
        )

    await store.write(agent)
    yield store
    await store.close()


async def _queued(store: Database, agent_id: str = "ada") -> str:
    job = await jobs.submit(
        store,
        agent_id=agent_id,
        trigger="manual",
        input_data={"agent_id": agent_id},
        now=rfc3339(T0),
    )
    return job.id


def alive(_: str) -> bool:
    """Every owner is alive: only lease expiry can recover a job."""
    return False


async def test_claim_takes_one_job_per_agent(store: Database) -> None:
    first = await _queued(store)
    await _queued(store)
    assert await jobs.claim(store, "wrk_a", T0, LEASE) == first
    assert await jobs.claim(store, "wrk_b", T0, LEASE) is None  # ada already has a running job
    job = await jobs.get(store, first)
    assert job.status == "running" and job.attempts == 1


async def test_expired_lease_is_retried_then_fails(store: Database) -> None:
    job_id = await _queued(store)
    now = T0
    for attempt in (1, 2, 3):
        assert await jobs.claim(store, f"wrk_{attempt}", now, LEASE) == job_id
        await jobs.advance(store, job_id, f"wrk_{attempt}", start="pull", at=rfc3339(now))
        assert await jobs.recover(store, now + timedelta(seconds=LEASE - 1), alive, "me") == []
        now += timedelta(seconds=LEASE + 1)
        expected = "queued" if attempt < 3 else "failed"
        assert await jobs.recover(store, now, alive, "me") == [(job_id, expected)]
    job = await jobs.get(store, job_id)
    assert job.status == "failed" and job.attempts == 3
    assert "stopped 3 times" in job.error
    pull = job.steps[0]
    assert pull.status == "failed" and pull.error.startswith("interrupted")


async def test_a_requeued_job_resets_its_running_step(store: Database) -> None:
    job_id = await _queued(store)
    await jobs.claim(store, "wrk_dead", T0, LEASE)
    await jobs.advance(store, job_id, "wrk_dead", start="propose", at=rfc3339(T0))
    assert await jobs.recover(store, T0, lambda owner: owner == "wrk_dead", "me") == [
        (job_id, "queued")
    ]
    job = await jobs.get(store, job_id)
    propose = next(s for s in job.steps if s.name == "propose")
    assert job.status == "queued" and propose.status == "pending"
    assert "interrupted" in propose.error


async def test_a_worker_that_lost_its_lease_is_fenced_out(store: Database) -> None:
    job_id = await _queued(store)
    await jobs.claim(store, "wrk_slow", T0, LEASE)
    await jobs.recover(store, T0 + timedelta(seconds=LEASE + 1), alive, "me")
    await jobs.claim(store, "wrk_new", T0 + timedelta(seconds=LEASE + 1), LEASE)
    with pytest.raises(jobs.LeaseLost):
        await jobs.advance(store, job_id, "wrk_slow", start="pull", at=rfc3339(T0))
    with pytest.raises(jobs.LeaseLost):
        await jobs.store_answer(
            store, job_id, "wrk_slow", "[]", AnswerMeta(reflector="stub", considered=[])
        )
    assert not await jobs.heartbeat(store, job_id, "wrk_slow", T0, LEASE)
    assert await jobs.heartbeat(store, job_id, "wrk_new", T0 + timedelta(seconds=40), LEASE)
    row, _ = await jobs.raw(store, job_id)
    assert row.lease_owner == "wrk_new"
    assert row.lease_until == rfc3339(T0 + timedelta(seconds=40 + LEASE))


async def test_release_gives_the_job_back_without_using_an_attempt(store: Database) -> None:
    job_id = await _queued(store)
    await jobs.claim(store, "wrk_a", T0, LEASE)
    await jobs.release(store, job_id, "wrk_a", rfc3339(T0), "interrupted")
    job = await jobs.get(store, job_id)
    assert job.status == "queued" and job.attempts == 0


async def test_windows_are_unique(store: Database) -> None:
    async def insert(conn):
        return [
            await jobs.insert_job(
                conn,
                agent_id="ada",
                trigger="cron",
                input_data={},
                now=rfc3339(T0),
                window_key="cron:2030-01-01T03:00Z",
            )
            for _ in range(2)
        ]

    (first, created), (second, again) = await store.write(insert)
    assert created and not again and first == second
    rows = await store.fetchall("SELECT id FROM jobs")
    assert [r["id"] for r in rows] == [first]


def test_liveness_locks(server) -> None:
    runner = server.services.runner
    assert not runner.owner_is_dead(runner.owner)  # its lock is held
    # On PostgreSQL a replica elsewhere leaves no lock file here: only its lease can tell.
    missing_means_dead = server.services.store.dialect == "sqlite"
    assert runner.owner_is_dead("wrk_never_existed") is missing_means_dead
    stale = runner.run_dir / "wrk_stale.lock"
    stale.write_text("")
    assert runner.owner_is_dead("wrk_stale") and not stale.exists()
    held = runner.run_dir / "wrk_other.lock"
    fd = os.open(held, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert not runner.owner_is_dead("wrk_other")
    finally:
        os.close(fd)
    assert runner.owner_is_dead("wrk_other")


def test_a_job_that_lost_its_lease_cannot_create_beliefs(server, admin) -> None:
    from credence.models import ProposalIn, ProposedBy

    services = server.services
    engine = services.runner.engine
    assert admin.post("/api/v1/agents", json={"id": "ada", "name": "Ada"}).status_code == 201
    # wrk_other is alive (its lock is held) and its lease is current, so the server's runner
    # leaves the job to it; the job is written running in one go, so the runner never claims it.
    held = os.open(services.runner.run_dir / "wrk_other.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)

    async def taken_over(conn):
        job_id, _ = await jobs.insert_job(
            conn, agent_id="ada", trigger="manual", input_data={}, now=rfc3339(T0)
        )
        await conn.run(
            "UPDATE jobs SET status = 'running', lease_owner = 'wrk_other',"
            " lease_until = ? WHERE id = ?",
            (rfc3339(services.clock() + timedelta(hours=1)), job_id),
        )
        return job_id

    job_id = server.run(services.store.write(taken_over))
    proposal = ProposalIn(op="add", belief="Use grams.", confidence=0.5)
    engine.running.add(job_id)
    try:
        with pytest.raises(jobs.LeaseLost):
            server.run(
                services.beliefs.propose(
                    "ada", [proposal], ProposedBy(job_id=job_id, reflector="stub"), "job"
                )
            )
    finally:
        engine.running.discard(job_id)
        os.close(held)
    assert admin.get("/api/v1/agents/ada/memory/beliefs").json()["items"] == []
    # Another process's job, or no job at all, is not this worker's to fence.
    (result,) = server.run(
        services.beliefs.propose("ada", [proposal], ProposedBy(job_id=job_id), "job")
    )
    assert result.accepted


def test_a_retry_after_submit_reports_the_beliefs_it_already_made(server, admin) -> None:
    import asyncio
    import json

    from credence.reflection import steps

    services = server.services
    assert admin.post("/api/v1/agents", json={"id": "ada", "name": "Ada"}).status_code == 201
    body = {"session_id": "s", "summary": "Used cups.", "interventions": []}
    episode = admin.post("/api/v1/agents/ada/episodes", json=body).json()["episode"]
    answer = json.dumps(
        [
            {
                "op": "add",
                "belief": text,
                "confidence": 0.5,
                "rationale": "r",
                "source_episodes": [episode["id"]],
            }
            for text in (
                "Weigh flour in grams.",
                "Ask before deleting files.",
                "Reply to customers in their language.",
            )
        ]
    )
    job = server.run(
        jobs.submit(
            services.store,
            agent_id="ada",
            trigger="manual",
            input_data={"agent_id": "ada", "reflector": "stub", "stub_output": answer},
            now=rfc3339(services.clock()),
        )
    )

    async def first_attempt_dies_after_submit() -> tuple:
        owner = "wrk_doomed"
        assert await jobs.claim(services.store, owner, services.clock(), LEASE) == job.id
        deps = services.reflection
        run = steps.JobRun(
            job_id=job.id,
            agent_id="ada",
            owner=owner,
            input=jobs.job_input((await jobs.raw(services.store, job.id))[0]),
            clock=services.clock,
            sleep=asyncio.sleep,
        )
        pulled = await steps.pull(deps, run, None)
        proposed = await steps.propose(deps, run, pulled, None)
        checked = await steps.check(deps, run, proposed)
        submitted = await steps.submit(deps, run, checked)
        return submitted.results  # ...and the process dies before the job is marked succeeded

    # The server's own runner must not pick the job up while we play the doomed worker.
    runner = services.runner
    first = server.run(first_attempt_dies_after_submit())
    assert [r.accepted for r in first] == [True, True, True]
    if services.store.dialect == "postgresql":
        # A replica elsewhere leaves no lock file: its job is taken over once its lease lapses
        # (by this recover, or by the runner's own loop if it polls first).
        lapsed = rfc3339(services.clock() - timedelta(seconds=1))

        async def lease_lapses(conn):
            await conn.run("UPDATE jobs SET lease_until = ? WHERE id = ?", (lapsed, job.id))

        server.run(services.store.write(lease_lapses))
        assert server.run(runner.recover()) in ([(job.id, "queued")], [])
    else:
        # No lock file: the doomed owner is dead at once, to this recover or to the runner's
        # own loop if it polled while the doomed attempt ran (a loaded machine).
        assert server.run(runner.recover()) in ([(job.id, "queued")], [])
    runner.wake()
    done = wait_job(admin, job.id)
    assert done["status"] == "succeeded" and done["attempts"] == 2
    results = done["output_data"]["results"]
    assert [r["belief_id"] for r in results] == [r.belief_id for r in first]
    assert all(r["accepted"] and r["gate"] == "safe" for r in results)
    pending = admin.get("/api/v1/agents/ada/memory/beliefs", params={"status": "pending"})
    assert len(pending.json()["items"]) == 3  # nothing submitted twice
