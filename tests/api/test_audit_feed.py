"""The decision feed behind History: every decision, newest first, actors named by key label."""

from __future__ import annotations

from tests.helpers import decide, make_agent, pending_belief
from tests.livesrv import cli_key


def test_the_feed_lists_decisions_newest_first_with_key_labels(server, admin) -> None:
    make_agent(admin)
    make_agent(admin, "other")
    phone_key = cli_key(server.settings, "reviewer", label="Ana's phone")
    kept = pending_belief(admin, text="Use bun for the frontend")
    forgotten = pending_belief(admin, text="Deploy on Fridays")
    elsewhere = pending_belief(admin, "other", text="Other agent's lesson")
    with server.client(phone_key) as phone:
        assert decide(phone, kept, "keep").status_code == 200
        assert decide(phone, forgotten, "forget", {"reason": "no"}).status_code == 200
        assert decide(phone, elsewhere, "keep").status_code == 200
        feed = phone.get("/api/v1/audit", params={"agent_id": "coder"}).json()
    assert [(e["action"], e["content"]) for e in feed["items"]] == [
        ("forgotten", "Deploy on Fridays"),
        ("kept", "Use bun for the frontend"),
    ]
    assert {e["actor_label"] for e in feed["items"]} == {"Ana's phone"}
    assert all(e["actor"].startswith("key:") for e in feed["items"])
    # The per-belief trail carries the label too.
    trail = admin.get(f"/api/v1/beliefs/{kept['id']}/audit").json()["items"]
    assert [row["actor_label"] for row in trail] == ["tests", "Ana's phone"]


def test_the_feed_pages_by_cursor_and_hides_other_agents(server, admin) -> None:
    make_agent(admin)
    make_agent(admin, "other")
    for n in range(3):
        assert decide(admin, pending_belief(admin, text=f"Lesson {n}"), "keep").status_code == 200
    decide(admin, pending_belief(admin, "other", text="Hidden lesson"), "keep")
    first = admin.get("/api/v1/audit", params={"limit": 2}).json()
    second = admin.get("/api/v1/audit", params={"limit": 2, "cursor": first["next_cursor"]}).json()
    seen = [e["content"] for e in first["items"] + second["items"]]
    assert seen == ["Hidden lesson", "Lesson 2", "Lesson 1", "Lesson 0"]
    assert second["next_cursor"] is None
    coder_key = cli_key(server.settings, "reviewer", "coder", label="coder only")
    with server.client(coder_key) as coder:
        items = coder.get("/api/v1/audit").json()["items"]
        assert "Hidden lesson" not in [e["content"] for e in items]
        assert coder.get("/api/v1/audit", params={"agent_id": "other"}).json()["items"] == []
        assert coder.get("/api/v1/audit", params={"cursor": "x"}).status_code == 400
