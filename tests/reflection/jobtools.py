"""Helpers for reflection tests: agents, episodes, active beliefs and jobs over real HTTP."""

from __future__ import annotations

import time
from typing import Any

import httpx

TERMINAL = ("succeeded", "failed")


def make_agent(client: httpx.Client, agent_id: str, **reflection: Any) -> dict[str, Any]:
    """Create an agent (admin client) with optional reflection settings."""
    body: dict[str, Any] = {"id": agent_id, "name": agent_id.title()}
    if reflection:
        body["reflection"] = reflection
    response = client.post("/api/v1/agents", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def episode(
    summary: str,
    *interventions: tuple[str, str],
    origin: str = "clean",
    finished_at: str | None = None,
) -> dict[str, Any]:
    """An episode body; interventions are (trigger, text)."""
    body: dict[str, Any] = {
        "session_id": "s-1",
        "summary": summary,
        "interventions": [{"trigger": t, "text": x} for t, x in interventions],
        "origin": origin,
    }
    if finished_at is not None:
        body["finished_at"] = finished_at
    return body


def post_episodes(client: httpx.Client, agent_id: str, *episodes: dict[str, Any]) -> list[str]:
    """Store episodes through the batch endpoint; returns their ids in order."""
    response = client.post(
        f"/api/v1/agents/{agent_id}/episodes/batch", json={"episodes": list(episodes)}
    )
    assert response.status_code == 201, response.text
    return response.json()["ids"]


def activate(client: httpx.Client, agent_id: str, text: str, sources: list[str]) -> str:
    """Propose a belief through the proposals endpoint and keep it; returns its id."""
    response = client.post(
        f"/api/v1/agents/{agent_id}/memory/beliefs/proposals",
        json={
            "proposals": [
                {"op": "add", "belief": text, "confidence": 0.8, "source_episodes": sources}
            ]
        },
    )
    assert response.status_code == 200, response.text
    result = response.json()["results"][0]
    assert result["accepted"], result
    return keep(client, result["belief_id"])


def keep(client: httpx.Client, belief_id: str) -> str:
    """Keep a pending belief with its current ETag."""
    etag = client.get(f"/api/v1/beliefs/{belief_id}").headers["ETag"]
    response = client.post(f"/api/v1/beliefs/{belief_id}/keep", headers={"If-Match": etag})
    assert response.status_code == 200, response.text
    return belief_id


def forget(client: httpx.Client, belief_id: str) -> None:
    """Forget a belief with its current ETag."""
    etag = client.get(f"/api/v1/beliefs/{belief_id}").headers["ETag"]
    response = client.post(
        f"/api/v1/beliefs/{belief_id}/forget", headers={"If-Match": etag}, json={"reason": "no"}
    )
    assert response.status_code == 200, response.text


def submit_job(client: httpx.Client, agent_id: str, **input_data: Any) -> dict[str, Any]:
    """POST /api/v1/jobs for agent-reflection; returns the 202 body."""
    response = client.post(
        "/api/v1/jobs",
        json={
            "workflow_id": "agent-reflection",
            "input_data": {"agent_id": agent_id, **input_data},
        },
    )
    assert response.status_code == 202, response.text
    return response.json()


def wait_job(client: httpx.Client, job_id: str, timeout: float = 30.0) -> dict[str, Any]:
    """Poll GET /api/v1/jobs/{id} until the job is finished."""
    deadline = time.monotonic() + timeout
    while True:
        response = client.get(f"/api/v1/jobs/{job_id}")
        assert response.status_code == 200, response.text
        job = response.json()
        if job["status"] in TERMINAL:
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} still {job['status']} after {timeout}s: {job}")
        time.sleep(0.05)


def run_job(
    client: httpx.Client, agent_id: str, timeout: float = 30.0, **input_data: Any
) -> dict[str, Any]:
    """Submit a job and wait for it to finish."""
    return wait_job(client, submit_job(client, agent_id, **input_data)["id"], timeout)


def beliefs(client: httpx.Client, agent_id: str, status: str | None = None) -> list[dict]:
    """An agent's beliefs (newest first), optionally by status."""
    params = {"limit": 200, **({"status": status} if status else {})}
    response = client.get(f"/api/v1/agents/{agent_id}/memory/beliefs", params=params)
    assert response.status_code == 200, response.text
    return response.json()["items"]


def unreflected(client: httpx.Client, agent_id: str) -> set[str]:
    """Ids of the agent's episodes the watermark has not passed."""
    response = client.get(
        f"/api/v1/agents/{agent_id}/episodes", params={"reflected": "false", "limit": 200}
    )
    assert response.status_code == 200, response.text
    return {item["id"] for item in response.json()["items"]}
