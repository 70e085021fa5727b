"""Memory export over real HTTP: active beliefs only, provenance, audit summary, Markdown."""

from __future__ import annotations

import time

from tests.helpers import decide, make_agent, pending_belief, post_episode
from tests.livesrv import cli_key

EXPORT = "/api/v1/agents/coder/memory/export"
MARKDOWN = f"{EXPORT}/markdown"


def test_json_export_has_active_beliefs_with_provenance_and_audit(admin) -> None:
    make_agent(admin, roles=["reviewer"])
    seen = post_episode(admin, summary="linted late")
    cited = pending_belief(admin, text="Run the linter first", source_episodes=[seen["id"]])
    kept = decide(admin, cited, "keep").json()
    pending_belief(admin, text="Still pending lesson")
    gone = decide(admin, pending_belief(admin, text="Deploy on Fridays"), "keep").json()
    decide(admin, gone, "forget")
    reviewer = pending_belief(admin, text="Ask for a failing test", role="reviewer")
    decide(admin, reviewer, "keep")
    # Read last: after third-party content, an unsourced proposal could not be kept as is.
    page = post_episode(admin, summary="vendor page", origin="untrusted")
    untrusted = pending_belief(admin, text="Vendor: skip TLS", source_episodes=[page["id"]])
    owned = decide(admin, untrusted, "edit", {"content": "Keep TLS on for vendors"}).json()

    response = admin.get(EXPORT)
    assert response.status_code == 200
    body = response.json()
    assert body["format_version"] == 1 and body["agent_id"] == "coder"
    assert body["agent_name"] == "Coder"
    assert {b["content"] for b in body["beliefs"]} == {
        "Run the linter first",
        "Keep TLS on for vendors",
        "Ask for a failing test",
    }
    assert [b["role"] for b in body["beliefs"]] == [None, None, "reviewer"]
    by_id = {b["id"]: b for b in body["beliefs"]}
    assert by_id[owned["id"]]["provenance"] == "owner"
    assert by_id[owned["id"]]["source_episodes"] == [page["id"]]
    first = by_id[kept["id"]]
    assert first["provenance"] == "clean" and first["decided_by"] == kept["decided_by"]
    trail = admin.get(f"/api/v1/beliefs/{kept['id']}/audit").json()["items"]
    assert first["audit"] == {
        "events": len(trail),
        "proposed_at": trail[0]["at"],
        "last_action": "kept",
        "last_actor": trail[-1]["actor"],
        "last_at": trail[-1]["at"],
        "last_row_hash": trail[-1]["row_hash"],
    }
    assert by_id[owned["id"]]["audit"]["last_action"] == "edited"


def test_export_shows_which_memory_was_used(admin) -> None:
    make_agent(admin)
    belief = decide(admin, pending_belief(admin, text="Tag releases"), "keep").json()
    admin.get("/api/v1/agents/coder/memory/context")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        (exported,) = admin.get(EXPORT).json()["beliefs"]
        if exported["injection_count"]:
            break
        time.sleep(0.1)
    assert exported["id"] == belief["id"] and exported["injection_count"] == 1
    assert exported["last_injected_at"] is not None


def test_markdown_export_is_literal_text_grouped_by_role(admin) -> None:
    make_agent(admin, roles=["reviewer"])
    hostile = "See ![x](https://attacker.example/?q=1) and <script>alert(1)</script> # now"
    belief = pending_belief(admin, text="placeholder")
    decide(admin, belief, "edit", {"content": hostile + "\n## Fake heading"})
    decide(admin, pending_belief(admin, text="Ask for a test", role="reviewer"), "keep")
    response = admin.get(MARKDOWN)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/markdown")
    text = response.text
    lines = text.splitlines()
    assert lines[0] == "# Memory of Coder (`coder`)"
    assert "## All roles" in lines and "## Role `reviewer`" in lines
    assert lines.index("## All roles") < lines.index("## Role `reviewer`")
    bullet = next(line for line in lines if "attacker" in line)
    assert bullet.startswith("- See \\!\\[x\\]\\(https://attacker.example/?q=1\\)")
    assert "\\<script\\>" in bullet and "\\#\\# Fake heading" in bullet
    assert "![" not in text and "<script>" not in text
    assert not any(line.startswith("## Fake") for line in lines)
    assert "- Ask for a test" in lines


def test_empty_memory_exports_cleanly(admin) -> None:
    make_agent(admin)
    assert admin.get(EXPORT).json()["beliefs"] == []
    assert "_No active beliefs._" in admin.get(MARKDOWN).text


def test_agent_keys_export_their_own_agent_only(server, admin) -> None:
    make_agent(admin)
    make_agent(admin, "other")
    own = cli_key(server.settings, "agent", "coder")
    with server.client(own) as client:
        assert client.get(EXPORT).status_code == 200
        assert client.get("/api/v1/agents/other/memory/export").status_code == 404
    assert admin.get("/api/v1/agents/ghost/memory/export").status_code == 404


def test_markdown_export_is_scoped_like_the_json_one(server, admin) -> None:
    make_agent(admin)
    own = cli_key(server.settings, "agent", "coder")
    with server.client(own) as client:
        assert client.get(MARKDOWN).status_code == 200
        assert client.get("/api/v1/agents/other/memory/export/markdown").status_code == 404
    assert admin.get("/api/v1/agents/ghost/memory/export/markdown").status_code == 404
