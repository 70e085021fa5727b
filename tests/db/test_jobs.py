"""A job reads back as a typed record, its input and output decoded, on either engine."""

from __future__ import annotations

from credence.db import jobs as db_jobs
from credence.db.engine import Connection, Database

AT = "2026-03-01T10:00:00.000000Z"


async def test_a_job_and_its_agent_settings_come_back_decoded(store: Database) -> None:
    async def seed(conn: Connection) -> str:
        await conn.run(
            "INSERT INTO agents(id, name, settings, created_at, updated_at)"
            " VALUES ('ada', 'Ada', '{\"recall_k\": 3}', ?, ?)",
            (AT, AT),
        )
        job_id, created = await db_jobs.insert_job(
            conn,
            job_id="job_1",
            workflow_id="agent-reflection",
            agent_id="ada",
            trigger="manual",
            input_json='{"reflector": "stub"}',
            now=AT,
            steps=["pull"],
            window_key=None,
            wake_id=None,
            submitted_by="cli",
            max_attempts=3,
        )
        assert created
        return job_id

    job_id = await store.write(seed)
    found = await store.read(lambda conn: db_jobs.fetch(conn, job_id))
    assert found is not None
    job, steps = found
    assert job.input_data == {"reflector": "stub"} and job.output_data is None
    assert job.status == "queued" and [step["name"] for step in steps] == ["pull"]
    await store.write(
        lambda conn: db_jobs.finish(
            conn, job_id, status="succeeded", at=AT, output='{"proposed": 0}', error=None
        )
    )
    ((paged, _),), _ = await store.read(
        lambda conn: db_jobs.page(conn, agent_ids=None, status=None, limit=5, cursor=None)
    )
    assert paged.output_data == {"proposed": 0} and paged.status == "succeeded"
    settings = await store.read(lambda conn: db_jobs.agent_settings(conn, "ada"))
    assert settings == {"recall_k": 3}
    assert await store.read(lambda conn: db_jobs.agent_settings(conn, "nobody")) is None
