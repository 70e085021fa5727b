"""`credence demo`: the first run shows the whole loop; the second run changes nothing."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx

from credence.cli.demo import load_demo_manifest, prepare
from credence.settings import Settings
from tests.livesrv import cli_key


def _beliefs(database: Path) -> list[tuple]:
    db = sqlite3.connect(database)
    try:
        return db.execute(
            "SELECT id, agent_id, status, content, provenance, review_reasons FROM beliefs"
            " ORDER BY id"
        ).fetchall()
    finally:
        db.close()


def test_demo_manifest_has_two_agents_and_weeks_of_episodes() -> None:
    manifest = load_demo_manifest()
    assert {a.id for a in manifest.agents} >= {"coder", "support"}
    episodes = [e for batch in manifest.episodes.values() for e in batch]
    assert len(episodes) >= 60
    days = {e.finished_at.date() for e in episodes}
    assert (max(days) - min(days)).days >= 21
    assert any(e.origin == "untrusted" for e in episodes)


def test_prepare_is_idempotent_and_shows_review_reasons(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "demo", scheduler=False)
    first = asyncio.run(prepare(settings))
    assert first.new_episodes >= 60 and first.new_beliefs >= 2
    assert first.pending >= 3
    rows = _beliefs(settings.database_path)
    pending = [r for r in rows if r[2] == "pending"]
    flags = ("contradicts:", "untrusted_source", "op:supersede", "op:forget")
    assert any(flag in r[5] for r in pending for flag in flags)
    # What third-party pages and emails asked for never becomes a clean proposal.
    hostile = ("vendor", "shipping partner", "another site")
    assert not any(r[4] == "clean" and w in r[3].lower() for r in pending for w in hostile)
    dump = "\n".join(sqlite3.connect(settings.database_path).iterdump())
    assert "AKIAIOSFODNN7EXAMPLE" not in dump and "[REDACTED:" in dump

    second = asyncio.run(prepare(settings))
    assert second.new_episodes == 0 and second.new_beliefs == 0
    assert _beliefs(settings.database_path) == rows
    assert first.pairing_code != second.pairing_code


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_credence_demo_serves_pending_beliefs_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    data, port = tmp_path / "demo-data", _free_port()
    env = {**os.environ, "CREDENCE_DATA_DIR": str(data), "CREDENCE_PORT": str(port)}
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "credence.cli", "demo"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if "/?pair=" in line:
                break
        pairing_url = lines[-1].strip()
        assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/\?pair=[A-Za-z0-9_-]+", pairing_url)
        assert any("beliefs are waiting for your review" in line for line in lines)
        key = cli_key(data, "admin")
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(
                    f"http://127.0.0.1:{port}/api/v1/beliefs",
                    params={"status": "pending"},
                    headers={"Authorization": f"Bearer {key}"},
                )
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "demo server never answered"
                time.sleep(0.2)
        assert len(response.json()["items"]) >= 3
        assert time.monotonic() - started < 90
        paired = httpx.post(
            f"http://127.0.0.1:{port}/api/v1/pair", json={"code": pairing_url.rsplit("=", 1)[1]}
        )
        assert paired.status_code == 201
    finally:
        process.send_signal(signal.SIGINT)
        remaining, _ = process.communicate(timeout=30)
    assert process.returncode in (0, -signal.SIGINT, 130), remaining
    assert "Traceback" not in remaining, remaining
