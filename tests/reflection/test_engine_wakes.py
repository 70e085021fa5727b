"""Wakes: due cron windows, exactly one job per window across two servers, the scheduler flag."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from credence.components import context_component
from credence.db.wakes import WakeAgent, WakeRecord
from credence.reflection.engine import reflection_component
from credence.reflection.wakes import due_windows, latest_window, window_key
from credence.settings import Settings
from tests.livesrv import LiveServer, cli_key, running
from tests.reflection.jobtools import episode, make_agent, post_episodes, wait_job

T0 = datetime(2030, 1, 1, 2, 59, tzinfo=UTC)


def _wake(wake_id="nightly", cron="0 3 * * *", agent_ids=None, enabled=1, created=T0):
    return WakeRecord.from_row(
        {
            "id": wake_id,
            "kind": "cron",
            "workflow_id": "agent-reflection",
            "cron": cron,
            "event": None,
            "agent_ids": json.dumps(agent_ids) if agent_ids is not None else None,
            "enabled": enabled,
            "input_data": "{}",
            "description": "",
            "created_at": created.isoformat(),
            "updated_at": created.isoformat(),
            "last_fired_at": None,
        }
    )


def _agent(agent_id="ada", created=T0, **reflection):
    return WakeAgent.from_row(
        {"id": agent_id, "settings": json.dumps(reflection), "created_at": created.isoformat()}
    )


def test_latest_window_and_key() -> None:
    now = datetime(2030, 1, 2, 3, 0, 30, tzinfo=UTC)
    assert latest_window("0 3 * * *", now) == datetime(2030, 1, 2, 3, 0, tzinfo=UTC)
    assert window_key(latest_window("0 3 * * *", now)) == "cron:2030-01-02T03:00Z"


def test_only_the_latest_window_after_creation_is_due() -> None:
    assert due_windows([_wake()], [_agent()], T0) == []  # 03:00 yesterday predates both
    later = T0 + timedelta(days=3, minutes=5)
    (due,) = due_windows([_wake()], [_agent()], later)
    assert due == {
        "wake_id": "nightly",
        "agent_id": "ada",
        "window_key": "cron:2030-01-04T03:00Z",
        "input_data": {"agent_id": "ada"},
    }


def test_targets_enabled_flags_and_agent_cron() -> None:
    now = T0 + timedelta(hours=7)  # 09:59
    agents = [
        _agent("ada"),
        _agent("bob", enabled=False),
        _agent("cyd", cron="0 9 * * *"),
        _agent("dee", created=now),
    ]
    keys = {(d["agent_id"], d["window_key"]) for d in due_windows([_wake()], agents, now)}
    assert keys == {("ada", "cron:2030-01-01T03:00Z"), ("cyd", "cron:2030-01-01T03:00Z")}
    own = {
        (d["agent_id"], d["window_key"])
        for d in due_windows([_wake(cron=None, agent_ids=["cyd", "ada"])], agents, now)
    }
    assert own == {("ada", "cron:2030-01-01T03:00Z"), ("cyd", "cron:2030-01-01T09:00Z")}
    assert due_windows([_wake(enabled=0)], agents, now) == []


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def clock() -> Clock:
    """Starts a minute before a nightly window."""
    return Clock(T0)


@pytest.fixture
def pair(
    tmp_path: Path, clock: Clock, database_url: str | None
) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two schedulers on one data dir (and database), ticking fast."""
    settings = Settings(data_dir=tmp_path / "data", database_url=database_url, scheduler=True)
    components = [context_component(), reflection_component(tick_s=0.02, poll_s=0.02)]
    with (
        running(settings, clock=clock, components=components) as one,
        running(settings, clock=clock, components=components) as two,
    ):
        yield one, two


def _jobs(server: LiveServer) -> list[dict]:
    rows = server.run(server.services.store.fetchall("SELECT * FROM jobs ORDER BY created_at"))
    return [dict(row) for row in rows]


def test_two_servers_run_each_window_once(pair, clock: Clock) -> None:
    one, two = pair
    with one.client(cli_key(one.settings, "admin")) as admin:
        make_agent(admin, "ada")
        post_episodes(admin, "ada", episode("Did something."))
        time.sleep(0.3)
        assert _jobs(one) == []  # 03:00 of yesterday predates the agent
        for day in range(2):
            clock.at = T0 + timedelta(days=day, minutes=1, seconds=30)
            deadline = time.monotonic() + 10
            while len(_jobs(one)) < day + 1 and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.5)  # let both schedulers tick many more times
            jobs = _jobs(two)
            assert len(jobs) == day + 1
            job = jobs[-1]
            assert job["trigger"] == "cron" and job["wake_id"] == "reflection-nightly"
            assert job["window_key"] == f"cron:2030-01-0{day + 1}T03:00Z"
            assert wait_job(admin, job["id"])["status"] == "succeeded"
        wakes = {w["id"]: w for w in admin.get("/api/v1/wakes").json()["items"]}
        assert wakes["reflection-nightly"]["last_fired_at"] is not None


def test_without_the_scheduler_cron_wakes_stay_quiet(
    tmp_path: Path, clock: Clock, database_url: str | None
) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=database_url, scheduler=False)
    components = [context_component(), reflection_component(tick_s=0.02, poll_s=0.02)]
    with (
        running(settings, clock=clock, components=components) as live,
        live.client(cli_key(settings, "admin")) as admin,
    ):
        make_agent(admin, "ada")
        clock.at = T0 + timedelta(days=1, minutes=1)
        time.sleep(0.3)
        assert _jobs(live) == []
        manual = admin.post(
            "/api/v1/jobs",
            json={"workflow_id": "agent-reflection", "input_data": {"agent_id": "ada"}},
        ).json()
        assert wait_job(admin, manual["id"])["status"] == "succeeded"
