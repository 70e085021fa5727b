"""The `credence` command as a user runs it: a real subprocess on a real data dir."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def credence(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    """Run `python -m credence.cli ARGS --data DATA` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "credence.cli", *args, "--data", str(data)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_keys_create_prints_the_key_alone_on_the_last_line(tmp_path: Path) -> None:
    created = credence("keys", "create", "--scope", "admin", "--label", "ops", data=tmp_path)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    assert key.startswith("crd_") and len(key) == 47 and " " not in key
    listed = credence("keys", "list", data=tmp_path)
    assert "admin" in listed.stdout and key not in listed.stdout
    key_id = listed.stdout.split()[0]
    assert credence("keys", "revoke", key_id, data=tmp_path).returncode == 0
    assert "revoked" in credence("keys", "list", data=tmp_path).stdout


def test_keys_create_refuses_an_agent_key_without_its_agent(tmp_path: Path) -> None:
    refused = credence("keys", "create", "--scope", "agent", data=tmp_path)
    assert refused.returncode == 2 and "exactly one agent" in refused.stderr
    unknown = credence("keys", "create", "--scope", "agent", "--agent", "ghost", data=tmp_path)
    assert unknown.returncode == 2 and "ghost" in unknown.stderr


def test_audit_verify_on_an_empty_store(tmp_path: Path) -> None:
    verified = credence("audit", "verify", data=tmp_path)
    assert verified.returncode == 0
    assert json.loads(verified.stdout) == {"ok": True, "rows": 0, "first_broken": None}


def test_keys_list_and_revoke_refuse_a_data_dir_without_a_database(tmp_path: Path) -> None:
    absent = tmp_path / "typo"
    for args in (("keys", "list"), ("keys", "revoke", "key_x"), ("push", "test")):
        refused = credence(*args, data=absent)
        assert refused.returncode == 2 and "no Credence data" in refused.stderr, args
    assert not absent.exists()
