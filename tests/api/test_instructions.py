"""The instruction-file operations over real HTTP: the managed-block export and the import."""

from __future__ import annotations

import httpx

from credence.integrations.managed_block import begin_marker, end_marker
from tests.helpers import decide, make_agent, pending_belief
from tests.livesrv import LiveServer, cli_key

BLOCK = "/api/v1/agents/coder/memory/export/block"
IMPORT = "/api/v1/agents/coder/memory/import"


def test_the_block_holds_kept_beliefs_only_in_the_asked_format(admin: httpx.Client) -> None:
    make_agent(admin)
    decide(admin, pending_belief(admin, text="Tag every release"), "keep")
    pending_belief(admin, text="Not reviewed yet")
    response = admin.get(BLOCK, params={"format": "claude-md"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/markdown")
    lines = response.text.splitlines()
    assert lines[0] == begin_marker("coder") and lines[-1] == end_marker("coder")
    assert "# Reviewed memory (coder)" in lines and "- Tag every release" in lines
    assert "Not reviewed yet" not in response.text
    assert admin.get(BLOCK, params={"format": "html"}).status_code == 400


def test_another_agents_key_sees_neither_operation(server: LiveServer, admin: httpx.Client) -> None:
    make_agent(admin)
    make_agent(admin, "writer")
    with server.client(cli_key(server.settings, "reviewer", "writer")) as other:
        assert other.get(BLOCK).status_code == 404
        sent = other.post(IMPORT, json={"text": "- a rule", "filename": "x.md"})
        assert sent.status_code == 404
    assert admin.get("/api/v1/beliefs", params={"status": "pending"}).json()["items"] == []


def test_import_reports_each_rule_and_refuses_broken_markers_whole(admin: httpx.Client) -> None:
    make_agent(admin)
    nul = admin.post(IMPORT, json={"text": "- a\x00b", "filename": "notes.md"})
    assert nul.status_code == 422 and "text" in nul.json()["detail"]
    text = "# Notes\n\n- Prefer small commits\n- Prefer small commits\n- Keep CI green\n"
    dry = admin.post(IMPORT, json={"text": text, "filename": "notes.md", "dry_run": True}).json()
    assert [(r["line"], r["text"], r["accepted"]) for r in dry["rules"]] == [
        (3, "Prefer small commits", None),
        (4, "Prefer small commits", None),
        (5, "Keep CI green", None),
    ]
    done = admin.post(IMPORT, json={"text": text, "filename": "notes.md"}).json()
    assert [r["accepted"] for r in done["rules"]] == [True, False, True]
    assert done["rules"][1]["rejected_reason"].startswith("duplicate")
    broken = admin.post(IMPORT, json={"text": f"- x\n{begin_marker('coder')}\n", "filename": "a"})
    assert broken.status_code == 422 and "never closed" in broken.json()["detail"]
    assert admin.post(IMPORT, json={"text": "- x", "filename": "a\nb"}).status_code == 400
    assert len(admin.get("/api/v1/beliefs", params={"status": "pending"}).json()["items"]) == 2
