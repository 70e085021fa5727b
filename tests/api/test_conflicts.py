"""Conflict resolution over HTTP: Keep and Edit retire what a belief contradicts; Reopen undoes."""

from __future__ import annotations

import httpx
import pytest

from credence.memory.semantics import live
from tests.helpers import decide, make_agent, pending_belief, propose
from tests.rawdb import REFUSED, raw_db

YARN = "Use yarn for the frontend"
BUN = "Use bun for the frontend"


def contradicting(admin: httpx.Client, old: dict, text: str = BUN) -> dict:
    """A pending proposal flagged as contradicting ``old`` (as the gate flags a value change)."""
    (result,) = propose(
        admin,
        "coder",
        {
            "op": "add",
            "belief": text,
            "confidence": 0.8,
            "review_reasons": [f"contradicts:{old['id']}", f"changes:{old['id']}:yarn→bun"],
        },
    )
    assert result["accepted"], result
    return admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()


def notes(admin: httpx.Client) -> list[str]:
    response = admin.get("/api/v1/agents/coder/memory/context")
    assert response.status_code == 200, response.text
    return [note["content"] for note in response.json()["memory_notes"]]


def actions(admin: httpx.Client, belief_id: str) -> list[tuple[str, str]]:
    trail = admin.get(f"/api/v1/beliefs/{belief_id}/audit").json()["items"]
    return [(row["action"], row["after_status"]) for row in trail]


@pytest.fixture
def yarn(admin: httpx.Client) -> dict:
    make_agent(admin)
    return decide(admin, pending_belief(admin, text=YARN), "keep").json()


def live_statuses(server) -> dict[str, str]:
    """Each belief's status as the reflection gate's live-belief cache holds it."""
    services = server.services
    cache = server.run(live.agent_beliefs(services.store, "coder", services.embedder.dim))
    return {belief.id: belief.status for belief in cache.live()}


def test_keep_and_retire_leaves_only_the_new_value_and_reopen_brings_the_old_back(
    server, admin, yarn
) -> None:
    bun = contradicting(admin, yarn)
    assert notes(admin) == [YARN]
    kept = decide(admin, bun, "keep", {"retire": [yarn["id"]]}, **{"Idempotency-Key": "tap-1"})
    assert kept.status_code == 200, kept.text
    assert kept.json()["status"] == "active"
    old = admin.get(f"/api/v1/beliefs/{yarn['id']}").json()
    assert old["status"] == "superseded" and old["superseded_by"] == bun["id"]
    assert old["version"] == yarn["version"] + 1
    trail = admin.get(f"/api/v1/beliefs/{yarn['id']}/audit").json()["items"]
    assert trail[-1]["action"] == "superseded" and trail[-1]["actor"].startswith("key:")
    assert trail[-1]["detail"] == f"superseded_by:{bun['id']}"
    assert notes(admin) == [BUN]
    assert live_statuses(server) == {yarn["id"]: "superseded", bun["id"]: "active"}
    superseded = admin.get("/api/v1/beliefs", params={"status": "superseded"}).json()["items"]
    assert [b["id"] for b in superseded] == [yarn["id"]]

    replay = decide(admin, bun, "keep", {"retire": [yarn["id"]]}, **{"Idempotency-Key": "tap-1"})
    assert replay.status_code == 200 and replay.json() == kept.json()
    other = decide(admin, bun, "keep", **{"Idempotency-Key": "tap-1"})
    assert other.status_code == 422
    assert actions(admin, yarn["id"]) == [
        ("proposed", "pending"),
        ("kept", "active"),
        ("superseded", "superseded"),
    ]

    reopened = decide(admin, kept.json(), "reopen")
    assert reopened.status_code == 200 and reopened.json()["status"] == "pending"
    back = admin.get(f"/api/v1/beliefs/{yarn['id']}").json()
    assert back["status"] == "active" and back["superseded_by"] is None
    assert actions(admin, yarn["id"])[-1] == ("restored", "active")
    assert notes(admin) == [YARN]
    assert admin.get("/api/v1/audit/verify").json()["ok"] is True


def test_a_bare_keep_keeps_both(admin, yarn) -> None:
    bun = contradicting(admin, yarn)
    for body in (None, {}, {"retire": []}):
        kept = decide(admin, bun, "keep", body)
        assert kept.status_code == 200, kept.text
        bun = decide(admin, kept.json(), "reopen").json()
    assert admin.get(f"/api/v1/beliefs/{yarn['id']}").json()["status"] == "active"
    assert [a for a, _ in actions(admin, yarn["id"])] == ["proposed", "kept"]


def test_edit_with_retire_supersedes_the_old_value(admin, yarn) -> None:
    bun = contradicting(admin, yarn)
    edited = decide(
        admin, bun, "edit", {"content": "Use bun (1.1+) for the frontend", "retire": [yarn["id"]]}
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["provenance"] == "owner"
    assert admin.get(f"/api/v1/beliefs/{yarn['id']}").json()["superseded_by"] == bun["id"]
    assert notes(admin) == ["Use bun (1.1+) for the frontend"]
    decide(admin, edited.json(), "reopen")
    assert notes(admin) == [YARN]


def test_retire_refuses_unflagged_and_inactive_beliefs_and_changes_nothing(admin, yarn) -> None:
    unrelated = decide(admin, pending_belief(admin, text="Lint before you push"), "keep").json()
    bun = contradicting(admin, yarn)
    refused = decide(admin, bun, "keep", {"retire": [yarn["id"], unrelated["id"]]})
    assert refused.status_code == 422
    assert refused.json()["extra"]["not_retirable"] == [unrelated["id"]]
    ghost = decide(admin, bun, "edit", {"content": BUN, "retire": ["b_" + "0" * 26]})
    assert ghost.status_code == 422
    assert decide(admin, bun, "keep", {"retire": ["not an id"]}).status_code == 400
    assert decide(admin, bun, "keep", {"retire": [yarn["id"]], "extra": 1}).status_code == 400

    forgotten = decide(admin, yarn, "forget", {"reason": "we moved on"}).json()
    inactive = decide(admin, bun, "keep", {"retire": [yarn["id"]]})
    assert inactive.status_code == 409
    assert inactive.json()["extra"]["not_active"] == {yarn["id"]: "forgotten"}
    assert admin.get(f"/api/v1/beliefs/{bun['id']}").json()["status"] == "pending"
    assert admin.get(f"/api/v1/beliefs/{yarn['id']}").json() == forgotten
    assert [a for a, _ in actions(admin, bun["id"])] == ["proposed"]


def test_retire_keeps_if_match_rules(admin, yarn) -> None:
    bun = contradicting(admin, yarn)
    path = f"/api/v1/beliefs/{bun['id']}/keep"
    missing = admin.post(path, json={"retire": [yarn["id"]]})
    assert missing.status_code == 428
    stale = admin.post(path, json={"retire": [yarn["id"]]}, headers={"If-Match": '"7"'})
    assert stale.status_code == 412 and stale.headers["etag"] == '"1"'
    assert admin.get(f"/api/v1/beliefs/{yarn['id']}").json()["status"] == "active"


def test_the_database_refuses_a_superseded_belief_without_its_successor(server, admin, yarn):
    with raw_db(server.settings) as db, pytest.raises(REFUSED, match=r"(?i)check"):
        db.execute("UPDATE beliefs SET status = 'superseded' WHERE id = ?", (yarn["id"],))


def test_export_lists_superseded_beliefs_apart_from_active_memory(admin, yarn) -> None:
    bun = contradicting(admin, yarn)
    decide(admin, bun, "keep", {"retire": [yarn["id"]]})
    exported = admin.get("/api/v1/agents/coder/memory/export").json()
    by_id = {b["id"]: b for b in exported["beliefs"]}
    assert by_id[bun["id"]]["status"] == "active"
    assert by_id[yarn["id"]]["status"] == "superseded"
    assert by_id[yarn["id"]]["superseded_by"] == bun["id"]
    markdown = admin.get("/api/v1/agents/coder/memory/export/markdown")
    active, _, retired = markdown.text.partition("## Superseded")
    assert "Use bun for the frontend" in active and "Use yarn" not in active
    assert "Use yarn for the frontend" in retired
