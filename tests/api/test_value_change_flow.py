"""A changed value end to end: proposed, flagged by the gate itself, kept with the old retired."""

from __future__ import annotations

import httpx
import pytest

from tests.helpers import decide, make_agent, pending_belief, post_episode, propose


def context_notes(client: httpx.Client, query: str | None = None) -> list[str]:
    """The notes the agent would read, with or without a task query."""
    params = {"query": query} if query else {}
    response = client.get("/api/v1/agents/coder/memory/context", params=params)
    assert response.status_code == 200, response.text
    return [note["content"] for note in response.json()["memory_notes"]]


@pytest.mark.parametrize(
    ("old_text", "new_text", "change"),
    [
        ("Use yarn for the frontend", "Use bun for the frontend", "yarn→bun"),
        ("Keep logs for 14 days", "Keep logs for 90 days", "14 days→90 days"),
    ],
)
def test_a_value_change_reaches_the_agent_only_after_the_reviewer_retires_the_old(
    admin: httpx.Client, old_text: str, new_text: str, change: str
) -> None:
    make_agent(admin)
    old = decide(admin, pending_belief(admin, text=old_text), "keep").json()
    episode = post_episode(admin, summary=f"the team switched: {new_text}")

    # No review reasons from the caller: the flags below come from the gate alone.
    (result,) = propose(
        admin,
        "coder",
        {"op": "add", "belief": new_text, "confidence": 0.8, "source_episodes": [episode["id"]]},
    )
    assert result["accepted"], result
    new = admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()
    assert new["status"] == "pending"
    assert f"contradicts:{old['id']}" in new["review_reasons"]
    changes = [r for r in new["review_reasons"] if r.startswith(f"changes:{old['id']}:")]
    assert len(changes) == 1
    assert changes[0].split(":", 2)[2].lower() == change
    # The same reasons, structured: no client needs to parse the strings.
    assert {"kind": "contradicts", "target": old["id"], "change": None} in new["reasons"]
    (structured,) = [r for r in new["reasons"] if r["kind"] == "changes"]
    assert structured["target"] == old["id"]
    assert f"{structured['change']['old']}→{structured['change']['new']}".lower() == change
    assert context_notes(admin) == [old_text]

    kept = decide(admin, new, "keep", {"retire": [old["id"]]})
    assert kept.status_code == 200, kept.text
    assert admin.get(f"/api/v1/beliefs/{old['id']}").json()["status"] == "superseded"
    assert context_notes(admin) == [new_text]
    assert context_notes(admin, query=old_text) == [new_text]
