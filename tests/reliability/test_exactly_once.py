"""Exactly once: two `credence serve` processes, one due cron window, its runner SIGKILLed."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from harness.fakes.llm import FakeLLM
from harness.httpload import UNLIMITED_RATE_ENV, ServerProcess
from psycopg.rows import dict_row

from credence.access.keys import create_key
from credence.clock import system_clock
from credence.db import make_store
from credence.memory.ingest.episodes import EpisodeService
from credence.memory.semantics.embedders import make_embedder
from credence.models import EpisodeIn, InterventionIn

pytestmark = pytest.mark.slow

PAST = "2026-01-01T00:00:00.000Z"  # the agent and the nightly wake are older than its window
AGENT = "ada"


async def _seed(data_dir: Path, database_url: str | None) -> tuple[str, list[str]]:
    """An agent and a nightly wake created long ago (so a window is due now), episodes, a key."""
    store = make_store(database_url, data_dir / "credence.sqlite3")
    await store.open()
    try:

        async def setup(conn):
            await conn.run(
                "INSERT INTO agents(id, name, roles, settings, created_at, updated_at)"
                " VALUES (?, 'Ada', '[]', '{}', ?, ?)",
                (AGENT, PAST, PAST),
            )
            await conn.run(
                "UPDATE wakes SET created_at = ?, updated_at = ? WHERE id = 'reflection-nightly'",
                (PAST, PAST),
            )
            secret, _ = await create_key(
                conn, scope="admin", agents=None, label="test", clock=system_clock
            )
            return secret

        admin_key = await store.write(setup)
        episodes = EpisodeService(store, make_embedder(None, None, None), system_clock)
        rows, _ = await episodes.ingest(
            AGENT,
            [
                EpisodeIn(
                    session_id=f"s-{n}",
                    summary=f"Uploaded a {20 + n} MB PDF; the ingester ran out of memory.",
                    interventions=[InterventionIn(trigger="steer", text="split PDFs over 10MB")],
                )
                for n in range(4)
            ],
        )
        return admin_key, [row.id for row in rows]
    finally:
        await store.close()


def _answer(episode_ids: list[str]) -> str:
    return json.dumps(
        [
            {
                "op": "add",
                "belief": "Split PDFs over 10MB before sending them to the ingester.",
                "confidence": 0.8,
                "rationale": "the user asked for it four times",
                "source_episodes": episode_ids,
            },
            {
                "op": "add",
                "belief": "Tell the user when an upload is too large instead of retrying.",
                "confidence": 0.6,
                "rationale": "retries wasted the turns",
                "source_episodes": episode_ids[:2],
            },
        ]
    )


JOBS_SQL = "SELECT id, trigger, wake_id, status, attempts, lease_owner, window_key, error FROM jobs"


def _jobs(database: Path, database_url: str | None) -> list[dict[str, Any]]:
    """The agent's jobs, read straight from the database the servers share."""
    if database_url:
        with psycopg.connect(database_url, row_factory=dict_row) as pg:
            return pg.execute(f"{JOBS_SQL} WHERE agent_id = %s ORDER BY id", (AGENT,)).fetchall()
    conn = sqlite3.connect(database, timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(f"{JOBS_SQL} WHERE agent_id = ? ORDER BY id", (AGENT,)).fetchall()
        return [dict(row) for row in rows]
    finally:
        conn.close()


def _holder(lock: Path, servers: list[ServerProcess]) -> ServerProcess:
    """The server process that has ``lock`` open (the job's runner)."""
    for server in servers:
        fd_dir = Path(f"/proc/{server.process.pid}/fd")
        for fd in fd_dir.iterdir():
            try:
                if os.readlink(fd) == str(lock):
                    return server
            except OSError:
                continue
    raise AssertionError(f"no server holds {lock}")


def _wait(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to find the runner")
def test_one_job_per_window_and_a_killed_runner_completes_it_once(
    tmp_path: Path, database_url: str | None
) -> None:
    data_dir = tmp_path / "data"
    database = data_dir / "credence.sqlite3"
    admin_key, episode_ids = asyncio.run(_seed(data_dir, database_url))
    with FakeLLM() as llm:
        llm.hold(_answer(episode_ids))  # the first attempt waits on the model until released
        llm.default = _answer(episode_ids)
        env = {
            **UNLIMITED_RATE_ENV,
            "CREDENCE_SCHEDULER": "1",
            "CREDENCE_LLM_URL": llm.url,
            "CREDENCE_LLM_MODEL": "fake-model",
            **({"CREDENCE_DATABASE_URL": database_url} if database_url else {}),
        }
        servers = [
            ServerProcess(data_dir, env, log_path=tmp_path / f"server-{n}.log") for n in range(2)
        ]
        try:
            for server in servers:
                server.start()
            # both schedulers tick at start-up; the window must yield one job, now mid-propose
            _wait(llm.holding.is_set, 30, "the job to call the model")
            (job,) = _jobs(database, database_url)
            assert (job["trigger"], job["wake_id"]) == ("cron", "reflection-nightly")
            assert job["status"] == "running" and job["attempts"] == 1
            runner = _holder(data_dir / "run" / f"{job['lease_owner']}.lock", servers)
            survivor = next(server for server in servers if server is not runner)
            runner.kill()
            llm.release()

            # the survivor sees the runner's lock freed, retries the job and finishes it
            def finished():
                rows = _jobs(database, database_url)
                return rows if rows and rows[0]["status"] in ("succeeded", "failed") else None

            (done,) = _wait(finished, 30, "the retried job to finish")
            assert done["status"] == "succeeded", done["error"]
            assert done["attempts"] == 2
            assert done["window_key"] == job["window_key"]

            runner.start()  # the killed process comes back, ticks and recovers: nothing to redo
            time.sleep(2.5)  # several poll intervals of both workers
            rows = _jobs(database, database_url)
            assert [(r["id"], r["status"], r["attempts"]) for r in rows] == [
                (job["id"], "succeeded", 2)
            ]
            assert llm.calls == 2  # the killed attempt and the one that completed
            with httpx.Client(
                base_url=survivor.url, headers={"Authorization": f"Bearer {admin_key}"}
            ) as client:
                beliefs = client.get(f"/api/v1/agents/{AGENT}/memory/beliefs").json()["items"]
                assert sorted(b["content"] for b in beliefs) == sorted(
                    p["belief"] for p in json.loads(_answer(episode_ids))
                )
                assert {b["proposed_by"]["job_id"] for b in beliefs} == {job["id"]}
                assert client.get("/api/v1/audit/verify").json()["ok"] is True
                unreflected = client.get(
                    f"/api/v1/agents/{AGENT}/episodes", params={"reflected": "false"}
                ).json()["items"]
                assert unreflected == []
        finally:
            llm.release()
            for server in servers:
                server.stop()
    logs = "\n".join(server.log_text() for server in servers)
    assert "Traceback" not in logs, logs[-3000:]
