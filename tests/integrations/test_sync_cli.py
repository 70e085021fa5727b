"""`credence sync` and `credence import` as a user runs them, against a live server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from credence.integrations.managed_block import begin_marker, end_marker
from tests.helpers import decide, make_agent, pending_belief
from tests.livesrv import LiveServer

USER_TEXT = "# AGENTS.md\n\nBuild with `make`.   \nDo not touch vendor/.\n"


def credence(server: LiveServer, key: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m credence.cli ARGS` with CREDENCE_URL and CREDENCE_API_KEY set."""
    env = {**os.environ, "CREDENCE_URL": server.url, "CREDENCE_API_KEY": key}
    return subprocess.run(
        [sys.executable, "-m", "credence.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def keep(admin: httpx.Client, text: str, **fields: object) -> dict:
    return decide(admin, pending_belief(admin, text=text, **fields), "keep").json()


def test_sync_writes_a_block_keeps_user_text_and_is_idempotent(
    server: LiveServer, admin: httpx.Client, admin_key: str, tmp_path: Path
) -> None:
    make_agent(admin, roles=["reviewer"])
    keep(admin, "Run the linter before pushing")
    keep(admin, "Ask for a failing test", role="reviewer")
    pending_belief(admin, text="Still waiting for review")
    (tmp_path / "repo").mkdir()
    target = tmp_path / "repo" / "AGENTS.md"
    target.write_text(USER_TEXT, encoding="utf-8")

    first = credence(server, admin_key, "sync", "--agent", "coder", "--file", str(target))
    assert first.returncode == 0, first.stderr
    text = target.read_text(encoding="utf-8")
    assert text.startswith(USER_TEXT)
    assert begin_marker("coder") in text and text.rstrip().endswith(end_marker("coder"))
    assert "- Run the linter before pushing" in text and "### Role: reviewer" in text
    assert "Still waiting" not in text

    os.utime(target, (1_000_000, 1_000_000))
    again = credence(server, admin_key, "sync", "--agent", "coder", "--file", str(target))
    assert again.returncode == 0 and "up to date" in again.stdout
    assert target.stat().st_mtime == 1_000_000
    sync = ("sync", "--agent", "coder", "--file", str(target))
    assert credence(server, admin_key, *sync, "--check").returncode == 0

    keep(admin, "Tag every release")
    stale = credence(server, admin_key, *sync, "--check")
    assert stale.returncode == 1 and "+- Tag every release" in stale.stdout
    assert target.stat().st_mtime == 1_000_000
    updated = credence(server, admin_key, "sync", "--agent", "coder", "--file", str(target))
    assert updated.returncode == 0, updated.stderr
    assert target.read_text(encoding="utf-8").startswith(USER_TEXT)
    assert "- Tag every release" in target.read_text(encoding="utf-8")
    assert [p.name for p in target.parent.iterdir()] == ["AGENTS.md"]  # no temporary file left


def test_sync_refuses_broken_markers_in_one_line_and_writes_nothing(
    server: LiveServer, admin: httpx.Client, admin_key: str, tmp_path: Path
) -> None:
    make_agent(admin)
    target = tmp_path / "CLAUDE.md"
    broken = f"mine\n{begin_marker('coder')}\n- half a block\n"
    target.write_text(broken, encoding="utf-8")
    result = credence(server, admin_key, "sync", "--agent", "coder", "--file", str(target))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "never closed" in result.stderr
    assert target.read_text(encoding="utf-8") == broken


def test_sync_of_an_unknown_agent_or_a_bad_key_fails_clearly(
    server: LiveServer, admin: httpx.Client, admin_key: str, tmp_path: Path
) -> None:
    target = tmp_path / "AGENTS.md"
    missing = credence(server, admin_key, "sync", "--agent", "ghost", "--file", str(target))
    assert missing.returncode == 2 and "HTTP 404" in missing.stderr
    wrong = credence(server, "crd_wrong", "sync", "--agent", "ghost", "--file", str(target))
    assert wrong.returncode == 2 and "HTTP 401" in wrong.stderr
    assert not target.exists()


def test_import_proposes_each_rule_for_review_and_skips_the_managed_block(
    server: LiveServer, admin: httpx.Client, admin_key: str, tmp_path: Path
) -> None:
    make_agent(admin)
    keep(admin, "Run the linter before pushing")
    memory = tmp_path / "CLAUDE.md"
    memory.write_text("# Rules\n\n- Prefer small commits\n- Never force-push main\n")
    synced = credence(server, admin_key, "sync", "--agent", "coder", "--file", str(memory))
    assert synced.returncode == 0, synced.stderr

    dry = credence(server, admin_key, "import", "--agent", "coder", str(memory), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"would propose  {memory}:3  Prefer small commits" in dry.stdout
    assert "linter" not in dry.stdout
    assert admin.get("/api/v1/beliefs", params={"status": "pending"}).json()["items"] == []

    done = credence(server, admin_key, "import", "--agent", "coder", str(memory))
    assert done.returncode == 0, done.stderr
    pending = admin.get("/api/v1/beliefs", params={"status": "pending"}).json()["items"]
    assert {b["content"] for b in pending} == {"Prefer small commits", "Never force-push main"}
    assert all(b["provenance"] == "imported" for b in pending)
    first = next(b for b in pending if b["content"] == "Prefer small commits")
    assert first["rationale"] == f"Imported from {memory} line 3."
    assert "managed block skipped" in done.stdout

    again = credence(server, admin_key, "import", "--agent", "coder", str(memory))
    assert "not proposed (duplicate_of:" in again.stdout


def test_an_exported_memory_imports_into_another_agent(
    server: LiveServer, admin: httpx.Client, admin_key: str, tmp_path: Path
) -> None:
    make_agent(admin)
    make_agent(admin, "helper")
    keep(admin, "Tag every release")
    export = tmp_path / "coder.json"
    export.write_text(json.dumps(admin.get("/api/v1/agents/coder/memory/export").json()))
    done = credence(server, admin_key, "import", "--agent", "helper", str(export))
    assert done.returncode == 0, done.stderr
    (imported,) = admin.get("/api/v1/agents/helper/memory/beliefs").json()["items"]
    assert imported["content"] == "Tag every release" and imported["status"] == "pending"
    kept = decide(admin, imported, "keep").json()
    assert kept["status"] == "active" and kept["provenance"] == "imported"
    context = admin.get("/api/v1/agents/helper/memory/context").json()
    assert [n["content"] for n in context["memory_notes"]] == ["Tag every release"]


def test_sync_writes_through_a_linked_agents_md(
    server: LiveServer, admin: httpx.Client, admin_key: str, tmp_path: Path
) -> None:
    make_agent(admin)
    keep(admin, "Tag every release")
    claude = tmp_path / "CLAUDE.md"
    claude.write_text("# Shared rules\n", encoding="utf-8")
    agents = tmp_path / "AGENTS.md"
    agents.symlink_to("CLAUDE.md")
    done = credence(server, admin_key, "sync", "--agent", "coder", "--file", str(agents))
    assert done.returncode == 0, done.stderr
    assert agents.is_symlink() and "- Tag every release" in claude.read_text(encoding="utf-8")
    assert "## Reviewed memory (coder)" in claude.read_text(encoding="utf-8")  # AGENTS.md style
