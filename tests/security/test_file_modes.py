"""Everything Credence writes in its data dir is private (0600, dirs 0700); exposure is flagged."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from credence.notify.vapid import generate
from credence.settings import Settings
from tests.livesrv import cli_key, running
from tests.security.rawhttp import served

# The VAPID key and the push token secret live in the database; no file of their own is made.
SECRETS = ("credence.sqlite3",)
LEGACY = ("vapid_private.pem", "push_token_secret")


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The permissive umask of a typical shell, so only Credence's own care can make files 0600."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _modes(root: Path) -> dict[str, int]:
    return {
        str(path.relative_to(root)): stat.S_IMODE(path.stat().st_mode)
        for path in [root, *root.rglob("*")]
    }


def _use(url: str, data_dir: Path) -> None:
    """Write through the API so the WAL and shared-memory files exist."""
    key = cli_key(data_dir, "admin")
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as admin:
        assert admin.post("/api/v1/agents", json={"id": "coder", "name": "C"}).status_code == 201


def test_a_real_start_creates_only_private_files(tmp_path: Path, open_umask) -> None:
    data_dir = tmp_path / "data"
    with served(data_dir) as run:
        _use(run.url, data_dir)
        modes = _modes(data_dir)
    assert {"credence.sqlite3-wal", "credence.sqlite3-shm", *SECRETS} <= set(modes)
    assert not set(LEGACY) & set(modes)
    for name, mode in modes.items():
        expected = 0o700 if (data_dir / name).is_dir() else 0o600
        assert mode == expected, f"{name} is {mode:o}"
    assert "readable by other users" not in run.stderr


def test_the_store_creates_its_files_private_whatever_the_umask(tmp_path: Path, open_umask):
    settings = Settings(data_dir=tmp_path / "data", scheduler=False)
    with running(settings) as live:
        _use(live.url, settings.data_dir)
        modes = _modes(settings.data_dir)
    for name in ("credence.sqlite3", "credence.sqlite3-wal", "credence.sqlite3-shm"):
        assert modes[name] == 0o600, f"{name} is {modes[name]:o}"
    assert modes["."] == 0o700


def test_exposed_database_and_key_files_are_named_in_one_warning(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with served(data_dir):
        pass
    # A key file an older Credence left behind is still a secret, and still checked.
    (data_dir / "vapid_private.pem").write_bytes(generate().private_pem())
    for name in ("credence.sqlite3", "vapid_private.pem"):
        (data_dir / name).chmod(0o644)
    with served(data_dir) as run:
        pass
    [warning] = [line for line in run.stderr.splitlines() if "readable by other users" in line]
    assert warning.startswith("WARNING ")
    assert str(data_dir / "credence.sqlite3") in warning
    assert str(data_dir / "vapid_private.pem") in warning
    assert "push_token_secret" not in warning


def test_a_data_dir_made_wide_before_the_first_start_is_named(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)
    with served(data_dir) as run:
        pass
    [warning] = [line for line in run.stderr.splitlines() if "readable by other users" in line]
    named = warning.split("readable by other users: ", 1)[1].split("; run", 1)[0]
    assert str(data_dir) in named.split(", ")
