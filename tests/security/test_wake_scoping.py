"""Wakes are scoped like beliefs: a reviewer sees only wakes of its agents, others are 404."""

from __future__ import annotations

from tests.helpers import make_agent
from tests.livesrv import cli_key


def test_a_reviewer_sees_only_its_agents_wakes(server, admin) -> None:
    for agent_id in ("alpha", "beta"):
        make_agent(admin, agent_id)
    for wake_id, agent_ids in (("for-alpha", ["alpha"]), ("for-beta", ["beta"]), ("both", None)):
        body = {"id": wake_id, "kind": "cron", "cron": "0 3 * * *", "agent_ids": agent_ids}
        assert admin.post("/api/v1/wakes", json=body).status_code == 201
    shared = {"id": "pair", "kind": "cron", "cron": "0 4 * * *", "agent_ids": ["alpha", "beta"]}
    assert admin.post("/api/v1/wakes", json=shared).status_code == 201

    with server.client(cli_key(server.settings, "reviewer", "alpha")) as reviewer:
        listed = {w["id"]: w["agent_ids"] for w in reviewer.get("/api/v1/wakes").json()["items"]}
        assert "for-beta" not in listed
        assert listed["for-alpha"] == ["alpha"] and listed["both"] is None
        assert listed["pair"] == ["alpha"]  # beta is not this key's to know about
        assert reviewer.get("/api/v1/wakes/pair").json()["agent_ids"] == ["alpha"]

        for method, body in (("GET", None), ("PATCH", {"enabled": False}), ("DELETE", None)):
            foreign = reviewer.request(method, "/api/v1/wakes/for-beta", json=body)
            missing = reviewer.request(method, "/api/v1/wakes/no-such-wake", json=body)
            assert foreign.status_code == missing.status_code == 404, (method, foreign.text)
            # Its own agents' wakes are visible, but changing them still needs an admin key.
            if method != "GET":
                own = reviewer.request(method, "/api/v1/wakes/for-alpha", json=body)
                assert own.status_code == 403, (method, own.text)

    beta = admin.get("/api/v1/wakes/for-beta").json()
    assert beta["enabled"] is True and beta["agent_ids"] == ["beta"]
    assert len(admin.get("/api/v1/wakes").json()["items"]) >= 4


def test_a_reviewer_of_every_agent_and_the_admin_see_everything(server, admin) -> None:
    make_agent(admin, "beta")
    body = {"id": "for-beta", "kind": "cron", "cron": "0 3 * * *", "agent_ids": ["beta"]}
    assert admin.post("/api/v1/wakes", json=body).status_code == 201
    with server.client(cli_key(server.settings, "reviewer")) as everyone:
        assert everyone.get("/api/v1/wakes/for-beta").json()["agent_ids"] == ["beta"]
    assert admin.patch("/api/v1/wakes/for-beta", json={"enabled": False}).status_code == 200
    assert admin.delete("/api/v1/wakes/for-beta").status_code == 204
