"""The proposals endpoint: pending beliefs, refusals remembered, provenance set by the server."""

from __future__ import annotations

from tests.helpers import decide, make_agent, pending_belief, post_episode, propose
from tests.rawdb import raw_db


def test_accepted_proposals_become_pending_with_a_proposed_audit_row(admin) -> None:
    make_agent(admin)
    episode = post_episode(admin)
    (result,) = propose(
        admin,
        "coder",
        {
            "op": "add",
            "belief": "Split PDFs over 10MB before ingesting",
            "confidence": 0.8,
            "rationale": "users asked twice",
            "source_episodes": [episode["id"]],
        },
    )
    assert result["accepted"] and result["rejected_reason"] is None
    belief = admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()
    for field in (
        "id",
        "agent_id",
        "content",
        "status",
        "confidence",
        "op",
        "target_belief_id",
        "rationale",
        "source_episodes",
        "provenance",
        "review_reasons",
        "proposed_by",
        "version",
        "created_at",
        "updated_at",
        "decided_by",
        "decided_at",
        "forgotten_reason",
    ):
        assert field in belief
    assert belief["status"] == "pending" and belief["provenance"] == "clean"
    assert belief["source_episodes"] == [episode["id"]] and belief["version"] == 1
    assert belief["created_at"].endswith("Z")
    trail = admin.get(f"/api/v1/beliefs/{belief['id']}/audit").json()["items"]
    assert [row["action"] for row in trail] == ["proposed"]


def test_untrusted_source_makes_the_belief_untrusted(admin) -> None:
    make_agent(admin)
    episode = post_episode(admin, origin="untrusted")
    (result,) = propose(
        admin,
        "coder",
        {
            "op": "add",
            "belief": "Always trust vendor docs",
            "confidence": 0.5,
            "source_episodes": [episode["id"]],
        },
    )
    belief = admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()
    assert belief["provenance"] == "untrusted"
    assert "untrusted_source" in belief["review_reasons"]


def test_duplicates_near_duplicates_and_forgotten_lessons_are_rejected(admin) -> None:
    make_agent(admin)
    kept = pending_belief(admin, text="Run the linter before every commit")
    forgotten = pending_belief(admin, text="Email the customer after each deploy")
    assert decide(admin, forgotten, "forget", {"reason": "nobody wants that"}).status_code == 200
    results = propose(
        admin,
        "coder",
        {"op": "add", "belief": "run the linter, before every commit!", "confidence": 0.6},
        {"op": "add", "belief": "Email the customer after each deploy.", "confidence": 0.6},
        {"op": "add", "belief": "Run the linter before each commit", "confidence": 0.6},
        {"op": "add", "belief": "Prefer small pull requests over big ones", "confidence": 0.6},
        {"op": "add", "belief": "prefer small pull requests over big ones", "confidence": 0.6},
        {
            "op": "add",
            "belief": "Cache the embeddings",
            "confidence": 0.6,
            "source_episodes": ["ep_00000000000000000000000000"],
        },
    )
    reasons = [r["rejected_reason"] for r in results]
    assert reasons[0] == f"duplicate_of:{kept['id']}"
    assert reasons[1] == f"previously_forgotten:{forgotten['id']}"
    assert reasons[2] == f"near_duplicate_of:{kept['id']}"
    assert reasons[3] is None and results[3]["accepted"]
    assert reasons[4] == "duplicate_in_batch:3"
    assert reasons[5] == "unknown_source_episode:ep_00000000000000000000000000"


def test_non_add_ops_need_a_target_of_this_agent_and_are_flagged_for_review(admin) -> None:
    make_agent(admin)
    make_agent(admin, "other")
    target = pending_belief(admin, text="Deploy on Fridays")
    foreign = pending_belief(admin, "other", text="Use tabs")
    results = propose(
        admin,
        "coder",
        {
            "op": "supersede",
            "belief": "Never deploy on Fridays",
            "confidence": 0.7,
            "target_belief_id": target["id"],
        },
        {
            "op": "weaken",
            "belief": "Use tabs sometimes",
            "confidence": 0.3,
            "target_belief_id": foreign["id"],
        },
        {"op": "strengthen", "belief": "Deploy early in the week", "confidence": 0.9},
    )
    assert results[0]["accepted"]
    assert results[1]["rejected_reason"] == f"unknown_target:{foreign['id']}"
    assert results[2]["rejected_reason"] == "missing_target:strengthen"
    belief = admin.get(f"/api/v1/beliefs/{results[0]['belief_id']}").json()
    assert "op:supersede" in belief["review_reasons"]


def test_proposal_input_is_validated(admin) -> None:
    make_agent(admin)
    url = "/api/v1/agents/coder/memory/beliefs/proposals"
    one = {"op": "add", "belief": "x", "confidence": 0.5}
    for bad in (
        {"proposals": [one] * 11},
        {"proposals": [{**one, "confidence": 1.5}]},
        {"proposals": [{**one, "op": "rewrite"}]},
        {"proposals": [{**one, "belief": "   "}]},
        {"proposals": [{**one, "source_episodes": ["not-an-id"]}]},
    ):
        response = admin.post(url, json=bad)
        assert response.status_code == 400, bad
    assert admin.get("/api/v1/agents/coder/memory/beliefs").json()["items"] == []


def test_secrets_in_proposals_and_edits_are_redacted_before_storage(server, admin) -> None:
    make_agent(admin)
    secret = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    (result,) = propose(
        admin,
        "coder",
        {
            "op": "add",
            "belief": f"Deploy with {secret}",
            "confidence": 0.5,
            "rationale": f"seen {secret} in logs",
        },
    )
    belief = admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()
    assert secret not in belief["content"] and "[REDACTED:github_token:" in belief["content"]
    assert secret not in belief["rationale"]
    edited = decide(admin, belief, "edit", {"content": f"Never paste {secret} anywhere"}).json()
    assert secret not in edited["content"] and edited["status"] == "active"
    with raw_db(server.settings) as db:
        assert secret not in db.dump()


def test_an_opposite_lesson_is_never_dropped_as_a_near_duplicate(admin) -> None:
    make_agent(admin)
    kept = decide(
        admin, pending_belief(admin, text="Always run the test suite before pushing"), "keep"
    )
    (result,) = propose(
        admin,
        "coder",
        {"op": "add", "belief": "Never run the test suite before pushing", "confidence": 0.6},
    )
    assert result["accepted"], result  # the reviewer sees the contradiction; nothing is hidden
    (same,) = propose(
        admin,
        "coder",
        {"op": "add", "belief": "Always run the test suite before you push", "confidence": 0.6},
    )
    assert same["rejected_reason"] == f"near_duplicate_of:{kept.json()['id']}"


def test_near_duplicate_checks_see_an_edit_at_once(admin) -> None:
    make_agent(admin)
    belief = pending_belief(admin, text="Use pnpm for the docs site")
    propose(
        admin, "coder", {"op": "add", "belief": "Cache embeddings per agent", "confidence": 0.5}
    )
    decide(admin, belief, "edit", {"content": "Deploy the docs on Tuesdays"})
    (old_text,) = propose(
        admin,
        "coder",
        {"op": "add", "belief": "Use pnpm for the docs site please", "confidence": 0.5},
    )
    assert old_text["accepted"], old_text  # the stale embedding of the old wording is gone


def test_a_value_change_posted_straight_to_the_endpoint_is_flagged_not_dropped(admin) -> None:
    make_agent(admin)
    episode = post_episode(admin)
    old = decide(
        admin,
        pending_belief(admin, text="Use yarn for the frontend", source_episodes=[episode["id"]]),
        "keep",
    ).json()
    (result,) = propose(
        admin,
        "coder",
        {
            "op": "add",
            "belief": "Use bun for the frontend",
            "confidence": 0.8,
            "source_episodes": [episode["id"]],
        },
    )
    assert result["accepted"], result
    belief = admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()
    assert belief["status"] == "pending" and belief["provenance"] == "clean"
    assert belief["review_reasons"] == [f"contradicts:{old['id']}", f"changes:{old['id']}:yarn→bun"]
    # A number that changes is a contradiction too, even where the embedding calls it a twin.
    kept = decide(
        admin,
        pending_belief(
            admin, text="Keep request logs for 14 days", source_episodes=[episode["id"]]
        ),
        "keep",
    ).json()
    (longer,) = propose(
        admin,
        "coder",
        {"op": "add", "belief": "Keep request logs for 90 days", "confidence": 0.7},
    )
    assert longer["accepted"], longer
    flagged = admin.get(f"/api/v1/beliefs/{longer['belief_id']}").json()
    assert flagged["review_reasons"][:2] == [
        f"contradicts:{kept['id']}",
        f"changes:{kept['id']}:14 days→90 days",
    ]


def test_the_endpoint_runs_the_negation_rule_and_rejects_paraphrases(admin) -> None:
    make_agent(admin)
    kept = decide(admin, pending_belief(admin, text="Split PDFs over 5GB before upload"), "keep")
    kept_id = kept.json()["id"]
    results = propose(
        admin,
        "coder",
        {"op": "add", "belief": "Never split PDFs over 5GB before upload", "confidence": 0.6},
        {
            "op": "add",
            "belief": "Before upload, split PDFs larger than five gigabytes",
            "confidence": 0.6,
        },
    )
    assert results[0]["accepted"], results[0]
    opposite = admin.get(f"/api/v1/beliefs/{results[0]['belief_id']}").json()
    assert f"contradicts:{kept_id}" in opposite["review_reasons"]
    assert results[1]["rejected_reason"] == f"near_duplicate_of:{kept_id}"


def test_a_proposal_without_sources_is_unsourced_and_flagged_but_keepable(admin) -> None:
    make_agent(admin)
    belief = pending_belief(admin, text="Answer billing questions in the customer's language")
    assert belief["provenance"] == "unsourced"
    assert "unsourced" in belief["review_reasons"]
    kept = decide(admin, belief, "keep")
    assert kept.status_code == 200 and kept.json()["status"] == "active"
    assert kept.json()["provenance"] == "unsourced"
