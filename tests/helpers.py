"""Small helpers for tests that talk to a live server."""

from __future__ import annotations

from typing import Any

import httpx


def make_agent(admin: httpx.Client, agent_id: str = "coder", **extra: Any) -> dict[str, Any]:
    """Create an agent and return its JSON."""
    response = admin.post(
        "/api/v1/agents", json={"id": agent_id, "name": agent_id.title(), **extra}
    )
    assert response.status_code == 201, response.text
    return response.json()


def post_episode(client: httpx.Client, agent_id: str = "coder", **fields: Any) -> dict[str, Any]:
    """Store one episode and return the stored episode."""
    body = {"session_id": "s1", "summary": "did a thing", **fields}
    response = client.post(f"/api/v1/agents/{agent_id}/episodes", json=body)
    assert response.status_code == 201, response.text
    return response.json()["episode"]


def propose(client: httpx.Client, agent_id: str, *proposals: dict[str, Any]) -> list[dict]:
    """Submit proposals and return the per-index results."""
    response = client.post(
        f"/api/v1/agents/{agent_id}/memory/beliefs/proposals", json={"proposals": list(proposals)}
    )
    assert response.status_code == 200, response.text
    return response.json()["results"]


def pending_belief(
    client: httpx.Client,
    agent_id: str = "coder",
    text: str = "PDFs over 10MB exhaust the ingester",
    **fields: Any,
) -> dict[str, Any]:
    """Propose one clean add and return the pending belief's JSON."""
    (result,) = propose(
        client, agent_id, {"op": "add", "belief": text, "confidence": 0.7, **fields}
    )
    assert result["accepted"], result
    return client.get(f"/api/v1/beliefs/{result['belief_id']}").json()


def decide(
    client: httpx.Client, belief: dict[str, Any], action: str, body: Any = None, **headers: str
) -> httpx.Response:
    """POST a decision with If-Match set to the belief's version."""
    sent = {"If-Match": f'"{belief["version"]}"', **headers}
    return client.post(f"/api/v1/beliefs/{belief['id']}/{action}", json=body, headers=sent)
