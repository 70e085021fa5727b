"""The README works as pasted: its shell and Python snippets run, in order, against a live demo."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from credence.cli.demo import prepare
from credence.settings import Settings
from tests.livesrv import running

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SKIP = re.compile(r"<!-- readme-test: skip \((?P<reason>[^)]+)\) -->\s*$")
FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```\s*$", re.M | re.S)

pytestmark = pytest.mark.slow


def snippets(text: str) -> list[tuple[str, str, str | None]]:
    """Every fenced block as (language, body, skip reason or None), in README order."""
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.match(before)
        found.append((match["lang"], match["body"], skip["reason"] if skip else None))
    return found


def script_of(blocks: list[tuple[str, str, str | None]]) -> str:
    """One bash script running the runnable blocks in order, stopping at the first failure."""
    parts = ["set -euo pipefail"]
    for number, (lang, body, skip) in enumerate(blocks):
        if skip is not None:
            continue
        parts.append(f"echo '### README snippet {number}' >&2")
        if lang == "sh":
            parts.append(body)
        elif lang == "python":
            parts.append(f".venv/bin/python - <<'PYTHON'\n{body}PYTHON")
    return "\n".join(parts) + "\n"


def test_every_skipped_snippet_says_why_and_the_walkthrough_is_run() -> None:
    blocks = snippets(README.read_text(encoding="utf-8"))
    run = [body for lang, body, skip in blocks if lang in ("sh", "python") and skip is None]
    skipped = [skip for lang, _, skip in blocks if skip is not None]
    assert len(run) >= 10 and len(skipped) <= 9
    assert all(len(reason) > 10 for reason in skipped)
    text = "\n".join(run)
    for needle in ("$BASE", "credence pair --agent coder", "keys revoke", "audit verify", "/mcp"):
        assert needle in text, needle
    assert "localhost:8000" not in README.read_text(encoding="utf-8")


def test_json_snippets_parse_and_name_what_credence_mcp_reads() -> None:
    configs = [json.loads(body) for lang, body, _ in snippets(README.read_text()) if lang == "json"]
    servers = [config["mcpServers"]["credence"] for config in configs]
    http = next(s for s in servers if "url" in s)
    stdio = next(s for s in servers if "command" in s)
    assert http["url"].endswith("/mcp") and http["headers"]["Authorization"].startswith("Bearer ")
    assert stdio["args"] == ["mcp"] and set(stdio["env"]) == {"CREDENCE_URL", "CREDENCE_API_KEY"}


def test_the_shell_snippets_run_against_a_live_demo(tmp_path: Path) -> None:
    work = tmp_path / "checkout"
    work.mkdir()
    (work / ".venv").symlink_to(Path(sys.executable).parent.parent)
    (work / "examples").symlink_to(ROOT / "examples")
    settings = Settings(data_dir=work / "demo-data", scheduler=False)
    asyncio.run(prepare(settings))
    script = script_of(snippets(README.read_text(encoding="utf-8")))
    # Print the walkthrough's agent key last, to check that its revocation took effect.
    script += 'printf "\\nAGENT_KEY=%s\\n" "$AGENT_KEY"\n'
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREDENCE_")}
    with running(settings) as server:
        env["BASE"] = server.url
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{done.stderr[-3000:]}\n{done.stdout[-3000:]}"
        out = done.stdout
        agent_key = out.rstrip().rsplit("AGENT_KEY=", 1)[1]
        with server.client(agent_key) as agent:
            # The server caches a key lookup for up to a second: the README promises that.
            deadline = time.monotonic() + 1.5
            revoked = agent.get("/api/v1/agents/my-agent/memory/context")
            while revoked.status_code == 200 and time.monotonic() < deadline:
                time.sleep(0.1)
                revoked = agent.get("/api/v1/agents/my-agent/memory/context")
    assert out.count(f"{server.url}/?pair=") == 2
    assert "MEMORY_NOTES" in out and "stored episode ep_" in out
    assert '"name": "get_memory_context"' in out
    assert '"ok": true' in out
    assert (work / "backup" / "credence.sqlite3").stat().st_size > 0
    assert not (work / "data").exists()
    assert revoked.status_code == 401
