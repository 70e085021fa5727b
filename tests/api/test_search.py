"""POST /agents/{id}/memory/search over real HTTP: ranking, filters, scopes and bounds."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness.fakes.embed import FakeEmbeddings

from credence.settings import Settings
from tests.livesrv import cli_key, running
from tests.reflection.jobtools import episode, make_agent, post_episodes, run_job


def _search(client, agent_id: str, **body):
    return client.post(f"/api/v1/agents/{agent_id}/memory/search", json=body)


@pytest.fixture
def corpus(admin) -> list[str]:
    """Agent ada with four episodes, one of them untrusted and one from January."""
    make_agent(admin, "ada")
    return post_episodes(
        admin,
        "ada",
        episode("The PDF ingester crashed on a 40MB upload.", finished_at="2026-01-05T10:00:00Z"),
        episode("Wrote the monthly invoice report.", ("steer", "export it as CSV")),
        episode("Split a large PDF into chunks before uploading."),
        episode("A web page described PDF limits.", origin="untrusted"),
    )


def test_best_matches_first_with_their_scores(server, admin, corpus) -> None:
    response = _search(admin, "ada", queries=["PDF upload crashed"], k=3)
    assert response.status_code == 200
    items = response.json()["items"]
    assert len(items) == 3
    assert items[0]["episode"]["id"] == corpus[0]
    assert items[0]["text_rank"] == 1 and items[0]["vector_rank"] >= 1
    assert 0 < items[0]["cosine"] <= 1
    scores = [item["score"] for item in items]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    assert set(items[0]["episode"]) >= {"id", "summary", "interventions", "origin", "finished_at"}


def test_interventions_and_filters(server, admin, corpus) -> None:
    (hit, *_) = _search(admin, "ada", queries=["CSV export"], k=1).json()["items"]
    assert hit["episode"]["id"] == corpus[1]
    pdf = ["PDF"]
    found = {i["episode"]["id"] for i in _search(admin, "ada", queries=pdf, k=10).json()["items"]}
    assert {corpus[0], corpus[2], corpus[3]} <= found
    clean = _search(admin, "ada", queries=pdf, k=10, include_untrusted=False).json()["items"]
    assert corpus[3] not in {i["episode"]["id"] for i in clean}
    recent = _search(admin, "ada", queries=pdf, k=10, since="2026-02-01T00:00:00+01:00")
    assert corpus[0] not in {i["episode"]["id"] for i in recent.json()["items"]}
    assert run_job(admin, "ada", stub_output="[]")["status"] == "succeeded"
    assert _search(admin, "ada", queries=pdf, k=10, reflected=False).json()["items"] == []
    done = _search(admin, "ada", queries=pdf, k=10, reflected=True).json()["items"]
    assert {i["episode"]["id"] for i in done} == found


def test_other_agents_are_invisible(server, admin, corpus) -> None:
    make_agent(admin, "bob")
    with server.client(cli_key(server.settings, "reviewer", "bob")) as bob:
        assert _search(bob, "ada", queries=["pdf"]).status_code == 404
        assert _search(bob, "bob", queries=["pdf"]).json()["items"] == []
    with server.client(cli_key(server.settings, "agent", "ada")) as agent:
        assert _search(agent, "ada", queries=["pdf"]).status_code == 200
    assert _search(admin, "ghost", queries=["pdf"]).status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"queries": []},
        {"queries": ["x"] * 21},
        {"queries": ["x" * 2001]},
        {"queries": ["a\x00b"]},
        {"queries": ["x"], "k": 0},
        {"queries": ["x"], "k": 201},
        {"queries": ["x"], "k": 1.5},
        {"queries": ["x"], "since": "last week"},
        {"queries": ["x"], "since": "2026-01-01T00:00:00"},
        {"queries": ["x"], "reflected": "yes"},
        {"queries": ["x"], "surprise": True},
        {"queries": "x"},
    ],
)
def test_bad_searches_are_refused(server, admin, corpus, body) -> None:
    response = _search(admin, "ada", **body)
    assert response.status_code == 400, response.text


def test_embedder_down_answers_503(tmp_path: Path, fake_embed: FakeEmbeddings) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        scheduler=False,
        embed_url=fake_embed.url,
        embed_model="fake",
    )
    with running(settings) as live, live.client(cli_key(settings, "admin")) as admin:
        make_agent(admin, "ada")
        post_episodes(admin, "ada", episode("The PDF ingester crashed."))
        assert _search(admin, "ada", queries=["pdf"]).status_code == 200
        fake_embed.down = True
        response = _search(admin, "ada", queries=["pdf"])
        assert response.status_code == 503
        assert "embedder unavailable" in response.json()["detail"]
