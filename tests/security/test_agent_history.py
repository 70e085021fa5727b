"""An agent key reads its own agent's decisions only, and never a reviewer's device label."""

from __future__ import annotations

from tests.helpers import decide, make_agent, pending_belief
from tests.livesrv import cli_key

DEVICE = "Ana's iPhone 15"


def test_agent_keys_see_their_decisions_without_device_labels(server, admin) -> None:
    make_agent(admin)
    make_agent(admin, "other")
    kept = pending_belief(admin, text="Use bun for the frontend")
    elsewhere = pending_belief(admin, "other", text="Other agent's lesson")
    with server.client(cli_key(server.settings, "reviewer", label=DEVICE)) as phone:
        assert decide(phone, kept, "keep").status_code == 200
        assert decide(phone, elsewhere, "keep").status_code == 200
        assert DEVICE in phone.get("/api/v1/audit").text  # reviewers still see who decided
    with server.client(cli_key(server.settings, "agent", "coder")) as agent:
        feed = agent.get("/api/v1/audit")
        trail = agent.get(f"/api/v1/beliefs/{kept['id']}/audit")
        foreign = agent.get("/api/v1/audit", params={"agent_id": "other"}).json()
    assert feed.status_code == 200 and trail.status_code == 200
    assert DEVICE not in feed.text and DEVICE not in trail.text
    assert [(e["agent_id"], e["actor_label"]) for e in feed.json()["items"]] == [
        ("coder", "a reviewer")
    ]
    assert foreign["items"] == []
