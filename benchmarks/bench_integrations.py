"""Benchmark: where agents live — the prompt hook's start-up, `credence sync`, `credence import`.

Against `credence serve` on SQLite in a child process: the UserPromptSubmit hook's wall time
from process start to its output (the figure is each run's p95), `credence sync` of an
AGENTS.md over 1,000 kept beliefs (writing the block, and a --check of an up-to-date file), and
`credence import` of a 500-line CLAUDE.md (each rule gated into a pending proposal).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from harness.httpload import UNLIMITED_RATE_ENV, ServerProcess, create_key

from benchmarks.figures import figure

SEED = 20261202
AGENT = "bench"
KEPT = 1000
IMPORT_LINES = 500
HOOK_RUNS = 5
HOOK_CALLS_PER_RUN = 20
SYNC_RUNS = 5
IMPORT_RUNS = 3
HOOK_P95_TARGET_MS = 300.0
SYNC_TARGET_MS = 2000.0
CHECK_TARGET_MS = 2000.0
IMPORT_TARGET_MS = 30000.0
_WORDS = [
    "ingester",
    "pdf",
    "upload",
    "chunk",
    "retry",
    "pnpm",
    "npm",
    "deploy",
    "staging",
    "rollback",
    "migration",
    "token",
    "cache",
    "timeout",
    "webhook",
    "invoice",
    "report",
    "summary",
    "lint",
    "test",
    "review",
    "branch",
    "release",
    "tag",
    "docker",
    "image",
    "build",
    "schema",
    "billing",
    "backup",
    "flag",
    "translation",
    "queue",
    "worker",
    "cron",
    "alert",
    "metric",
    "dashboard",
    "python",
    "rust",
    "typescript",
    "commit",
    "rebase",
    "merge",
    "squash",
    "vendor",
    "secret",
    "fixture",
]
_VERBS = ["Always", "Never", "Prefer to", "Avoid having to", "Remember to", "Do not"]


def claude_md(lines: int, salt: int) -> str:
    """A CLAUDE.md of ``lines`` lines: headings, prose and mostly distinct list rules."""
    rng = random.Random(SEED + salt)
    out = ["# CLAUDE.md", "", "Guidance for this repository.", ""]
    rule = 0
    while len(out) < lines:
        if rule % 40 == 0:
            out += [f"## Area {rule // 40}", ""]
        words = " ".join(rng.sample(_WORDS, 7))
        out.append(f"- {rng.choice(_VERBS)} {words} ({salt}-{rule}).")
        rule += 1
    return "\n".join(out[:lines]) + "\n"


def _cli(env: dict[str, str], *args: str) -> float:
    """Run `python -m credence.cli ARGS`; its wall time in ms (it must succeed or say why)."""
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "credence.cli", *args], env=env, capture_output=True, text=True
    )
    elapsed = (time.perf_counter() - began) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"credence {args[0]} failed: {done.stderr.strip()[-300:]}")
    return elapsed


def _hook_once(env: dict[str, str], payload: str) -> float:
    """One UserPromptSubmit hook: process start to its output, in ms."""
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "credence.integrations.hook", "claude-code"],
        input=payload,
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = (time.perf_counter() - began) * 1000
    if "additionalContext" not in done.stdout:
        raise RuntimeError(f"the hook returned no memory: {done.stderr.strip()[-300:]}")
    return elapsed


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def _keep(client: httpx.Client, agent: str, wanted: int) -> int:
    """Keep up to ``wanted`` of the agent's pending beliefs; how many were kept."""
    kept = 0
    while kept < wanted:
        page = client.get(
            f"/api/v1/agents/{agent}/memory/beliefs", params={"status": "pending", "limit": 200}
        ).json()["items"]
        if not page:
            return kept
        for belief in page[: wanted - kept]:
            answer = client.post(
                f"/api/v1/beliefs/{belief['id']}/keep",
                headers={"If-Match": f'"{belief["version"]}"'},
            )
            kept += answer.status_code == 200
    return kept


def measure() -> list[dict]:
    """Start a server, seed 1,000 kept beliefs by importing and keeping, then time each tool."""
    with tempfile.TemporaryDirectory(prefix="credence-bench-int-") as tmp:
        root = Path(tmp)
        data = root / "data"
        data.mkdir()
        server = ServerProcess(data, UNLIMITED_RATE_ENV).start()
        try:
            return _measure(root, data, server)
        finally:
            server.stop()


def _measure(root: Path, data: Path, server: ServerProcess) -> list[dict]:
    admin_key = create_key(data, "admin")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("CREDENCE_")}
    env = {**base_env, "CREDENCE_URL": server.url, "CREDENCE_API_KEY": admin_key}
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {admin_key}"}) as c:
        for index in range(IMPORT_RUNS):
            c.post("/api/v1/agents", json={"id": f"imp{index}", "name": f"Import {index}"})
        c.post("/api/v1/agents", json={"id": AGENT, "name": "Bench"})
        imports = []
        for index in range(IMPORT_RUNS):
            memory = root / f"CLAUDE-{index}.md"
            memory.write_text(claude_md(IMPORT_LINES, index), encoding="utf-8")
            imports.append(_cli(env, "import", "--agent", f"imp{index}", str(memory)))
        salt = 100
        while _active(c) < KEPT:
            seed = root / f"seed-{salt}.md"
            seed.write_text(claude_md(IMPORT_LINES, salt), encoding="utf-8")
            _cli(env, "import", "--agent", AGENT, str(seed))
            _keep(c, AGENT, KEPT - _active(c))
            salt += 1
        active = _active(c)
    target = root / "repo" / "AGENTS.md"
    target.parent.mkdir()
    syncs, checks = [], []
    for _ in range(SYNC_RUNS):
        target.write_text("# AGENTS.md\n\nBuild with make.\n", encoding="utf-8")
        syncs.append(_cli(env, "sync", "--agent", AGENT, "--file", str(target)))
        checks.append(_cli(env, "sync", "--agent", AGENT, "--file", str(target), "--check"))
    # As installed: bytecode is cached (a checkout run with PYTHONDONTWRITEBYTECODE would
    # compile every module on every start and measure the compiler, not the hook).
    hook_env = {
        **{k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "CREDENCE_AGENT_ID": AGENT,
        "CREDENCE_HOOK_STATE_DIR": str(root / "hook-state"),
    }
    payload = json.dumps(
        {
            "session_id": "bench",
            "transcript_path": str(root / "t.jsonl"),
            "cwd": str(root),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "retry the pdf upload in the ingester and tag a release",
        }
    )
    _hook_once(hook_env, payload)  # warm the page cache once
    p95s, medians = [], []
    for _ in range(HOOK_RUNS):
        run = [_hook_once(hook_env, payload) for _ in range(HOOK_CALLS_PER_RUN)]
        p95s.append(_p95(run))
        medians.append(statistics.median(run))
    return [
        figure(
            f"hook UserPromptSubmit start→output, p95 of {HOOK_CALLS_PER_RUN} calls",
            p95s,
            HOOK_P95_TARGET_MS,
        ),
        figure("hook UserPromptSubmit start→output, median", medians, HOOK_P95_TARGET_MS),
        figure(f"credence sync AGENTS.md, {active} kept beliefs (write)", syncs, SYNC_TARGET_MS),
        figure(
            f"credence sync --check, {active} kept beliefs (up to date)", checks, CHECK_TARGET_MS
        ),
        figure(f"credence import CLAUDE.md, {IMPORT_LINES} lines", imports, IMPORT_TARGET_MS),
    ]


def _active(client: httpx.Client) -> int:
    count, cursor = 0, None
    while True:
        params: dict[str, str | int] = {"status": "active", "limit": 200}
        if cursor:
            params["cursor"] = cursor
        page = client.get(f"/api/v1/agents/{AGENT}/memory/beliefs", params=params).json()
        count += len(page["items"])
        cursor = page.get("next_cursor")
        if not cursor:
            return count
