"""Episodes over real HTTP: redaction before storage, provenance, batches, paging, bad input."""

from __future__ import annotations

import sqlite3

from tests.helpers import make_agent, post_episode

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_secrets_are_redacted_before_anything_is_stored(server, admin) -> None:
    make_agent(admin)
    response = admin.post(
        "/api/v1/agents/coder/episodes",
        json={
            "session_id": "s1",
            "summary": f"deployed with {AWS} and pushed using {GITHUB}",
            "interventions": [{"trigger": "steer", "text": f"use token {GITHUB} instead"}],
            "metadata": {"env": {"password": "hunter2-Very-Secret-99"}},
        },
    )
    assert response.status_code == 201
    body = response.json()
    assert body["redacted"] >= 3
    episode = body["episode"]
    assert AWS not in response.text and GITHUB not in response.text
    assert "[REDACTED:aws_access_key:" in episode["summary"]
    db = sqlite3.connect(server.settings.database_path)
    try:
        dump = "\n".join(db.iterdump())
    finally:
        db.close()
    for secret in (AWS, GITHUB, "hunter2-Very-Secret-99"):
        assert secret not in dump


def test_origin_is_raised_to_untrusted_never_lowered(admin) -> None:
    make_agent(admin)
    declared = post_episode(admin, origin="untrusted")
    assert declared["origin"] == "untrusted"
    evidence = post_episode(admin, metadata={"tool_outputs": ["<html>page</html>"]})
    assert evidence["origin"] == "untrusted"
    assert "third_party_metadata" in evidence["untrusted_reasons"]
    assert post_episode(admin)["origin"] == "clean"


def test_batch_is_all_or_nothing_and_paging_filters(admin) -> None:
    make_agent(admin)
    episodes = [
        {
            "session_id": f"s{i}",
            "summary": f"turn {i}",
            "finished_at": f"2026-11-{10 + i:02d}T08:00:00Z",
        }
        for i in range(5)
    ]
    bad = [*episodes, {"session_id": "x", "summary": "y", "finished_at": "not a time"}]
    rejected = admin.post("/api/v1/agents/coder/episodes/batch", json={"episodes": bad})
    assert rejected.status_code == 400 and "finished_at" in rejected.json()["detail"]
    overflow = [{"session_id": "x", "summary": "y", "finished_at": "9999-12-31T23:59:59-23:00"}]
    assert (
        admin.post("/api/v1/agents/coder/episodes/batch", json={"episodes": overflow}).status_code
        == 422
    )
    assert admin.get("/api/v1/agents/coder/episodes").json()["items"] == []
    created = admin.post("/api/v1/agents/coder/episodes/batch", json={"episodes": episodes})
    assert created.status_code == 201 and len(created.json()["ids"]) == 5
    first = admin.get("/api/v1/agents/coder/episodes", params={"limit": 2}).json()
    assert [e["session_id"] for e in first["items"]] == ["s0", "s1"]
    second = admin.get(
        "/api/v1/agents/coder/episodes", params={"limit": 2, "cursor": first["next_cursor"]}
    ).json()
    assert [e["session_id"] for e in second["items"]] == ["s2", "s3"]
    recent = admin.get(
        "/api/v1/agents/coder/episodes", params={"since": "2026-11-13T00:00:00Z"}
    ).json()
    assert [e["session_id"] for e in recent["items"]] == ["s3", "s4"]
    unreflected = admin.get("/api/v1/agents/coder/episodes", params={"reflected": "false"}).json()
    assert len(unreflected["items"]) == 5


def test_bad_episode_input_is_a_clear_400(admin) -> None:
    make_agent(admin)
    url = "/api/v1/agents/coder/episodes"
    cases = [
        {"summary": "missing session"},
        {"session_id": "s", "summary": ""},
        {"session_id": "s", "summary": "x", "origin": "owner"},
        {"session_id": "s", "summary": "x", "interventions": [{"trigger": "shout", "text": "x"}]},
        {"session_id": "s", "summary": "nul\x00byte"},
        {"session_id": "s", "summary": "x" * 20001},
        {"session_id": "s", "summary": "x", "finished_at": "2026-11-01T08:00:00"},
        {"session_id": 7, "summary": "x"},
        {"session_id": "s", "summary": "x", "interventions": {"trigger": "steer"}},
    ]
    for body in cases:
        response = admin.post(url, json=body)
        assert response.status_code == 400, (body, response.text)
        assert response.json()["detail"]
    too_many = {"episodes": [{"session_id": "s", "summary": "x"}] * 501}
    assert admin.post(f"{url}/batch", json=too_many).status_code == 400
    assert (
        admin.post(
            "/api/v1/agents/ghost/episodes", json={"session_id": "s", "summary": "x"}
        ).status_code
        == 404
    )
    assert admin.get(url, params={"limit": 201}).status_code == 400
    assert admin.get(url).json()["items"] == []


def test_oversized_body_is_413(server, admin) -> None:
    make_agent(admin)
    huge = (
        b'{"session_id": "s", "summary": "' + b"x" * (server.settings.max_body_bytes + 10) + b'"}'
    )
    response = admin.post(
        "/api/v1/agents/coder/episodes", content=huge, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413


def test_deeply_nested_bodies_are_400_on_every_json_route(admin) -> None:
    make_agent(admin)
    deep = b"[" * 100_000 + b"]" * 100_000
    for path in ("/api/v1/agents", "/api/v1/agents/coder/episodes", "/api/v1/agents/coder/turns"):
        response = admin.post(path, content=deep, headers={"Content-Type": "application/json"})
        assert response.status_code == 400, (path, response.text)
    nested_metadata = (
        b'{"session_id": "s", "summary": "x", "metadata": {"a": '
        + b'{"a": ' * 50_000
        + b"1"
        + b"}" * 50_001
        + b"}"
    )
    response = admin.post(
        "/api/v1/agents/coder/episodes",
        content=nested_metadata,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert admin.get("/api/v1/agents/coder/episodes").json()["items"] == []


def test_one_episode_by_id_within_its_agent(admin) -> None:
    make_agent(admin)
    make_agent(admin, "other")
    episode = post_episode(admin, summary="fixed the build")
    got = admin.get(f"/api/v1/agents/coder/episodes/{episode['id']}")
    assert got.status_code == 200 and got.json() == episode
    assert admin.get(f"/api/v1/agents/other/episodes/{episode['id']}").status_code == 404
    assert (
        admin.get("/api/v1/agents/coder/episodes/ep_00000000000000000000000000").status_code == 404
    )
    assert admin.get("/api/v1/agents/coder/episodes/not-an-id").status_code == 400


def test_metadata_is_bounded(admin) -> None:
    make_agent(admin)
    body = {"session_id": "s", "summary": "x", "metadata": {"blob": "y" * 70_000}}
    response = admin.post("/api/v1/agents/coder/episodes", json=body)
    assert response.status_code == 422 and "metadata" in response.json()["detail"]
    big_int = {"session_id": "s", "summary": "x", "metadata": {"n": 2**64}}
    assert admin.post("/api/v1/agents/coder/episodes", json=big_int).status_code == 201
