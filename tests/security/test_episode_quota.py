"""An agent's episodes stop at its storage quota with a 507 that names it, nothing partly
written, and the agent shows how much it has stored."""

from __future__ import annotations

from pathlib import Path

from credence.settings import Settings
from tests.helpers import make_agent
from tests.livesrv import cli_key, running

# A batch of 15 episodes of 20,000 characters: about 0.3 MB of text.
BATCH = {"episodes": [{"session_id": "s", "summary": "x" * 20_000} for _ in range(15)]}


def test_the_quota_refuses_with_507_and_the_agent_shows_its_usage(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", scheduler=False, episode_quota_mb=1)
    with running(settings) as live:
        with live.client(cli_key(settings, "admin")) as admin:
            make_agent(admin, "ada")
            make_agent(admin, "bob")
        with live.client(cli_key(settings, "agent", "ada")) as ada:
            statuses = [
                ada.post("/api/v1/agents/ada/episodes/batch", json=BATCH).status_code
                for _ in range(4)
            ]
            refused = ada.post("/api/v1/agents/ada/episodes/batch", json=BATCH)
            stored = ada.get("/api/v1/agents/ada").json()["stored_episode_chars"]
            listed = ada.get("/api/v1/agents/ada/episodes", params={"limit": 100}).json()
        with live.client(cli_key(settings, "agent", "bob")) as bob:
            other = bob.post("/api/v1/agents/bob/episodes/batch", json=BATCH)
    assert statuses == [201, 201, 201, 507]
    assert refused.status_code == 507
    assert "episode quota" in refused.json()["detail"]
    assert "CREDENCE_EPISODE_QUOTA_MB" in refused.json()["detail"]
    assert len(listed["items"]) == 45  # the refused batch left nothing behind
    assert 900_000 <= stored <= 1024 * 1024
    assert other.status_code == 201  # one agent's quota is its own
