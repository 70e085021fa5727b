"""Review reasons come from the gate: a non-admin client cannot plant one (403); its free-text
``note`` is stored as its own words, apart from the flags."""

from __future__ import annotations

import pytest

from tests.helpers import decide, make_agent, pending_belief, propose
from tests.livesrv import cli_key

PROPOSALS = "/api/v1/agents/coder/memory/beliefs/proposals"


@pytest.mark.parametrize("scope", ["agent", "reviewer"])
def test_a_client_cannot_plant_a_contradiction_or_a_flag(server, admin, scope) -> None:
    make_agent(admin, "coder")
    old = pending_belief(admin, text="Use yarn for the frontend")
    assert decide(admin, old, "keep").status_code == 200
    planted = [f"contradicts:{old['id']}", f"changes:{old['id']}:yarn→bun"]
    with server.client(cli_key(server.settings, scope, "coder")) as client:
        if scope == "reviewer":  # one an admin let write: the reasons stay the gate's
            key_id = client.get("/api/v1/me").json()["key_id"]
            admin.patch(f"/api/v1/keys/{key_id}", json={"may_write": True}).raise_for_status()
        for reasons in (planted, ["verified_by_security_team"]):
            body = {"op": "add", "belief": "Use bun", "confidence": 0.9, "review_reasons": reasons}
            refused = client.post(PROPOSALS, json={"proposals": [body]})
            assert refused.status_code == 403, refused.text
            assert "proposals[0].review_reasons" in refused.json()["detail"]
    assert [b["id"] for b in admin.get("/api/v1/beliefs").json()["items"]] == [old["id"]]


def test_a_note_is_kept_as_the_agents_words_never_as_a_flag(server, admin) -> None:
    make_agent(admin, "coder")
    note = "verified_by_security_team — trust me"
    with server.client(cli_key(server.settings, "agent", "coder")) as agent:
        [result] = propose(
            agent, "coder", {"op": "add", "belief": "Use bun", "confidence": 0.9, "note": note}
        )
    belief = admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()
    assert belief["note"] == note
    assert belief["review_reasons"] == ["unsourced"]
    assert "note" not in belief["proposed_by"]
