"""SIGKILL `credence serve` mid-job, restart it: no job stays running, no episode is lost."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from harness.fakes.embed import FakeEmbeddings
from harness.fakes.llm import FakeLLM
from harness.httpload import UNLIMITED_RATE_ENV, ServerProcess
from psycopg.rows import dict_row

from credence.settings import Settings
from tests.livesrv import cli_key
from tests.reflection.jobtools import (
    beliefs,
    episode,
    make_agent,
    post_episodes,
    submit_job,
    unreflected,
    wait_job,
)

pytestmark = pytest.mark.slow

LESSON = "Weigh baking ingredients in grams."


def _env(fake_llm: FakeLLM, fake_embed: FakeEmbeddings, settings: Settings) -> dict[str, str]:
    return {
        **({"CREDENCE_DATABASE_URL": settings.database_url} if settings.database_url else {}),
        **UNLIMITED_RATE_ENV,
        "CREDENCE_LLM_URL": fake_llm.url,
        "CREDENCE_LLM_MODEL": "crash-test",
        "CREDENCE_LLM_TIMEOUT_S": "60",
        "CREDENCE_EMBED_URL": fake_embed.url,
        "CREDENCE_EMBED_MODEL": "fake-embed",
    }


def _wait_for(flag, what: str, timeout: float = 30.0) -> None:
    if not flag.wait(timeout):
        raise AssertionError(f"timed out waiting for {what}")


def _row(settings: Settings, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
    """Rows read straight from the server's database (``?`` placeholders, either engine)."""
    if settings.database_url:
        with psycopg.connect(settings.database_url, row_factory=dict_row) as pg:
            return pg.execute(sql.replace("?", "%s"), params).fetchall()
    conn = sqlite3.connect(Path(settings.data_dir) / "credence.sqlite3")
    conn.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in conn.execute(sql, params).fetchall()]
    finally:
        conn.close()


def _prepare(server: ServerProcess, settings: Settings) -> tuple[httpx.Client, list[str]]:
    admin = httpx.Client(
        base_url=server.url,
        headers={"Authorization": f"Bearer {cli_key(settings, 'admin')}"},
        timeout=30,
    )
    make_agent(admin, "baker")
    ids = post_episodes(
        admin,
        "baker",
        episode("Converted a cake recipe to cups.", ("steer", "grams, not cups")),
        episode("Converted a bread recipe to ounces.", ("steer", "use grams please")),
        episode("Answered a question about ovens."),
    )
    return admin, ids


def _answer(ids: list[str]) -> str:
    return json.dumps(
        [
            {
                "op": "add",
                "belief": LESSON,
                "confidence": 0.8,
                "rationale": "Corrected twice.",
                "source_episodes": ids[:2],
            }
        ]
    )


def _assert_recovered(admin: httpx.Client, settings: Settings, job_id: str, ids: list[str]) -> dict:
    job = wait_job(admin, job_id, timeout=60)
    assert job["status"] == "succeeded", job
    assert job["attempts"] == 2
    assert all(step["status"] == "succeeded" for step in job["steps"])
    assert _row(settings, "SELECT id FROM jobs WHERE status = 'running'") == []
    stored = _row(settings, "SELECT id, reflected_job FROM episodes ORDER BY seq")
    assert [r["id"] for r in stored] == ids  # nothing lost
    assert {r["reflected_job"] for r in stored} == {job_id}
    assert unreflected(admin, "baker") == set()
    pending = beliefs(admin, "baker", "pending")
    assert [b["content"] for b in pending] == [LESSON]  # submitted once
    return job


def test_kill_while_waiting_for_the_model(settings, fake_llm, fake_embed) -> None:
    data_dir = Path(settings.data_dir)
    server = ServerProcess(data_dir, _env(fake_llm, fake_embed, settings)).start()
    admin, ids = _prepare(server, settings)
    try:
        fake_llm.hold()
        job_id = submit_job(admin, "baker", reflector="llm")["id"]
        _wait_for(fake_llm.holding, "the job to call the model")
        server.kill()

        (row,) = _row(settings, "SELECT status, answer FROM jobs WHERE id = ?", (job_id,))
        assert row["status"] == "running" and row["answer"] is None
        stored = _row(settings, "SELECT reflected_at FROM episodes")
        assert [r["reflected_at"] for r in stored] == [None, None, None]
        fake_llm.release()
        fake_llm.answer(_answer(ids))

        server.start()
        admin.base_url = httpx.URL(server.url)
        job = _assert_recovered(admin, settings, job_id, ids)
        assert fake_llm.calls == 2  # the first call never answered, so it was asked again
        pull = next(s for s in job["steps"] if s["name"] == "pull")
        assert pull["status"] == "succeeded"
    finally:
        admin.close()
        server.stop()


def test_kill_after_the_answer_was_stored(settings, fake_llm, fake_embed) -> None:
    data_dir = Path(settings.data_dir)
    server = ServerProcess(data_dir, _env(fake_llm, fake_embed, settings)).start()
    admin, ids = _prepare(server, settings)
    try:
        fake_llm.answer(_answer(ids))
        fake_embed.hold_on(LESSON)  # the check step embeds the proposals: stop it there
        job_id = submit_job(admin, "baker", reflector="llm")["id"]
        _wait_for(fake_embed.holding, "the check step")
        server.kill()

        (row,) = _row(settings, "SELECT status, answer FROM jobs WHERE id = ?", (job_id,))
        assert row["status"] == "running"
        assert row["answer"] == _answer(ids)
        steps = {
            r["name"]: r["status"]
            for r in _row(
                settings, "SELECT name, status FROM job_steps WHERE job_id = ?", (job_id,)
            )
        }
        assert steps == {
            "pull": "succeeded",
            "propose": "succeeded",
            "check": "running",
            "submit": "pending",
        }
        fake_embed.release()

        server.start()
        admin.base_url = httpx.URL(server.url)
        _assert_recovered(admin, settings, job_id, ids)
        assert fake_llm.calls == 1  # the stored answer was reused: the model was paid once
    finally:
        admin.close()
        server.stop()


def test_a_job_that_keeps_crashing_its_worker_fails(settings, fake_llm, fake_embed) -> None:
    data_dir = Path(settings.data_dir)
    server = ServerProcess(data_dir, _env(fake_llm, fake_embed, settings)).start()
    admin, ids = _prepare(server, settings)
    try:
        fake_llm.hold()
        job_id = submit_job(admin, "baker", reflector="llm")["id"]
        for attempt in range(3):
            _wait_for(fake_llm.holding, f"attempt {attempt + 1} to call the model")
            server.kill()
            fake_llm.release()
            while fake_llm.holding.is_set():
                time.sleep(0.01)
            if attempt < 2:
                fake_llm.hold()  # scripted before the restart, so the retry meets it
            server.start()
            admin.base_url = httpx.URL(server.url)
        job = wait_job(admin, job_id, timeout=30)
        assert job["status"] == "failed"
        assert "stopped 3 times" in job["error"]
        assert _row(settings, "SELECT id FROM jobs WHERE status = 'running'") == []
        assert unreflected(admin, "baker") == set(ids)  # a failed job moves no watermark
    finally:
        admin.close()
        server.stop()
