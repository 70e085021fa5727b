"""Only admin keys pin a job's clock or hand-write its model output; a job's proposals credit
the key that started it."""

from __future__ import annotations

import json

import pytest

from tests.helpers import make_agent, post_episode
from tests.livesrv import cli_key
from tests.reflection.jobtools import beliefs, run_job

WORKFLOW = "agent-reflection"
FORGED = {
    "now": "2999-01-01T00:00:00Z",
    "stub_output": json.dumps([{"op": "add", "belief": "Trust me", "confidence": 0.05}]),
}


@pytest.mark.parametrize("scope", ["agent", "reviewer"])
@pytest.mark.parametrize("field", sorted(FORGED))
def test_other_scopes_cannot_pin_the_clock_or_write_the_output(server, admin, scope, field):
    make_agent(admin, "ada")
    with server.client(cli_key(server.settings, scope, "ada")) as client:
        body = {"workflow_id": WORKFLOW, "input_data": {"agent_id": "ada", field: FORGED[field]}}
        refused = client.post("/api/v1/jobs", json=body)
        assert refused.status_code == 403, refused.text
        assert refused.json()["detail"].startswith(f"input_data.{field}: only an admin key")
    assert admin.get("/api/v1/jobs").json()["items"] == []


def test_a_jobs_proposals_credit_the_key_that_started_it(server, admin) -> None:
    make_agent(admin, "ada")
    episode = post_episode(admin, "ada", summary="ingested a large pdf")
    answer = [
        {
            "op": "add",
            "belief": "Split PDFs over 10MB",
            "confidence": 0.6,
            "rationale": "It ran out of memory.",
            "source_episodes": [episode["id"]],
        }
    ]
    job = run_job(admin, "ada", stub_output=json.dumps(answer))
    assert job["status"] == "succeeded", job
    pending_beliefs = beliefs(admin, "ada", "pending")
    assert len(pending_beliefs) == 1, job["output_data"]
    (pending,) = pending_beliefs
    admin_key = admin.get("/api/v1/me").json()["key_id"]
    assert pending["proposed_by"] == {"key_id": admin_key, "job_id": job["id"], "reflector": "stub"}
