"""Schema fuzzing: schemathesis runs every phase and every check against a live server."""

from __future__ import annotations

import os
import random
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from schemathesis.cli import schemathesis as schemathesis_cli

from credence.settings import Settings
from tests.helpers import decide, make_agent, pending_belief, post_episode
from tests.livesrv import cli_key, running

ROOT = Path(__file__).resolve().parents[2]
FIXED_SEED = tomllib.loads((ROOT / "schemathesis.toml").read_text(encoding="utf-8"))["seed"]


def _fresh_seed() -> int:
    """A new seed each run (CREDENCE_FUZZ_SEED replays one), printed so a failure can be rerun."""
    seed = int(os.environ.get("CREDENCE_FUZZ_SEED") or random.SystemRandom().randrange(2**31))
    print(f"schemathesis fresh seed: {seed} (replay: CREDENCE_FUZZ_SEED={seed})")
    return seed


@pytest.mark.slow
@pytest.mark.parametrize("which", ["fixed", "fresh"])
def test_schemathesis_finds_no_failures(tmp_path: Path, monkeypatch, which: str) -> None:
    seed = FIXED_SEED if which == "fixed" else _fresh_seed()
    settings = Settings(
        data_dir=tmp_path / "data",
        scheduler=False,
        rate_limit_per_minute=10**6,
        pair_rate_limit_per_minute=10**6,
        read_rate_limit_per_minute=0,
        read_concurrency_per_key=0,
    )
    with running(settings) as server:
        key = cli_key(settings, "admin", label="fuzz")
        with server.client(key) as admin:
            # Real objects so links and path parameters reach past 404s.
            make_agent(admin, "coder")
            episode = post_episode(admin, "coder")
            decide(admin, pending_belief(admin, "coder", source_episodes=[episode["id"]]), "keep")
            pending_belief(admin, "coder", text="Ask before deleting files")
        monkeypatch.setenv("CREDENCE_FUZZ_KEY", key)
        monkeypatch.chdir(ROOT)  # schemathesis.toml (seed, auth, expected statuses) lives here
        result = CliRunner().invoke(
            schemathesis_cli,
            [
                "run",
                f"{server.url}/api/v1/openapi.json",
                "--checks",
                "all",
                "--mode",
                "all",
                "--phases",
                "examples,coverage,fuzzing,stateful",
                "--max-examples",
                os.environ.get("CREDENCE_FUZZ_EXAMPLES", "25"),
                "--workers",
                "1",
                "--seed",
                str(seed),
                "--no-color",
            ],
            catch_exceptions=False,
        )
        output = result.output
        if log := os.environ.get("CREDENCE_FUZZ_LOG"):
            Path(log).write_text(output, encoding="utf-8")
        server_errors = re.findall(r"\[5\d\d\]", output)
    replay = f"seed {seed} (replay: CREDENCE_FUZZ_SEED={seed})\n"
    assert f"Seed: {seed}" in output
    assert not server_errors, replay + output[-6000:]
    assert result.exit_code == 0, replay + output[-6000:]
    for phase in ("Coverage", "Fuzzing", "Stateful"):
        assert re.search(rf"✅ +{phase}", output), f"{phase} did not pass, {replay}{output[-3000:]}"
