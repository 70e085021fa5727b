"""Agents over real HTTP: create, list, read, update, and who may do which."""

from __future__ import annotations

from tests.helpers import make_agent
from tests.livesrv import cli_key


def test_create_get_list_and_update(admin) -> None:
    created = make_agent(admin, "coder", roles=["backend"], reflection={"cron": "0 4 * * *"})
    assert created["reflection"]["cron"] == "0 4 * * *"
    assert created["reflection"]["max_diffs"] == 10 and created["reflection"]["recall_k"] == 50
    make_agent(admin, "support")
    assert admin.get("/api/v1/agents/coder").json()["roles"] == ["backend"]
    page = admin.get("/api/v1/agents", params={"limit": 1}).json()
    assert [a["id"] for a in page["items"]] == ["coder"]
    rest = admin.get("/api/v1/agents", params={"cursor": page["next_cursor"]}).json()
    assert [a["id"] for a in rest["items"]] == ["support"] and rest["next_cursor"] is None
    patched = admin.patch("/api/v1/agents/coder", json={"name": "Coding agent"})
    assert patched.status_code == 200
    assert patched.json()["name"] == "Coding agent" and patched.json()["roles"] == ["backend"]


def test_duplicate_agent_is_a_conflict_and_bad_input_is_refused(admin) -> None:
    make_agent(admin, "coder")
    assert admin.post("/api/v1/agents", json={"id": "coder", "name": "x"}).status_code == 409
    for bad in ("Has Spaces", "", "-leading", "x" * 65):
        response = admin.post("/api/v1/agents", json={"id": bad, "name": "x"})
        assert response.status_code == 400, bad
        assert response.json()["detail"]
    bad_cron = admin.post(
        "/api/v1/agents", json={"id": "c2", "name": "x", "reflection": {"cron": "every day"}}
    )
    assert bad_cron.status_code == 400 and "cron" in bad_cron.json()["detail"]
    never = {"id": "c2", "name": "x", "reflection": {"cron": "0 0 31 2 *"}}
    unschedulable = admin.post("/api/v1/agents", json=never)
    assert unschedulable.status_code == 422 and "cron" in unschedulable.json()["detail"]
    assert admin.get("/api/v1/agents/c2").status_code == 404


def test_reviewer_sees_only_its_agents(server, admin) -> None:
    make_agent(admin, "alpha")
    make_agent(admin, "beta")
    key = cli_key(server.settings, "reviewer", "alpha")
    with server.client(key) as reviewer:
        assert [a["id"] for a in reviewer.get("/api/v1/agents").json()["items"]] == ["alpha"]
        assert reviewer.get("/api/v1/agents/beta").status_code == 404
        assert reviewer.post("/api/v1/agents", json={"id": "g", "name": "g"}).status_code == 403
        assert reviewer.patch("/api/v1/agents/alpha", json={"name": "n"}).status_code == 403


def test_bodies_are_validated_strictly(admin) -> None:
    make_agent(admin)
    lenient = {"reflection": {"enabled": 0}}
    response = admin.patch("/api/v1/agents/coder", json=lenient)
    assert response.status_code == 400 and "enabled" in response.json()["detail"]
    response = admin.patch("/api/v1/agents/coder", json={"reflection": {"recall_k": 10.5}})
    assert response.status_code == 400
    assert admin.get("/api/v1/agents/coder").json()["reflection"]["enabled"] is True


def test_options_lists_exactly_the_documented_methods(server, admin) -> None:
    make_agent(admin)
    with server.client() as anonymous:
        response = anonymous.options("/api/v1/agents/coder")
    assert response.status_code == 204
    assert response.headers["allow"] == "GET, OPTIONS, PATCH"
