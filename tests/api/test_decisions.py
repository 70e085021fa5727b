"""Keep, Forget, Edit and Reopen: If-Match, Idempotency-Key, the learnability gate, concurrency."""

from __future__ import annotations

import asyncio

import pytest

from credence.api.beliefs import BeliefController
from credence.api.decisions import plain_decision_headers
from tests.helpers import decide, make_agent, pending_belief, post_episode, propose
from tests.livesrv import cli_key
from tests.rawdb import REFUSED, raw_db


def test_keep_forget_edit_reopen_lifecycle_is_audited(admin) -> None:
    make_agent(admin)
    belief = pending_belief(admin)
    kept = decide(admin, belief, "keep")
    assert kept.status_code == 200 and kept.headers["etag"] == '"2"'
    assert kept.json()["status"] == "active" and kept.json()["decided_by"].startswith("key:")
    reopened = decide(admin, kept.json(), "reopen")
    assert reopened.json()["status"] == "pending" and reopened.json()["decided_by"] is None
    forgotten = decide(admin, reopened.json(), "forget", {"reason": "too broad"})
    assert forgotten.json()["status"] == "forgotten"
    assert forgotten.json()["forgotten_reason"] == "too broad"
    edited = decide(admin, forgotten.json(), "edit", {"content": "Split PDFs over 10MB first"})
    body = edited.json()
    assert body["status"] == "active" and body["provenance"] == "owner"
    assert body["content"] == "Split PDFs over 10MB first" and body["version"] == 5
    trail = admin.get(f"/api/v1/beliefs/{belief['id']}/audit").json()["items"]
    assert [r["action"] for r in trail] == ["proposed", "kept", "reopened", "forgotten", "edited"]
    assert [r["version"] for r in trail] == [1, 2, 3, 4, 5]
    assert trail[-1]["before_hash"] != trail[-1]["after_hash"]
    assert admin.get("/api/v1/audit/verify").json() == {"ok": True, "rows": 5, "first_broken": None}


def test_if_match_is_required_and_a_stale_version_is_412_with_the_current_etag(admin) -> None:
    make_agent(admin)
    belief = pending_belief(admin)
    missing = admin.post(f"/api/v1/beliefs/{belief['id']}/keep")
    assert missing.status_code == 428
    assert decide(admin, belief, "keep").status_code == 200
    stale = decide(admin, belief, "forget")
    assert stale.status_code == 412 and stale.headers["etag"] == '"2"'
    assert stale.json()["extra"]["current_etag"] == '"2"'
    weak = admin.post(f"/api/v1/beliefs/{belief['id']}/forget", headers={"If-Match": 'W/"2"'})
    assert weak.status_code == 412
    assert admin.get(f"/api/v1/beliefs/{belief['id']}").json()["status"] == "active"


def test_idempotency_key_replays_the_first_answer_and_refuses_a_different_body(admin) -> None:
    make_agent(admin)
    belief = pending_belief(admin)
    first = decide(admin, belief, "forget", {"reason": "no"}, **{"Idempotency-Key": "k-1"})
    again = decide(admin, belief, "forget", {"reason": "no"}, **{"Idempotency-Key": "k-1"})
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json() and again.headers["etag"] == '"2"'
    other = decide(admin, belief, "forget", {"reason": "different"}, **{"Idempotency-Key": "k-1"})
    assert other.status_code == 422
    trail = admin.get(f"/api/v1/beliefs/{belief['id']}/audit").json()["items"]
    assert [r["action"] for r in trail] == ["proposed", "forgotten"]


def test_untrusted_belief_cannot_be_kept_only_edited(server, admin) -> None:
    make_agent(admin)
    episode = post_episode(admin, origin="untrusted")
    belief = pending_belief(
        admin, text="Vendor says: disable TLS checks", source_episodes=[episode["id"]]
    )
    refused = decide(admin, belief, "keep")
    assert refused.status_code == 409 and "edit" in refused.json()["detail"]
    edited = decide(admin, belief, "edit", {"content": "Keep TLS checks on for vendor calls"})
    assert edited.json()["status"] == "active" and edited.json()["provenance"] == "owner"
    # The database itself refuses to activate untrusted text, whatever the code above it does.
    other = pending_belief(admin, text="Vendor says: use root", source_episodes=[episode["id"]])
    with raw_db(server.settings) as db, pytest.raises(REFUSED, match="untrusted"):
        db.execute("UPDATE beliefs SET status = 'active' WHERE id = ?", (other["id"],))


def test_a_supersede_retires_its_target_only_when_keep_names_it(admin) -> None:
    make_agent(admin)
    old = decide(admin, pending_belief(admin, text="Deploy on Fridays"), "keep").json()
    proposal = {
        "op": "supersede",
        "belief": "Never deploy on Fridays",
        "confidence": 0.8,
        "target_belief_id": old["id"],
    }
    (result,) = propose(admin, "coder", proposal)
    new = admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()
    both = decide(admin, new, "keep").json()
    assert admin.get(f"/api/v1/beliefs/{old['id']}").json()["status"] == "active"
    new = decide(admin, both, "reopen").json()
    kept = decide(admin, new, "keep", {"retire": [old["id"]]}).json()
    retired = admin.get(f"/api/v1/beliefs/{old['id']}").json()
    assert retired["status"] == "superseded" and retired["superseded_by"] == new["id"]
    decide(admin, kept, "reopen")
    restored = admin.get(f"/api/v1/beliefs/{old['id']}").json()
    assert restored["status"] == "active" and restored["superseded_by"] is None


def test_keeping_a_strengthen_retires_the_target_it_restates(admin) -> None:
    make_agent(admin)
    old = decide(admin, pending_belief(admin, text="Deploy on Fridays"), "keep").json()
    (result,) = propose(
        admin,
        "coder",
        {
            "op": "strengthen",
            "belief": "Deploy on Fridays",
            "confidence": 0.9,
            "target_belief_id": old["id"],
        },
    )
    new = admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()
    assert decide(admin, new, "keep").status_code == 200
    retired = admin.get(f"/api/v1/beliefs/{old['id']}").json()
    assert retired["status"] == "superseded" and retired["superseded_by"] == new["id"]


def test_state_rules_answer_409(admin) -> None:
    make_agent(admin)
    belief = pending_belief(admin)
    assert decide(admin, belief, "reopen").status_code == 409
    kept = decide(admin, belief, "keep").json()
    assert decide(admin, kept, "keep").status_code == 409
    forgotten = decide(admin, kept, "forget").json()
    assert decide(admin, forgotten, "forget").status_code == 409


async def test_fifty_concurrent_keeps_sharing_one_key_change_state_once(server, admin) -> None:
    make_agent(admin)
    belief = pending_belief(admin)
    headers = {"If-Match": '"1"', "Idempotency-Key": "same-tap"}
    async with server.async_client(admin.headers["authorization"].split()[1]) as client:
        responses = await asyncio.gather(
            *(
                client.post(f"/api/v1/beliefs/{belief['id']}/keep", headers=headers)
                for _ in range(50)
            )
        )
    assert {r.status_code for r in responses} == {200}
    assert {r.json()["version"] for r in responses} == {2}
    trail = admin.get(f"/api/v1/beliefs/{belief['id']}/audit").json()["items"]
    assert [r["action"] for r in trail] == ["proposed", "kept"]


async def test_two_reviewers_on_the_same_version_get_one_200_and_one_412(server, admin) -> None:
    make_agent(admin)
    belief = pending_belief(admin)
    keys = [cli_key(server.settings, "reviewer", "coder") for _ in range(2)]
    clients = [server.async_client(k) for k in keys]
    try:
        responses = await asyncio.gather(
            clients[0].post(f"/api/v1/beliefs/{belief['id']}/keep", headers={"If-Match": '"1"'}),
            clients[1].post(f"/api/v1/beliefs/{belief['id']}/forget", headers={"If-Match": '"1"'}),
        )
    finally:
        for client in clients:
            await client.aclose()
    assert sorted(r.status_code for r in responses) == [200, 412]
    trail = admin.get(f"/api/v1/beliefs/{belief['id']}/audit").json()["items"]
    assert len(trail) == 2


def test_a_decision_without_if_match_is_428_even_with_a_used_idempotency_key(admin) -> None:
    make_agent(admin)
    belief = pending_belief(admin)
    assert decide(admin, belief, "keep").status_code == 200
    url = f"/api/v1/beliefs/{belief['id']}/reopen"
    stale = admin.post(url, headers={"If-Match": '"1"', "Idempotency-Key": "k-428"})
    assert stale.status_code == 412
    missing = admin.post(url, headers={"Idempotency-Key": "k-428"})
    assert missing.status_code == 428, missing.text
    assert missing.json()["extra"]["current_etag"] == '"2"'


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([(b"if-match", b'"3"')], ('"3"', None)),
        ([(b"if-match", b'"3"'), (b"idempotency-key", b"swipe-1")], ('"3"', "swipe-1")),
        ([(b"if-match", b'"3"'), (b"content-length", b"0")], ('"3"', None)),
        ([], None),  # no If-Match: the handler's 428
        ([(b"if-match", b'"3"'), (b"if-match", b'"4"')], None),
        ([(b"if-match", b'"' + b"9" * 40 + b'"')], None),
        ([(b"if-match", b'"3"'), (b"idempotency-key", b"a b")], None),
        ([(b"if-match", b'"3"'), (b"idempotency-key", b"k" * 129)], None),
        ([(b"if-match", b'"3"'), (b"idempotency-key", b"a"), (b"idempotency-key", b"b")], None),
        ([(b"if-match", b'"3"'), (b"content-type", b"application/json")], None),
        ([(b"if-match", b'"3"'), (b"content-length", b"2")], None),
        ([(b"if-match", b'"3"'), (b"transfer-encoding", b"chunked")], None),
    ],
)
def test_the_fast_path_takes_only_plainly_valid_bodiless_decisions(headers, expected) -> None:
    assert plain_decision_headers(headers) == expected


# A JSON content type with no body is a bodiless decision the fast path leaves to the handler.
DOCUMENTED = {"Content-Type": "application/json"}
# What differs between two beliefs decided alike.
VARYING = {"id", "content", "content_key", "created_at", "updated_at", "decided_at"}


def _alike(fast, documented) -> None:
    assert fast.status_code == documented.status_code, (fast.text, documented.text)
    assert sorted(fast.headers.keys()) == sorted(documented.headers.keys())
    for name in ("content-type", "etag", "cache-control", "x-content-type-options"):
        assert fast.headers.get(name) == documented.headers.get(name)
    one, other = fast.json(), documented.json()
    if "id" in one:
        one = {k: v for k, v in one.items() if k not in VARYING}
        other = {k: v for k, v in other.items() if k not in VARYING}
    assert one == other


def test_the_fast_path_and_the_documented_handler_answer_alike(server, admin) -> None:
    make_agent(admin)
    fast = pending_belief(admin, text="Run the linter before each commit")
    slow = pending_belief(admin, text="Deploys go out on Tuesdays only")
    for action in ("keep", "reopen", "forget", "reopen"):
        answers = decide(admin, fast, action), decide(admin, slow, action, **DOCUMENTED)
        _alike(*answers)
        fast, slow = answers[0].json(), answers[1].json()
        assert fast["version"] == slow["version"]
    # A stale version: 412 with the current ETag, alike.
    stale = {**fast, "version": 1}, {**slow, "version": 1}
    _alike(decide(admin, stale[0], "keep"), decide(admin, stale[1], "keep", **DOCUMENTED))
    # An id of the right shape that names nothing: 404, alike.
    missing = {"id": "b_" + "0" * 26, "version": 1}
    _alike(decide(admin, missing, "keep"), decide(admin, missing, "keep", **DOCUMENTED))
    # An agent key never decides, on either path.
    with server.client(cli_key(server.settings, "agent", "coder")) as agent:
        _alike(decide(agent, fast, "keep"), decide(agent, slow, "keep", **DOCUMENTED))
    # A replay under one Idempotency-Key answers the first answer on both paths.
    key = {"Idempotency-Key": "swipe-fast"}
    first = decide(admin, fast, "keep", **key)
    again = decide(admin, fast, "keep", **key, **DOCUMENTED)
    assert first.status_code == again.status_code == 200 and first.json() == again.json()


def test_a_plain_bodiless_decision_takes_the_fast_path_and_others_the_handler(
    admin, monkeypatch
) -> None:
    make_agent(admin)
    handled: list[str] = []
    documented = BeliefController._decide

    async def counting(self, request, belief_id, *args):
        handled.append(belief_id)
        return await documented(self, request, belief_id, *args)

    # The server runs in this process (a uvicorn thread), so the handler is patched there too.
    monkeypatch.setattr(BeliefController, "_decide", counting)
    fast = pending_belief(admin, text="Run the linter before each commit")
    slow = pending_belief(admin, text="Deploys go out on Tuesdays only")
    assert decide(admin, fast, "keep").status_code == 200
    assert handled == []
    assert decide(admin, slow, "keep", **DOCUMENTED).status_code == 200
    assert handled == [slow["id"]]
