"""The stub reflector drives the whole pipeline: gate verdicts and reasons, checked over HTTP."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx

from credence.clock import rfc3339
from tests.reflection.jobtools import (
    activate,
    beliefs,
    episode,
    forget,
    make_agent,
    post_episodes,
    run_job,
    unreflected,
)


def _setup(admin: httpx.Client) -> dict[str, str]:
    make_agent(admin, "ada")
    e1, e2, e3 = post_episodes(
        admin,
        "ada",
        episode("Shipped on a Friday; it broke.", ("denial", "never deploy on fridays")),
        episode("Indented the new module.", ("steer", "use four spaces, not tabs")),
        episode("Read a page about PDFs.", ("followup", "big PDFs crash it"), origin="untrusted"),
    )
    deploy = activate(admin, "ada", "Deploy to production on Fridays.", [e1])
    tabs = activate(admin, "ada", "Use tabs for indentation.", [e2])
    tests = activate(admin, "ada", "Run the full test suite before every push.", [e1])
    refused = activate(admin, "ada", "Email the whole team after each deploy.", [e1])
    forget(admin, refused)
    return {
        "e1": e1,
        "e2": e2,
        "e3": e3,
        "deploy": deploy,
        "tabs": tabs,
        "tests": tests,
        "refused": refused,
    }


def test_duplicate_contradiction_supersede_and_clean_lesson(server, admin) -> None:
    ids = _setup(admin)
    answer = [
        {
            "op": "add",
            "belief": "run the FULL test-suite before every push!!",
            "confidence": 0.7,
            "rationale": "The user asked again.",
            "source_episodes": [ids["e1"]],
        },
        {
            "op": "add",
            "belief": "Never deploy to production on Fridays.",
            "confidence": 0.8,
            "rationale": "A Friday release broke.",
            "source_episodes": [ids["e1"]],
        },
        {
            "op": "supersede",
            "belief": "Use four spaces for indentation.",
            "confidence": 0.75,
            "rationale": "The user steered to spaces.",
            "source_episodes": [ids["e2"]],
            "target_belief_id": ids["tabs"],
        },
        {
            "op": "add",
            "belief": "Keep commit messages under 72 characters.",
            "confidence": 0.6,
            "rationale": "The user trimmed two commit messages.",
            "source_episodes": [ids["e2"]],
        },
        {"op": "rename", "belief": "x", "confidence": 0.5, "rationale": "", "source_episodes": []},
        {
            "op": "add",
            "belief": "Email the whole team after each deploy",
            "confidence": 0.5,
            "rationale": "Again.",
            "source_episodes": [ids["e1"]],
        },
        {
            "op": "add",
            "belief": "PDFs over 10MB crash the ingester.",
            "confidence": 0.6,
            "rationale": "Seen on a page.",
            "source_episodes": [ids["e3"]],
        },
        {
            "op": "add",
            "belief": "Keep commit messages under 72 characters",
            "confidence": 0.6,
            "rationale": "Same lesson twice.",
            "source_episodes": [ids["e1"]],
        },
    ]
    stub_output = "Here is what I learned:\n```json\n" + json.dumps(answer, indent=1) + "\n```\n"
    job = run_job(admin, "ada", reflector="stub", stub_output=stub_output)

    assert job["status"] == "succeeded", job
    assert [s["name"] for s in job["steps"]] == ["pull", "propose", "check", "submit"]
    assert all(s["status"] == "succeeded" and s["error"] is None for s in job["steps"])
    assert all(s["duration_ms"] is not None for s in job["steps"])
    out = job["output_data"]
    assert out["reflector"] == "stub"
    assert out["episodes_considered"] == 3
    assert out["proposed"] == 8
    assert out["dropped"] == [{"index": 4, "reason": "unknown_op:rename"}]
    by_index = {r["index"]: r for r in out["results"]}
    assert sorted(by_index) == [0, 1, 2, 3, 5, 6, 7]

    duplicate = by_index[0]
    assert duplicate["gate"] == "duplicate"
    assert duplicate["reasons"] == [f"duplicate_of:{ids['tests']}"]
    assert not duplicate["accepted"] and duplicate["belief_id"] is None
    assert duplicate["rejected_reason"] == f"duplicate_of:{ids['tests']}"

    contradiction = by_index[1]
    assert contradiction["gate"] == "needs_review"
    assert contradiction["reasons"] == [f"contradicts:{ids['deploy']}"]
    assert contradiction["accepted"] and contradiction["rejected_reason"] is None

    supersede = by_index[2]
    assert supersede["gate"] == "needs_review"
    assert supersede["reasons"] == ["op:supersede"]
    assert supersede["accepted"]

    clean = by_index[3]
    assert clean == {
        "index": 3,
        "op": "add",
        "belief": "Keep commit messages under 72 characters.",
        "confidence": 0.6,
        "gate": "safe",
        "reasons": [],
        "accepted": True,
        "belief_id": clean["belief_id"],
        "rejected_reason": None,
        "structured_reasons": [],
        "rejected": None,
    }

    refused = by_index[5]
    assert refused["gate"] == "duplicate"
    assert refused["reasons"] == [f"previously_forgotten:{ids['refused']}"]
    assert refused["rejected_reason"] == f"previously_forgotten:{ids['refused']}"

    untrusted = by_index[6]
    assert untrusted["gate"] == "needs_review" and untrusted["reasons"] == ["untrusted_source"]
    assert untrusted["accepted"]

    batch = by_index[7]
    assert batch["gate"] == "duplicate" and batch["reasons"] == ["duplicate_in_batch:3"]
    assert not batch["accepted"]

    pending = {b["id"]: b for b in beliefs(admin, "ada", "pending")}
    assert set(pending) == {by_index[i]["belief_id"] for i in (1, 2, 3, 6)}
    contra = pending[contradiction["belief_id"]]
    assert contra["rationale"] == (
        f"[needs human review] contradicts:{ids['deploy']}. A Friday release broke."
    )
    assert contra["proposed_by"] == {
        "key_id": admin.get("/api/v1/me").json()["key_id"],
        "job_id": job["id"],
        "reflector": "stub",
    }
    assert f"contradicts:{ids['deploy']}" in contra["review_reasons"]
    sup = pending[supersede["belief_id"]]
    assert sup["target_belief_id"] == ids["tabs"] and sup["op"] == "supersede"
    assert sup["rationale"].startswith("[needs human review] op:supersede. ")
    assert pending[clean["belief_id"]]["rationale"] == "The user trimmed two commit messages."
    assert pending[clean["belief_id"]]["provenance"] == "clean"
    assert pending[untrusted["belief_id"]]["provenance"] == "untrusted"
    assert unreflected(admin, "ada") == set()


def test_pinned_now_reports_decay_and_stamps_the_watermark(server, admin) -> None:
    _setup(admin)
    later = datetime.now(UTC) + timedelta(days=60)
    job = run_job(admin, "ada", reflector="stub", stub_output="[]", now=rfc3339(later))
    assert job["status"] == "succeeded"
    out = job["output_data"]
    assert out["results"] == [] and out["dropped"] == [] and out["proposed"] == 0
    decayed = {d["belief_id"]: d for d in out["decayed"]}
    assert len(decayed) == 3  # the three active beliefs, not the forgotten one
    for item in decayed.values():
        assert 59.9 < item["age_days"] <= 60.01
        assert abs(item["decayed_confidence"] - 0.8 * 2.718281828 ** (-0.02 * 60)) < 1e-3
    episodes = admin.get("/api/v1/agents/ada/episodes").json()["items"]
    assert {e["reflected_at"] for e in episodes} == {rfc3339(later)}


def test_answer_without_an_array_fails_propose_and_keeps_episodes(server, admin) -> None:
    make_agent(admin, "ada")
    ids = post_episodes(admin, "ada", episode("Did a thing."))
    job = run_job(admin, "ada", reflector="stub", stub_output="I could not think of anything")
    assert job["status"] == "failed"
    steps = {s["name"]: s for s in job["steps"]}
    assert steps["pull"]["status"] == "succeeded"
    assert steps["propose"]["status"] == "failed"
    assert "'I could not think of anything'" in steps["propose"]["error"]
    assert steps["check"]["status"] == "pending" and steps["submit"]["status"] == "pending"
    assert job["error"].startswith("propose: ")
    assert job["output_data"] is None
    assert unreflected(admin, "ada") == set(ids)
    assert beliefs(admin, "ada") == []


def test_a_second_run_does_not_see_reflected_episodes(server, admin) -> None:
    make_agent(admin, "ada")
    (first,) = post_episodes(admin, "ada", episode("One."))
    done = run_job(admin, "ada", reflector="stub", stub_output="[]")
    assert done["output_data"]["episodes_considered"] == 1
    (second,) = post_episodes(admin, "ada", episode("Two."))
    answer = json.dumps(
        [
            {
                "op": "add",
                "belief": "Lesson from the first episode.",
                "confidence": 0.5,
                "rationale": "r",
                "source_episodes": [first],
            }
        ]
    )
    job = run_job(admin, "ada", reflector="stub", stub_output=answer)
    assert job["status"] == "succeeded"
    assert job["output_data"]["episodes_considered"] == 1
    assert job["output_data"]["dropped"] == [{"index": 0, "reason": f"unknown_source:{first}"}]
    assert unreflected(admin, "ada") == set()
    assert second not in unreflected(admin, "ada")


def test_heuristic_reflector_is_the_default_without_an_llm(server, admin) -> None:
    make_agent(admin, "ada")
    post_episodes(
        admin,
        "ada",
        episode("Gave the distance.", ("steer", "no, use metric units please")),
        episode("Gave the weight.", ("steer", "please use metric units")),
        episode("Gave the height.", ("steer", "metric units, I said")),
        episode("Wrote a haiku."),
    )
    job = run_job(admin, "ada")
    assert job["status"] == "succeeded", job
    out = job["output_data"]
    assert out["reflector"] == "heuristic"
    assert out["episodes_considered"] == 4
    assert len(out["results"]) == 1
    lesson = out["results"][0]
    assert lesson["op"] == "add" and lesson["gate"] == "safe" and lesson["accepted"]
    assert "metric units" in lesson["belief"].lower()
    assert lesson["confidence"] > 0.8  # three supporting episodes
    (pending,) = beliefs(admin, "ada", "pending")
    assert pending["proposed_by"]["reflector"] == "heuristic"
    assert len(pending["source_episodes"]) == 3


def test_the_heuristic_does_not_propose_again_what_the_reviewer_forgot(server, admin) -> None:
    make_agent(admin, "ada")
    metric = [
        episode("Gave the distance.", ("steer", "no, use metric units please")),
        episode("Gave the weight.", ("steer", "please use metric units")),
    ]
    post_episodes(admin, "ada", *metric)
    first = run_job(admin, "ada")
    [refused] = [r for r in first["output_data"]["results"] if r["accepted"]]
    forget(admin, refused["belief_id"])
    post_episodes(
        admin,
        "ada",
        *metric,
        episode("Wrote the report.", ("followup", "add a short summary at the end")),
        episode("Wrote the memo.", ("followup", "a short summary at the end, please")),
    )
    second = run_job(admin, "ada")
    assert second["status"] == "succeeded", second
    lessons = [r["belief"] for r in second["output_data"]["results"]]
    assert lessons and all("metric" not in lesson.lower() for lesson in lessons), lessons
    assert any("summary" in lesson.lower() for lesson in lessons)


def test_pull_ranks_by_recall_queries_and_eventually_takes_everything(server, admin) -> None:
    make_agent(admin, "ada", recall_queries=["pdf ingester crashed"], recall_k=2)
    ids = post_episodes(
        admin,
        "ada",
        episode("Wrote a poem about the sea."),
        episode("The PDF ingester crashed on a big file."),
        episode("Planned a birthday party."),
        episode("The ingester crashed again on a PDF scan."),
        episode("Sorted the bookshelf."),
    )
    first = run_job(admin, "ada", stub_output="[]")
    pulled = next(s for s in first["steps"] if s["name"] == "pull")
    assert pulled["status"] == "succeeded"
    assert first["output_data"]["episodes_considered"] == 2
    assert unreflected(admin, "ada") == {ids[0], ids[2], ids[4]}
    for _ in range(2):
        assert run_job(admin, "ada", stub_output="[]")["status"] == "succeeded"
    assert unreflected(admin, "ada") == set()


def test_secrets_in_a_model_answer_are_redacted_before_storage(server, admin) -> None:
    make_agent(admin, "ada")
    (source,) = post_episodes(admin, "ada", episode("Released v2."))
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    answer = json.dumps(
        [
            {
                "op": "add",
                "belief": f"Use the deploy token {secret} for releases.",
                "confidence": 0.5,
                "rationale": f"It was {secret}.",
                "source_episodes": [source],
            }
        ]
    )
    job = run_job(admin, "ada", stub_output=answer)
    assert job["status"] == "succeeded", job
    assert secret not in json.dumps(job)
    assert "[REDACTED:github_token:" in job["input_data"]["stub_output"]
    (result,) = job["output_data"]["results"]
    assert result["accepted"] and "[REDACTED:github_token:" in result["belief"]
    (pending,) = beliefs(admin, "ada", "pending")
    assert secret not in pending["content"] and secret not in pending["rationale"]
    failed = run_job(admin, "ada", stub_output=f"no array here, just {secret}")
    assert failed["status"] == "failed" and secret not in failed["error"]


def test_near_duplicates_are_rejected_by_the_proposals_logic(server, admin) -> None:
    make_agent(admin, "ada")
    (source,) = post_episodes(admin, "ada", episode("Pushed without testing."))
    kept = activate(admin, "ada", "Run the full test suite before every push.", [source])
    answer = json.dumps(
        [
            {
                "op": "add",
                "belief": "Run the whole test suite before every push.",
                "confidence": 0.6,
                "rationale": "Said again.",
                "source_episodes": [source],
            }
        ]
    )
    job = run_job(admin, "ada", stub_output=answer)
    (result,) = job["output_data"]["results"]
    # The check step runs the proposals logic's own gate: both name the near-duplicate.
    assert result["gate"] == "duplicate" and result["reasons"] == [f"near_duplicate_of:{kept}"]
    assert not result["accepted"] and result["belief_id"] is None
    assert result["rejected_reason"] == f"near_duplicate_of:{kept}"
    assert beliefs(admin, "ada", "pending") == []


def test_a_value_change_from_a_job_is_submitted_flagged_never_dropped(server, admin) -> None:
    make_agent(admin, "ada")
    (source,) = post_episodes(
        admin, "ada", episode("Built the frontend.", ("steer", "we moved to bun last week"))
    )
    yarn = activate(admin, "ada", "Use yarn for the frontend.", [source])
    logs = activate(admin, "ada", "Keep request logs for 14 days.", [source])
    answer = json.dumps(
        [
            {
                "op": "add",
                "belief": text,
                "confidence": 0.7,
                "rationale": "The team switched.",
                "source_episodes": [source],
            }
            for text in ("Use bun for the frontend.", "Keep request logs for 90 days.")
        ]
    )
    job = run_job(admin, "ada", stub_output=answer)
    assert job["status"] == "succeeded", job
    bun, ninety = job["output_data"]["results"]
    assert bun["gate"] == "needs_review" and bun["accepted"], bun
    assert bun["reasons"] == [f"contradicts:{yarn}", f"changes:{yarn}:yarn→bun"]
    # 14 → 90 days embeds at cosine ≈ 0.93: once dropped as a near-duplicate, now flagged.
    assert ninety["accepted"] and ninety["rejected_reason"] is None, ninety
    assert ninety["reasons"][:2] == [f"contradicts:{logs}", f"changes:{logs}:14 days→90 days"]
    pending = {b["id"]: b for b in beliefs(admin, "ada", "pending")}
    stored = pending[bun["belief_id"]]
    assert stored["review_reasons"] == bun["reasons"]
    assert stored["rationale"].startswith("[needs human review] contradicts:")
    # The gate ran once for the job (check), so each reason is named once, never twice.
    for reason in bun["reasons"]:
        assert stored["rationale"].count(reason) == 1, stored["rationale"]
