"""Replicas on one PostgreSQL: claims, cron windows, events and lease takeovers race safely."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from credence.clock import rfc3339
from credence.db import jobs as db_jobs
from credence.db.pgstore import PostgresStore
from credence.models import JobOutput
from credence.reflection import jobs, wakes

T0 = datetime(2030, 1, 1, 3, 0, 30, tzinfo=UTC)  # just after the nightly 03:00 window
PAST = "2029-01-01T00:00:00.000Z"
LEASE = 30.0
OUTPUT = JobOutput(
    episodes_considered=0, proposed=0, results=[], dropped=[], decayed=[], reflector="stub"
)
AGENTS = ("ada", "bob", "cy", "dee")


def alive(_: str) -> bool:
    """No process lock says anything: only expired leases free a job."""
    return False


@pytest.fixture
async def replicas(pg_migrated_url: str) -> AsyncIterator[list[PostgresStore]]:
    """Three stores (three replicas' pools) on one migrated database with four old agents."""
    stores = [PostgresStore(pg_migrated_url, pool_size=4) for _ in range(3)]
    for store in stores:
        await store.open()

    async def seed(conn):
        await conn.run_many(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
            [(agent, agent.title(), PAST, PAST) for agent in AGENTS],
        )
        await conn.run(
            "UPDATE wakes SET created_at = ?, updated_at = ? WHERE id = 'reflection-nightly'",
            (PAST, PAST),
        )

    await stores[0].write(seed)
    yield stores
    for store in stores:
        await store.close()


async def _queue(store: PostgresStore, agent_id: str) -> str:
    job = await jobs.submit(
        store, agent_id=agent_id, trigger="manual", input_data={}, now=rfc3339(T0)
    )
    return job.id


async def _claim_all(store: PostgresStore, owner: str) -> list[str]:
    claimed = []
    while (job_id := await jobs.claim(store, owner, T0, LEASE)) is not None:
        claimed.append(job_id)
    return claimed


async def test_racing_claims_take_each_job_once_and_one_per_agent(
    replicas: list[PostgresStore],
) -> None:
    for agent in AGENTS:
        for _ in range(3):
            await _queue(replicas[0], agent)
    for _ in range(3):  # a round per job of each agent: replicas claim until none is left
        found = await asyncio.gather(
            *(_claim_all(store, f"wrk_{n}") for n, store in enumerate(replicas))
        )
        claimed = [job_id for batch in found for job_id in batch]
        assert len(claimed) == len(set(claimed))
        rows = await replicas[0].fetchall(
            "SELECT agent_id, COUNT(*) AS n FROM jobs WHERE status = 'running' GROUP BY agent_id"
        )
        assert all(row["n"] == 1 for row in rows), [tuple(r) for r in rows]
        assert len(rows) == len(AGENTS)
        # finish the running jobs so the next round claims the next job of every agent
        for batch, owner in zip(found, ("wrk_0", "wrk_1", "wrk_2"), strict=True):
            for job_id in batch:
                await jobs.fail(
                    replicas[0],
                    job_id,
                    owner,
                    step=None,
                    at=rfc3339(T0),
                    duration_ms=None,
                    error="done",
                )
    statuses = await replicas[0].fetchall("SELECT status, attempts FROM jobs")
    assert {(row["status"], row["attempts"]) for row in statuses} == {("failed", 1)}
    assert len(statuses) == 3 * len(AGENTS)


async def test_a_cron_window_runs_once_across_replicas(replicas: list[PostgresStore]) -> None:
    seen: list[set[tuple[str, str]]] = [set() for _ in replicas]
    created = []
    for _ in range(3):  # every replica ticks the same instant, repeatedly, at once
        ticks = await asyncio.gather(
            *(wakes.tick(store, T0, seen[n]) for n, store in enumerate(replicas))
        )
        created += [job_id for batch in ticks for job_id in batch]
    rows = await replicas[1].read(lambda conn: db_jobs.window_jobs(conn, "reflection-nightly"))
    assert sorted(row["agent_id"] for row in rows) == sorted(AGENTS)
    assert {row["window_key"] for row in rows} == {"cron:2030-01-01T03:00Z"}
    assert sorted(created) == sorted(row["id"] for row in rows)  # each submitted exactly once
    steps = await replicas[0].fetchall(
        "SELECT job_id, COUNT(*) AS n FROM job_steps GROUP BY job_id"
    )
    assert {row["n"] for row in steps} == {4} and len(steps) == len(AGENTS)
    # the next window is a new job, submitted once whichever replica ticks it
    later = T0 + timedelta(days=1)
    assert len(await wakes.tick(replicas[2], later, set())) == len(AGENTS)
    assert await wakes.tick(replicas[0], later, set()) == []


async def test_an_event_burst_on_every_replica_queues_one_job(
    replicas: list[PostgresStore],
) -> None:
    fired = await asyncio.gather(
        *(
            wakes.fire_event(store, "reflection-episodes-ready", "ada", T0, f"replica-{n}")
            for n, store in enumerate(replicas)
            for _ in range(3)
        )
    )
    job_ids = {job.id for _, found in fired for job in found}
    assert len(job_ids) == 1
    rows = await replicas[0].fetchall("SELECT id FROM jobs WHERE agent_id = 'ada'")
    assert [row["id"] for row in rows] == list(job_ids)


async def test_a_replica_that_stops_mid_job_is_taken_over_after_its_lease(
    replicas: list[PostgresStore],
) -> None:
    dead, survivor = replicas[0], replicas[1]
    job_id = await _queue(dead, "ada")
    assert await jobs.claim(dead, "wrk_dead", T0, LEASE) == job_id
    await jobs.advance(dead, job_id, "wrk_dead", at=rfc3339(T0), start="pull")
    # the dead replica stops heartbeating; until its lease lapses nobody takes the job
    soon = T0 + timedelta(seconds=LEASE - 1)
    assert await jobs.recover(survivor, soon, alive, "wrk_new") == []
    assert await jobs.claim(survivor, "wrk_new", soon, LEASE) is None
    later = T0 + timedelta(seconds=LEASE + 1)
    taken = await asyncio.gather(
        jobs.recover(survivor, later, alive, "wrk_new"),
        jobs.recover(replicas[2], later, alive, "wrk_third"),
    )
    assert sorted(change for found in taken for change in found) == [(job_id, "queued")]
    assert await jobs.claim(survivor, "wrk_new", later, LEASE) == job_id
    # the stalled replica wakes up: everything it tries is fenced out
    with pytest.raises(jobs.LeaseLost):
        await jobs.store_answer(dead, job_id, "wrk_dead", "[]", {})
    with pytest.raises(jobs.LeaseLost):
        await jobs.succeed(
            dead,
            job_id,
            "wrk_dead",
            agent_id="ada",
            at=rfc3339(later),
            duration_ms=1.0,
            output=OUTPUT,
            reflected_ids=[],
        )
    assert not await jobs.heartbeat(dead, job_id, "wrk_dead", later, LEASE)
    await jobs.succeed(
        survivor,
        job_id,
        "wrk_new",
        agent_id="ada",
        at=rfc3339(later),
        duration_ms=1.0,
        output=OUTPUT,
        reflected_ids=[],
    )
    job = await jobs.get(replicas[2], job_id)
    assert job is not None and job.status == "succeeded" and job.attempts == 2
    assert job.output_data is not None and job.output_data.reflector == "stub"


async def test_the_lease_fence_holds_while_the_owner_commits(
    replicas: list[PostgresStore],
) -> None:
    owner_store, other = replicas[0], replicas[1]
    job_id = await _queue(owner_store, "ada")
    assert await jobs.claim(owner_store, "wrk_slow", T0, LEASE) == job_id
    inside = asyncio.Event()
    finish = asyncio.Event()

    async def fenced_write(conn) -> str:
        # what the proposals transaction does: check the lease, then write under it
        await jobs.require_lease(conn, job_id, "wrk_slow")
        inside.set()
        await finish.wait()
        await conn.run("UPDATE jobs SET answer = 'written under the lease' WHERE id = ?", (job_id,))
        return "committed"

    writing = asyncio.create_task(owner_store.write(fenced_write))
    await inside.wait()
    later = T0 + timedelta(seconds=LEASE + 1)
    # the lease has lapsed, but its owner holds the row: the takeover leaves it alone for now
    assert await jobs.recover(other, later, alive, "wrk_new") == []
    finish.set()
    assert await writing == "committed"
    assert await jobs.recover(other, later, alive, "wrk_new") == [(job_id, "queued")]
    row, _ = await jobs.raw(other, job_id)
    assert row.answer == "written under the lease" and row.status == "queued"
