"""Runs that cannot read memory fail loudly; a graceful shutdown hands the job back."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from harness.fakes.embed import FakeEmbeddings
from harness.fakes.llm import FakeLLM

from credence.clock import rfc3339
from credence.reflection import jobs
from credence.settings import Settings
from tests.livesrv import cli_key, running
from tests.rawdb import raw_db
from tests.reflection.jobtools import (
    episode,
    make_agent,
    post_episodes,
    run_job,
    submit_job,
    unreflected,
    wait_job,
)


@pytest.fixture
def settings(
    tmp_path: Path, fake_embed: FakeEmbeddings, fake_llm: FakeLLM, database_url: str | None
) -> Settings:
    """A server embedding remotely and reflecting with the fake model."""
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        scheduler=False,
        embed_url=fake_embed.url,
        embed_model="fake",
        llm_url=fake_llm.url,
        llm_model="m",
        llm_timeout_s=30,
    )


def test_a_missing_agent_fails_pull(server, admin) -> None:
    job = server.run(
        jobs.submit(
            server.services.store,
            agent_id="ghost",
            trigger="cron",
            input_data={"agent_id": "ghost"},
            now=rfc3339(server.services.clock()),
        )
    )
    server.services.runner.wake()
    done = wait_job(admin, job.id)
    assert done["status"] == "failed"
    assert done["error"] == "pull: agent 'ghost' not found"
    assert [s["status"] for s in done["steps"]] == ["failed", "pending", "pending", "pending"]


def test_recall_down_fails_pull_and_reflects_nothing(server, admin, fake_embed) -> None:
    make_agent(admin, "ada", recall_queries=["units"])
    ids = post_episodes(admin, "ada", episode("Converted miles.", ("steer", "use km")))
    fake_embed.down = True
    job = run_job(admin, "ada", stub_output="[]")
    assert job["status"] == "failed"
    assert job["error"].startswith("pull: recall search unavailable: embedder unavailable")
    fake_embed.down = False
    assert unreflected(admin, "ada") == set(ids)


def test_embedder_down_at_check_fails_the_job(server, admin, fake_embed) -> None:
    make_agent(admin, "ada")
    (first,) = post_episodes(admin, "ada", episode("Converted miles.", ("steer", "use km")))
    fake_embed.down = True
    answer = (
        '[{"op": "add", "belief": "Use kilometres.", "confidence": 0.6, "rationale": "",'
        f' "source_episodes": ["{first}"]}}]'
    )
    job = run_job(admin, "ada", stub_output=answer)
    assert job["status"] == "failed"
    assert job["error"].startswith("check: embedder unavailable")
    fake_embed.down = False
    assert unreflected(admin, "ada") == {first}


def test_graceful_shutdown_requeues_the_running_job(settings, fake_llm) -> None:
    with running(settings) as live, live.client(cli_key(settings, "admin")) as admin:
        make_agent(admin, "ada")
        post_episodes(admin, "ada", episode("Converted miles.", ("steer", "use km")))
        fake_llm.hold()
        job_id = submit_job(admin, "ada", reflector="llm")["id"]
        assert fake_llm.holding.wait(20)
    with raw_db(settings) as db:
        ((status, attempts),) = db.rows("SELECT status, attempts FROM jobs WHERE id = ?", (job_id,))
        steps = dict(db.rows("SELECT name, status FROM job_steps WHERE job_id = ?", (job_id,)))
    assert (status, attempts) == ("queued", 0)
    assert steps["propose"] == "pending" and steps["pull"] == "succeeded"
    fake_llm.release()
    while fake_llm.holding.is_set():
        time.sleep(0.01)
    with running(settings) as live, live.client(cli_key(settings, "admin")) as admin:
        done = wait_job(admin, job_id)
        assert done["status"] == "succeeded" and done["attempts"] == 1
