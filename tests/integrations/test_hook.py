"""The hook program as Claude Code and Codex run it: a subprocess fed documented payloads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tests.helpers import decide, make_agent, pending_belief
from tests.livesrv import LiveServer, cli_key

FIXTURES = Path(__file__).parent / "fixtures"
CLOSED_PORT_URL = "http://127.0.0.1:9"


def event(name: str, transcript: Path) -> str:
    """A fixture payload with its transcript path pointing at ``transcript``."""
    payload = json.loads((FIXTURES / name).read_text())
    payload["transcript_path"] = str(transcript)
    return json.dumps(payload)


def run_hook(
    url: str,
    key: str,
    state: Path,
    *args: str,
    stdin: str = "",
    module: str = "credence.integrations.hook",
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m credence.integrations.hook ARGS` the way the agent would."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CREDENCE_")}
    environ.update(
        CREDENCE_URL=url, CREDENCE_API_KEY=key, CREDENCE_HOOK_STATE_DIR=str(state), **env
    )
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=environ,
    )


def episodes(admin: httpx.Client) -> list[dict]:
    return admin.get("/api/v1/agents/coder/episodes").json()["items"]


@pytest.fixture
def agent_key(server: LiveServer, admin: httpx.Client) -> str:
    make_agent(admin)
    return cli_key(server.settings, "agent", "coder")


def test_user_prompt_submit_returns_the_memory_for_the_prompt(
    server: LiveServer, admin: httpx.Client, agent_key: str, tmp_path: Path
) -> None:
    decide(admin, pending_belief(admin, text="Deploy scripts need a dry-run flag"), "keep")
    transcript = tmp_path / "session.jsonl"
    result = run_hook(
        server.url,
        agent_key,
        tmp_path / "state",
        "claude-code",
        stdin=event("user_prompt_submit.json", transcript),
    )
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "UserPromptSubmit"
    assert "Deploy scripts need a dry-run flag" in answer["additionalContext"]
    start = run_hook(
        server.url,
        agent_key,
        tmp_path / "state",
        "claude-code",
        stdin=event("session_start.json", transcript),
    )
    assert json.loads(start.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_no_memory_means_no_output(server: LiveServer, agent_key: str, tmp_path: Path) -> None:
    result = run_hook(
        server.url,
        agent_key,
        tmp_path / "state",
        "claude-code",
        stdin=event("user_prompt_submit.json", tmp_path / "t.jsonl"),
    )
    assert result.returncode == 0 and result.stdout == ""


def test_each_turn_is_posted_once_as_the_transcript_grows(
    server: LiveServer, admin: httpx.Client, agent_key: str, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes((FIXTURES / "claude_code_turn1.jsonl").read_bytes())
    state = tmp_path / "state"
    first = run_hook(
        server.url, agent_key, state, "claude-code", stdin=event("stop.json", transcript)
    )
    assert first.returncode == 0 and first.stdout == "", first.stderr
    (one,) = episodes(admin)
    assert "dry-run" in one["summary"] and one["metadata"]["turn"]["messages"] == 4
    assert one["session_id"] == json.loads(event("stop.json", transcript))["session_id"]

    with transcript.open("ab") as out:
        out.write(b"{this line is cut and not JSON\n")
        out.write((FIXTURES / "claude_code_turn2.jsonl").read_bytes())
    run_hook(server.url, agent_key, state, "claude-code", stdin=event("stop.json", transcript))
    end = run_hook(
        server.url, agent_key, state, "claude-code", stdin=event("session_end.json", transcript)
    )
    assert end.returncode == 0
    found = episodes(admin)
    assert len(found) == 2
    second = next(e for e in found if e["id"] != one["id"])
    assert "never touch prod" in json.dumps(second)


def test_server_down_spools_and_the_next_call_replays(
    server: LiveServer, admin: httpx.Client, agent_key: str, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes((FIXTURES / "claude_code_turn1.jsonl").read_bytes())
    state = tmp_path / "state"
    stop = event("stop.json", transcript)
    down = run_hook(CLOSED_PORT_URL, agent_key, state, "claude-code", stdin=stop)
    assert down.returncode == 0 and down.stdout == ""
    assert "kept for later" in down.stderr
    assert len(list((state / "spool").glob("*.json"))) == 1
    prompt = run_hook(
        CLOSED_PORT_URL,
        agent_key,
        state,
        "claude-code",
        stdin=event("user_prompt_submit.json", transcript),
    )
    assert prompt.returncode == 0 and prompt.stdout == ""
    assert episodes(admin) == []

    back = run_hook(server.url, agent_key, state, "claude-code", stdin=stop)
    assert back.returncode == 0, back.stderr
    assert len(episodes(admin)) == 1
    assert list((state / "spool").glob("*.json")) == []


class _Stalling(BaseHTTPRequestHandler):
    release = threading.Event()

    def do_GET(self) -> None:
        self.release.wait(30)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stalling_server() -> Iterator[str]:
    """A loopback server that accepts requests and answers none until the test ends."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Stalling)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        _Stalling.release.set()
        httpd.shutdown()
        httpd.server_close()


def test_a_slow_server_costs_the_budget_and_nothing_more(
    stalling_server: str, tmp_path: Path
) -> None:
    started = time.monotonic()
    result = run_hook(
        stalling_server,
        "crd_key",
        tmp_path / "state",
        "claude-code",
        stdin=event("user_prompt_submit.json", tmp_path / "t.jsonl"),
        CREDENCE_AGENT_ID="coder",
        CREDENCE_HOOK_BUDGET="0.5",
    )
    assert result.returncode == 0 and result.stdout == ""
    assert "did not answer within 0.5 s" in result.stderr
    assert time.monotonic() - started < 20  # the server would have held it for 30 s


def test_garbage_on_stdin_or_no_key_still_exits_zero(tmp_path: Path) -> None:
    garbage = run_hook(CLOSED_PORT_URL, "k", tmp_path / "s", "claude-code", stdin="{nope")
    assert garbage.returncode == 0 and garbage.stdout == ""
    no_key = run_hook(
        CLOSED_PORT_URL,
        "",
        tmp_path / "s",
        "claude-code",
        stdin=event("stop.json", tmp_path / "t.jsonl"),
        CREDENCE_API_KEY_FILE=str(tmp_path / "missing"),
    )
    assert no_key.returncode == 0 and "no API key" in no_key.stderr


def test_a_key_file_readable_by_others_is_refused(
    server: LiveServer, admin: httpx.Client, agent_key: str, tmp_path: Path
) -> None:
    decide(admin, pending_belief(admin, text="Deploy scripts need a dry-run flag"), "keep")
    key_file = tmp_path / "api-key"
    key_file.write_text(agent_key + "\n")
    key_file.chmod(0o644)
    args = ("claude-code",)
    stdin = event("user_prompt_submit.json", tmp_path / "t.jsonl")
    loose = run_hook(
        server.url, "", tmp_path / "s", *args, stdin=stdin, CREDENCE_API_KEY_FILE=str(key_file)
    )
    assert loose.stdout == "" and "chmod 600" in loose.stderr
    key_file.chmod(0o600)
    tight = run_hook(
        server.url, "", tmp_path / "s", *args, stdin=stdin, CREDENCE_API_KEY_FILE=str(key_file)
    )
    assert "dry-run flag" in tight.stdout


def test_codex_notify_posts_the_turn_once(
    server: LiveServer, admin: httpx.Client, agent_key: str, tmp_path: Path
) -> None:
    payload = (FIXTURES / "codex_notify.json").read_text()
    state = tmp_path / "state"
    done = run_hook(server.url, agent_key, state, "codex", payload)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    # The same program through the full CLI, as `notify = ["credence", "hook", "codex"]` runs it.
    again = run_hook(server.url, agent_key, state, "hook", "codex", payload, module="credence.cli")
    assert again.returncode == 0 and again.stdout == "", again.stderr
    (only,) = episodes(admin)
    assert only["session_id"] == "019a6f3c-7d2e-7c41-b5a0-2f9d1c3e8a77"
    assert "basket" in only["summary"]


def test_hooks_install_merges_into_claude_code_settings(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(make:*)"]}}))
    cli = [sys.executable, "-m", "credence.cli", "hooks", "claude-code", "--install", str(settings)]
    first = subprocess.run(cli, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    merged = json.loads(settings.read_text())
    assert merged["permissions"] == {"allow": ["Bash(make:*)"]}
    command = merged["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command.endswith("-m credence.integrations.hook claude-code")
    again = subprocess.run(cli, capture_output=True, text=True, timeout=60)
    assert "already runs" in again.stdout
    settings.write_text("{broken")
    refused = subprocess.run(cli, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and settings.read_text() == "{broken"
