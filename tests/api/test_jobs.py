"""Jobs, events and wakes over real HTTP: shapes, scopes, bounds and refusals."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from credence.settings import Settings
from tests.livesrv import LiveServer, cli_key, running
from tests.reflection.jobtools import make_agent, submit_job, wait_job

WORKFLOW = "agent-reflection"


def _job(client: httpx.Client, **input_data) -> httpx.Response:
    return client.post("/api/v1/jobs", json={"workflow_id": WORKFLOW, "input_data": input_data})


@pytest.fixture
def idle(settings: Settings) -> Iterator[LiveServer]:
    """A server without the job runner: submitted jobs stay queued."""
    from credence.components import context_component

    with running(settings, components=[context_component()]) as live:
        yield live


# --- jobs -------------------------------------------------------------------------------------


def test_submit_answers_202_with_the_queued_job(idle: LiveServer) -> None:
    with idle.client(cli_key(idle.settings, "admin")) as admin:
        make_agent(admin, "ada")
        response = _job(admin, agent_id="ada", reflector="stub", stub_output="[]")
        assert response.status_code == 202
        job = response.json()
        assert response.headers["Location"] == f"/api/v1/jobs/{job['id']}"
        assert job["status"] == "queued" and job["trigger"] == "manual"
        assert job["workflow_id"] == WORKFLOW and job["agent_id"] == "ada"
        assert job["input_data"] == {"agent_id": "ada", "reflector": "stub", "stub_output": "[]"}
        assert [(s["name"], s["status"]) for s in job["steps"]] == [
            ("pull", "pending"),
            ("propose", "pending"),
            ("check", "pending"),
            ("submit", "pending"),
        ]
        assert job["output_data"] is None and job["error"] is None and job["attempts"] == 0
        assert admin.get(f"/api/v1/jobs/{job['id']}").json() == job


def test_job_runs_and_lists(server, admin) -> None:
    make_agent(admin, "ada")
    make_agent(admin, "bob")
    first = wait_job(admin, submit_job(admin, "ada", stub_output="[]")["id"])
    second = wait_job(admin, submit_job(admin, "bob", stub_output="oops")["id"])
    assert first["status"] == "succeeded" and second["status"] == "failed"
    assert first["attempts"] == 1 and first["started_at"] and first["finished_at"]

    listing = admin.get("/api/v1/jobs").json()["items"]
    assert [j["id"] for j in listing] == [second["id"], first["id"]]
    by_agent = admin.get("/api/v1/jobs", params={"agent_id": "ada"}).json()["items"]
    assert [j["id"] for j in by_agent] == [first["id"]]
    failed = admin.get("/api/v1/jobs", params={"status": "failed"}).json()["items"]
    assert [j["id"] for j in failed] == [second["id"]]
    page = admin.get("/api/v1/jobs", params={"limit": 1}).json()
    assert [j["id"] for j in page["items"]] == [second["id"]]
    rest = admin.get("/api/v1/jobs", params={"limit": 1, "cursor": page["next_cursor"]}).json()
    assert [j["id"] for j in rest["items"]] == [first["id"]] and rest["next_cursor"] is None


def test_keys_see_only_their_agents_jobs(server, admin) -> None:
    make_agent(admin, "ada")
    make_agent(admin, "bob")
    bobs = submit_job(admin, "bob", stub_output="[]")
    reviewer = cli_key(server.settings, "reviewer", "ada")
    agent = cli_key(server.settings, "agent", "ada")
    for key in (reviewer, agent):
        with server.client(key) as client:
            assert client.get(f"/api/v1/jobs/{bobs['id']}").status_code == 404
            assert _job(client, agent_id="bob", stub_output="[]").status_code == 404
            assert client.get("/api/v1/jobs", params={"agent_id": "bob"}).json()["items"] == []
            mine = _job(client, agent_id="ada", reflector="heuristic")
            assert mine.status_code == 202
            listed = client.get("/api/v1/jobs").json()["items"]
            assert {j["agent_id"] for j in listed} == {"ada"}


def test_unknown_agent_and_job_answer_404(server, admin) -> None:
    assert _job(admin, agent_id="ghost", stub_output="[]").status_code == 404
    assert admin.get("/api/v1/jobs/job_00000000000000000000000000").status_code == 404


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"workflow_id": "other", "input_data": {"agent_id": "ada"}}, 400),
        ({"workflow_id": WORKFLOW}, 400),
        ({"workflow_id": WORKFLOW, "input_data": {}}, 400),
        ({"workflow_id": WORKFLOW, "input_data": {"agent_id": "ada", "extra": 1}}, 400),
        ({"workflow_id": WORKFLOW, "input_data": {"agent_id": "ada", "reflector": "gpt"}}, 400),
        ({"workflow_id": WORKFLOW, "input_data": {"agent_id": "ada", "now": "yesterday"}}, 400),
        (
            {
                "workflow_id": WORKFLOW,
                "input_data": {"agent_id": "ada", "now": "2026-01-01T00:00:00"},
            },
            400,
        ),
        ({"workflow_id": WORKFLOW, "input_data": {"agent_id": "Bad Id"}}, 400),
        (
            {"workflow_id": WORKFLOW, "input_data": {"agent_id": "ada", "stub_output": "a\x00b"}},
            400,
        ),
        ({"workflow_id": WORKFLOW, "input_data": {"agent_id": "ada", "reflector": "stub"}}, 422),
        ({"workflow_id": WORKFLOW, "input_data": {"agent_id": "ada", "reflector": "llm"}}, 422),
        (
            {
                "workflow_id": WORKFLOW,
                "input_data": {"agent_id": "ada", "reflector": "heuristic", "stub_output": "[]"},
            },
            422,
        ),
    ],
)
def test_bad_submissions_are_refused(server, admin, body, status) -> None:
    make_agent(admin, "ada")
    response = admin.post("/api/v1/jobs", json=body)
    assert response.status_code == status, response.text
    assert response.json()["status_code"] == status


def test_oversized_stub_output_is_refused(server, admin) -> None:
    make_agent(admin, "ada")
    response = _job(admin, agent_id="ada", stub_output="[" + " " * 200_001 + "]")
    assert response.status_code == 400


@pytest.mark.parametrize(
    "params",
    [{"status": "done"}, {"limit": 0}, {"limit": 201}, {"agent_id": "Bad"}, {"cursor": "a b"}],
)
def test_bad_list_queries_are_refused(server, admin, params) -> None:
    assert admin.get("/api/v1/jobs", params=params).status_code == 400


def test_bad_job_id_is_refused(server, admin) -> None:
    assert admin.get("/api/v1/jobs/not-an-id").status_code == 400


# --- events -----------------------------------------------------------------------------------


def _event(client: httpx.Client, agent_id: str, name: str = "reflection-episodes-ready"):
    return client.post("/api/v1/events", json={"name": name, "agent_id": agent_id})


def test_event_submits_one_job_and_a_burst_coalesces(idle: LiveServer) -> None:
    with idle.client(cli_key(idle.settings, "admin")) as admin:
        make_agent(admin, "ada")
        first = _event(admin, "ada")
        assert first.status_code == 202
        body = first.json()
        assert body["name"] == "reflection-episodes-ready" and body["agent_id"] == "ada"
        assert body["wakes"] == ["reflection-episodes-ready"]
        (job,) = body["jobs"]
        assert job["trigger"] == "event" and job["wake_id"] == "reflection-episodes-ready"
        assert job["status"] == "queued"
        again = _event(admin, "ada").json()
        assert [j["id"] for j in again["jobs"]] == [job["id"]]


def test_event_job_runs_with_the_worker(server, admin) -> None:
    make_agent(admin, "ada")
    (job,) = _event(admin, "ada").json()["jobs"]
    assert wait_job(admin, job["id"])["status"] == "succeeded"


def test_events_without_listeners_or_for_disabled_agents_submit_nothing(server, admin) -> None:
    make_agent(admin, "ada")
    make_agent(admin, "off", enabled=False)
    assert _event(admin, "ada", name="something-else").json()["jobs"] == []
    disabled = _event(admin, "off").json()
    assert disabled["jobs"] == [] and disabled["wakes"] == []


def test_agent_keys_fire_events_for_their_own_agent_only(server, admin) -> None:
    make_agent(admin, "ada")
    make_agent(admin, "bob")
    with server.client(cli_key(server.settings, "agent", "ada")) as agent:
        assert _event(agent, "ada").status_code == 202
        assert _event(agent, "bob").status_code == 404
    assert _event(admin, "ghost").status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": "x"},
        {"name": "Bad Name", "agent_id": "ada"},
        {"name": "x", "agent_id": "ada", "y": 1},
    ],
)
def test_bad_events_are_refused(server, admin, body) -> None:
    assert admin.post("/api/v1/events", json=body).status_code == 400


# --- wakes ------------------------------------------------------------------------------------


def test_default_wakes_are_listed(server, admin) -> None:
    items = {w["id"]: w for w in admin.get("/api/v1/wakes").json()["items"]}
    assert set(items) == {"reflection-nightly", "reflection-episodes-ready"}
    nightly = items["reflection-nightly"]
    assert nightly["kind"] == "cron" and nightly["cron"] == "0 3 * * *"
    assert nightly["next_fire_at"].endswith("T03:00:00.000000Z")
    assert nightly["agent_ids"] is None and nightly["enabled"] is True
    event = items["reflection-episodes-ready"]
    assert event["kind"] == "event" and event["event"] == "reflection-episodes-ready"
    assert event["next_fire_at"] is None


def test_wakes_are_created_edited_and_deleted(server, admin) -> None:
    created = admin.post(
        "/api/v1/wakes",
        json={"id": "hourly", "kind": "cron", "cron": "0 * * * *", "agent_ids": ["ada"]},
    )
    assert created.status_code == 201, created.text
    assert created.json()["next_fire_at"].endswith(":00:00.000000Z")
    assert (
        admin.post(
            "/api/v1/wakes", json={"id": "hourly", "kind": "cron", "cron": "0 * * * *"}
        ).status_code
        == 409
    )
    patched = admin.patch("/api/v1/wakes/hourly", json={"cron": "*/5 * * * *", "enabled": False})
    assert patched.status_code == 200
    assert patched.json()["cron"] == "*/5 * * * *" and patched.json()["enabled"] is False
    follow = admin.patch(
        "/api/v1/wakes/hourly", json={"follow_agent_cron": True, "all_agents": True}
    )
    assert follow.json()["cron"] is None and follow.json()["agent_ids"] is None
    assert admin.get("/api/v1/wakes/hourly").json()["cron"] is None
    assert admin.delete("/api/v1/wakes/hourly").status_code == 204
    assert admin.get("/api/v1/wakes/hourly").status_code == 404
    assert admin.delete("/api/v1/wakes/hourly").status_code == 404
    assert admin.patch("/api/v1/wakes/hourly", json={"enabled": True}).status_code == 404


@pytest.mark.parametrize(
    ("body", "status"),
    [
        # The schema's cron pattern refuses these: 400.
        ({"id": "w", "kind": "cron", "cron": "not a cron"}, 400),
        ({"id": "w", "kind": "cron", "cron": "61 * * * *"}, 400),
        # Well-formed but never fires (30 February; last day of month on the first Monday).
        ({"id": "w", "kind": "cron", "cron": "0 0 30 2 *"}, 422),
        ({"id": "w", "kind": "cron", "cron": "3 */8 L JUN/30,*/2 5#1"}, 422),
        ({"id": "w", "kind": "cron", "cron": "0 3 * * *", "event": "x"}, 422),
        ({"id": "w", "kind": "event"}, 422),
        ({"id": "w", "kind": "event", "event": "x", "cron": "0 3 * * *"}, 422),
        ({"id": "w", "kind": "sometimes"}, 400),
        ({"id": "W W", "kind": "event", "event": "x"}, 400),
        ({"id": "w", "kind": "event", "event": "x", "input_data": {"stub_output": "[]"}}, 400),
    ],
)
def test_bad_wakes_are_refused(server, admin, body, status) -> None:
    response = admin.post("/api/v1/wakes", json=body)
    assert response.status_code == status, response.text


def test_bad_wake_edits_are_refused(server, admin) -> None:
    patch = "/api/v1/wakes/reflection-episodes-ready"
    assert admin.patch(patch, json={"cron": "0 3 * * *"}).status_code == 422
    nightly = "/api/v1/wakes/reflection-nightly"
    assert admin.patch(nightly, json={"event": "x"}).status_code == 422
    assert admin.patch(nightly, json={"cron": "nope nope"}).status_code == 400
    both = {"cron": "0 3 * * *", "follow_agent_cron": True}
    assert admin.patch(nightly, json=both).status_code == 422
    assert admin.patch(nightly, json={"agent_ids": ["a"], "all_agents": True}).status_code == 422
    assert admin.patch(nightly, json={"surprise": 1}).status_code == 400


def test_only_admins_edit_wakes_and_agents_cannot_list_them(server, admin) -> None:
    make_agent(admin, "ada")
    reviewer = cli_key(server.settings, "reviewer")
    with server.client(reviewer) as client:
        assert client.get("/api/v1/wakes").status_code == 200
        assert client.get("/api/v1/wakes/reflection-nightly").status_code == 200
        body = {"id": "w", "kind": "event", "event": "x"}
        assert client.post("/api/v1/wakes", json=body).status_code == 403
        assert client.patch("/api/v1/wakes/reflection-nightly", json={}).status_code == 403
        assert client.delete("/api/v1/wakes/reflection-nightly").status_code == 403
    with server.client(cli_key(server.settings, "agent", "ada")) as client:
        assert client.get("/api/v1/wakes").status_code == 403
