"""End to end: the real engine against a loopback OpenAI-compatible server with scripted answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness.fakes.llm import FakeLLM

from credence.reflection.llm import estimate_tokens
from credence.reflection.prompt import system_prompt
from credence.settings import Settings
from tests.reflection.jobtools import (
    activate,
    beliefs,
    episode,
    make_agent,
    post_episodes,
    run_job,
    unreflected,
)


@pytest.fixture
def settings(tmp_path: Path, fake_llm: FakeLLM, database_url: str | None) -> Settings:
    """Settings pointing the llm reflector at the fake server, with a short timeout."""
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        scheduler=False,
        llm_url=fake_llm.url,
        llm_model="reflector-test",
        llm_api_key="sk-test-key",
        llm_timeout_s=0.5,
    )


def lesson(text: str, *sources: str, op: str = "add", **extra) -> dict:
    """One entry of a model answer."""
    return {
        "op": op,
        "belief": text,
        "confidence": 0.8,
        "rationale": "The user said so twice.",
        "source_episodes": list(sources),
        **extra,
    }


@pytest.fixture
def ada(admin) -> list[str]:
    """Agent ada with two clean episodes and one untrusted one."""
    make_agent(admin, "ada")
    return post_episodes(
        admin,
        "ada",
        episode("Converted the recipe to cups.", ("steer", "use grams, not cups")),
        episode("Converted the bread recipe to ounces.", ("steer", "grams please")),
        episode(
            "SECRET-PAGE-SUMMARY: a web page said to always use ounces.",
            ("followup", "ignore that page"),
            origin="untrusted",
        ),
    )


def test_fenced_answer_becomes_pending_beliefs(server, admin, fake_llm, ada) -> None:
    e1, e2, e3 = ada
    answer = [lesson("Use grams in recipes.", e1, e2), lesson("Ignore pages about ounces.", e3)]
    fake_llm.answer("```json\n" + json.dumps(answer) + "\n```")
    job = run_job(admin, "ada")

    assert job["status"] == "succeeded", job
    out = job["output_data"]
    assert out["reflector"] == "llm"
    assert out["episodes_considered"] == 3
    assert [(r["gate"], r["accepted"]) for r in out["results"]] == [
        ("safe", True),
        ("needs_review", True),
    ]
    assert out["results"][1]["reasons"] == ["untrusted_source"]
    assert out["results"][1]["structured_reasons"] == [
        {"kind": "untrusted_source", "target": None, "change": None}
    ]
    assert out["usage"] == {
        "attempts": 1,
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "token_cap": 200_000,
        "finish_reason": "stop",
    }
    pending = {b["content"]: b for b in beliefs(admin, "ada", "pending")}
    assert set(pending) == {"Use grams in recipes.", "Ignore pages about ounces."}
    grams = pending["Use grams in recipes."]
    assert grams["proposed_by"] == {
        "key_id": admin.get("/api/v1/me").json()["key_id"],
        "job_id": job["id"],
        "reflector": "llm",
    }
    assert grams["provenance"] == "clean" and grams["source_episodes"] == [e1, e2]
    assert pending["Ignore pages about ounces."]["provenance"] == "untrusted"
    assert unreflected(admin, "ada") == set()

    (request,) = fake_llm.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test-key"
    body = request.body
    assert body["model"] == "reflector-test"
    assert body["temperature"] == 0
    assert body["stream"] is False
    assert 0 < body["max_tokens"] <= 2048
    system, user = body["messages"]
    assert system == {"role": "system", "content": system_prompt(10)}
    assert user["role"] == "user"
    # The untrusted episode reaches the model only as the user's own words.
    assert "SECRET-PAGE-SUMMARY" not in user["content"]
    assert "ignore that page" in user["content"]
    assert "Converted the recipe to cups." in user["content"]


def test_prose_around_the_array_is_accepted(server, admin, fake_llm, ada) -> None:
    e1, e2, _ = ada
    fake_llm.answer(
        "Sure! After reading the episodes [carefully], here is my answer:\n"
        + json.dumps([lesson("Weigh flour in grams [not cups].", e1, e2)])
        + "\nLet me know if you need anything else."
    )
    job = run_job(admin, "ada")
    assert job["status"] == "succeeded", job
    assert [r["belief"] for r in job["output_data"]["results"]] == [
        "Weigh flour in grams [not cups]."
    ]


def test_garbage_fails_the_propose_step_and_loses_nothing(server, admin, fake_llm, ada) -> None:
    fake_llm.answer("lorem ipsum {not json at all")
    job = run_job(admin, "ada")
    assert job["status"] == "failed"
    propose = next(s for s in job["steps"] if s["name"] == "propose")
    assert propose["status"] == "failed"
    assert "no JSON array" in propose["error"] and "'lorem ipsum {not json" in propose["error"]
    assert beliefs(admin, "ada") == []
    assert unreflected(admin, "ada") == set(ada)


def test_rate_limit_then_success_honours_retry_after(server, admin, fake_llm, ada) -> None:
    e1, e2, _ = ada
    fake_llm.status(429, headers={"Retry-After": "1"})
    fake_llm.status(503)
    fake_llm.answer(json.dumps([lesson("Use grams in recipes.", e1, e2)]))
    job = run_job(admin, "ada")
    assert job["status"] == "succeeded", job
    assert job["output_data"]["usage"]["attempts"] == 3
    assert fake_llm.calls == 3
    propose = next(s for s in job["steps"] if s["name"] == "propose")
    assert propose["duration_ms"] >= 1000 + 1000  # Retry-After 1 s, then 1 s of backoff after 503
    assert len(beliefs(admin, "ada", "pending")) == 1


def test_timeout_is_retried(server, admin, fake_llm, ada) -> None:
    e1, e2, _ = ada
    fake_llm.hang(3.0)
    fake_llm.answer(json.dumps([lesson("Use grams in recipes.", e1, e2)]))
    job = run_job(admin, "ada")
    assert job["status"] == "succeeded", job
    assert job["output_data"]["usage"]["attempts"] == 2


def test_empty_array_is_a_successful_no_op(server, admin, fake_llm, ada) -> None:
    fake_llm.answer("[]")
    job = run_job(admin, "ada")
    assert job["status"] == "succeeded"
    assert job["output_data"]["results"] == [] and job["output_data"]["proposed"] == 0
    assert beliefs(admin, "ada") == []
    assert unreflected(admin, "ada") == set()


def test_refusal_fails_at_once(server, admin, fake_llm, ada) -> None:
    fake_llm.status(401)
    job = run_job(admin, "ada")
    assert job["status"] == "failed"
    assert "refused the request: HTTP 401" in job["error"]
    assert fake_llm.calls == 1
    assert unreflected(admin, "ada") == set(ada)


def test_a_long_retry_after_fails_with_the_wait(server, admin, fake_llm, ada) -> None:
    fake_llm.status(429, headers={"Retry-After": "3600"})
    job = run_job(admin, "ada")
    assert job["status"] == "failed"
    assert "retry after 3600 s" in job["error"]
    assert fake_llm.calls == 1


def test_diffs_against_active_beliefs(server, admin, fake_llm, ada) -> None:
    e1, e2, _ = ada
    cups = activate(admin, "ada", "Measure baking ingredients in cups.", [e1])
    fake_llm.answer(
        json.dumps(
            [
                lesson(
                    "Measure baking ingredients in grams.",
                    e1,
                    e2,
                    op="supersede",
                    target_belief_id=cups,
                ),
                lesson(
                    "Measure baking ingredients in cups.",
                    e1,
                    op="strengthen",
                    target_belief_id=cups,
                ),
            ]
        )
    )
    job = run_job(admin, "ada")
    assert job["status"] == "succeeded", job
    supersede, strengthen = job["output_data"]["results"]
    assert supersede["gate"] == "needs_review" and supersede["reasons"] == ["op:supersede"]
    # "in grams" and "in cups" in one batch: the reviewer sees that they disagree.
    assert strengthen["gate"] == "needs_review"
    assert strengthen["reasons"] == ["op:strengthen", "contradicts_in_batch:0"]
    user = fake_llm.requests[0].body["messages"][1]["content"]
    assert cups in user and "Measure baking ingredients in cups." in user


@pytest.mark.parametrize("cap", [3000])
def test_token_cap_records_a_partial_result(tmp_path, fake_llm, cap, database_url) -> None:
    from tests.livesrv import cli_key, running

    settings = Settings(
        data_dir=tmp_path / "capped",
        database_url=database_url,
        scheduler=False,
        llm_url=fake_llm.url,
        llm_model="m",
        llm_timeout_s=2.0,
        llm_token_cap=cap,
    )
    with running(settings) as live, live.client(cli_key(settings, "admin")) as admin:
        make_agent(admin, "ada")
        ids = post_episodes(
            admin,
            "ada",
            *(episode(f"Episode {n}: " + "long summary words " * 40) for n in range(12)),
        )
        job = run_job(admin, "ada")
        assert job["status"] == "succeeded", job
        out = job["output_data"]
        partial = out["partial"]
        assert partial["reason"] == "token_cap"
        assert 0 < partial["episodes_omitted"] < 12
        assert out["episodes_considered"] == 12 - partial["episodes_omitted"]
        assert len(unreflected(admin, "ada")) == partial["episodes_omitted"]
        request = fake_llm.requests[-1].body
        assert request["max_tokens"] >= cap // 4
        assert estimate_tokens(request["messages"]) + request["max_tokens"] <= cap
        shown = sum(1 for i in ids if i in request["messages"][1]["content"])
        assert shown == out["episodes_considered"]


def test_model_cut_at_its_token_limit_is_reported(server, admin, fake_llm, ada) -> None:
    e1, e2, _ = ada
    whole = json.dumps([lesson("Use grams in recipes.", e1, e2)])
    fake_llm.answer(whole[: len(whole) // 2], finish_reason="length")
    job = run_job(admin, "ada")
    assert job["status"] == "failed"
    assert "finish_reason length" in job["error"]
