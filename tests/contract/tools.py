"""The npm tools the contract tests run (pinned in tests/contract/package-lock.json)."""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OPENAPI = ROOT / "openapi.yaml"


@functools.cache
def node_bin(name: str) -> Path:
    """The path of a pinned npm tool, installing the lock file's versions when missing."""
    if not (HERE / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True)
    path = HERE / "node_modules" / ".bin" / name
    assert path.exists(), f"{name} is not installed: run `npm ci` in {HERE}"
    return path


def run_node_tool(name: str, *args: str, cwd: Path = HERE) -> subprocess.CompletedProcess[str]:
    """Run a pinned npm tool and capture its output (the caller judges the exit code)."""
    return subprocess.run(
        [str(node_bin(name)), *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def json_output(completed: subprocess.CompletedProcess[str]) -> Any:
    """The JSON a linter printed on stdout (some print a human summary after it)."""
    text = completed.stdout
    end = max(text.rfind("]"), text.rfind("}"))
    return json.loads(text[: end + 1])
