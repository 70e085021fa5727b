"""A retry resumes from the checkpoints an interrupted attempt left, whatever version wrote them."""

from __future__ import annotations

import json
from datetime import timedelta

from credence.clock import rfc3339
from credence.db import jobs as db_jobs
from credence.reflection import jobs
from tests.reflection.jobtools import episode, make_agent, post_episodes, wait_job


def _answer(belief: str, source: str) -> str:
    entry = {
        "op": "add",
        "belief": belief,
        "confidence": 0.6,
        "rationale": "The user said so.",
        "source_episodes": [source],
    }
    return json.dumps([entry])


def _interrupted_mid_propose(
    server, stub_output: str, pull_output: str, answer: str, answer_meta: str
) -> str:
    """A job whose first worker died in propose, after pull and after storing the answer.

    Written in one transaction, with a lease that has already lapsed, so the server's runner
    can only see the job once it is in this state; it then takes it over as a retry.
    """
    services = server.services
    now = services.clock()
    at, lapsed = rfc3339(now), rfc3339(now - timedelta(seconds=1))

    async def crash(conn):
        job_id, _ = await jobs.insert_job(
            conn,
            agent_id="ada",
            trigger="manual",
            input_data={"agent_id": "ada", "reflector": "stub", "stub_output": stub_output},
            now=at,
        )
        assert await db_jobs.claim(conn, "wrk_gone", at, lapsed) == job_id
        await db_jobs.start_step(conn, job_id, "pull", at)
        await db_jobs.step_done(conn, job_id, "pull", at, 1.0, pull_output)
        await db_jobs.start_step(conn, job_id, "propose", at)
        await db_jobs.save_answer(conn, job_id, answer, answer_meta)
        return job_id

    job_id = server.run(services.store.write(crash))
    services.runner.wake()
    return job_id


def _checkpoints(server, job_id: str) -> dict[str, dict | None]:
    rows = server.run(
        server.services.store.fetchall(
            "SELECT name, output FROM job_steps WHERE job_id = ?", (job_id,)
        )
    )
    return {row["name"]: json.loads(row["output"]) if row["output"] else None for row in rows}


def test_a_job_interrupted_before_an_upgrade_resumes_from_its_dict_checkpoints(
    server, admin
) -> None:
    make_agent(admin, "ada")
    first, second = post_episodes(
        admin,
        "ada",
        episode("Weighed flour.", ("steer", "Use grams, not cups.")),
        episode("Cleaned up.", ("denial", "Ask before deleting files.")),
    )
    # Checkpoints as versions before typed steps wrote them: json.dumps of plain dicts.
    pull_output = json.dumps(
        {
            "episode_ids": [first],
            "untrusted": [],
            "ranking": "newest",
            "active_beliefs": 0,
            "refused": 0,
            "edited": 0,
        }
    )
    meta = json.dumps({"reflector": "stub", "considered": [first], "partial": None, "usage": None})
    job_id = _interrupted_mid_propose(
        server,
        stub_output=_answer("Ask before deleting files.", second),
        pull_output=pull_output,
        answer=_answer("Weigh flour in grams.", first),
        answer_meta=meta,
    )
    done = wait_job(admin, job_id)
    assert done["status"] == "succeeded" and done["attempts"] == 2, done
    output = done["output_data"]
    # The stored answer was parsed again, not asked for twice; pull kept its episodes.
    assert [r["belief"] for r in output["results"]] == ["Weigh flour in grams."]
    assert output["episodes_considered"] == 1 and output["reflector"] == "stub"
    checkpoints = _checkpoints(server, job_id)
    assert checkpoints["pull"]["episode_ids"] == [first]
    assert checkpoints["propose"]["reused_answer"] is True
    assert checkpoints["propose"]["considered"] == [first]
    assert checkpoints["submit"] == {"accepted": 1, "rejected": 0}


def test_a_job_with_unreadable_checkpoints_runs_those_steps_afresh(server, admin) -> None:
    make_agent(admin, "ada")
    first, second = post_episodes(
        admin,
        "ada",
        episode("Weighed flour.", ("steer", "Use grams, not cups.")),
        episode("Cleaned up.", ("denial", "Ask before deleting files.")),
    )
    job_id = _interrupted_mid_propose(
        server,
        stub_output=_answer("Ask before deleting files.", second),
        pull_output=json.dumps({"episodes": 1}),
        answer=_answer("Weigh flour in grams.", first),
        answer_meta="{not json",
    )
    done = wait_job(admin, job_id)
    assert done["status"] == "succeeded" and done["attempts"] == 2, done
    output = done["output_data"]
    # Pull ran again (both episodes), and the reflector was asked again.
    assert [r["belief"] for r in output["results"]] == ["Ask before deleting files."]
    assert output["episodes_considered"] == 2
    checkpoints = _checkpoints(server, job_id)
    assert sorted(checkpoints["pull"]["episode_ids"]) == sorted([first, second])
    assert checkpoints["propose"]["reused_answer"] is False
    assert server.run(jobs.raw(server.services.store, job_id))[0].answer == _answer(
        "Ask before deleting files.", second
    )
