"""`credence serve` with a bad setting: one line naming it, a non-zero exit, never "listening"."""

from __future__ import annotations

import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from credence.serving import check_startup
from credence.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
SERVE = [sys.executable, "-m", "credence.cli", "serve"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREDENCE_")}
    env.update(
        CREDENCE_DATA_DIR=str(tmp_path / "data"),
        CREDENCE_PORT=str(_free_port()),
        CREDENCE_SCHEDULER="off",
    )
    env.update(settings)
    return env


# (variable, value); {tmp} is the test's own directory, where "a-file" is a regular file.
BAD_SETTINGS = [
    ("CREDENCE_VAPID_SUBJECT", "mailto:you@example.org"),
    ("CREDENCE_VAPID_SUBJECT", "mailto:admin@localhost"),
    ("CREDENCE_VAPID_PRIVATE_KEY", "not-a-key"),
    ("CREDENCE_DATA_DIR", "{tmp}/a-file"),
    ("CREDENCE_DATA_DIR", "{tmp}/a-file/data"),
    ("CREDENCE_LOG_LEVEL", "verbose"),
    ("CREDENCE_PORT", "notaport"),
    ("CREDENCE_PORT", "70000"),
    ("CREDENCE_PUBLIC_URL", "credence.example.org"),
    ("CREDENCE_PUBLIC_URL", "ftp://credence.example.org"),
    ("CREDENCE_LLM_URL", "localhost:11434/v1"),
    ("CREDENCE_SCHEDULER", "maybe"),
    ("CREDENCE_MAX_BODY_BYTES", "-1"),
    ("CREDENCE_MAX_BODY_BYTES", "4MB"),
    ("CREDENCE_PUSH_TTL_S", "-5"),
    ("CREDENCE_RATE_LIMIT_PER_MINUTE", "-1"),
    ("CREDENCE_LLM_TIMEOUT_S", "soon"),
    ("CREDENCE_LLM_TIMEOUT_S", "0"),
    ("CREDENCE_PWA_DIR", "{tmp}/no-such-dir"),
    ("CREDENCE_APPRISE_URLS", "json://hooks.example.org/x, notaurl"),
    ("CREDENCE_HOST", "999.1.1.1"),
    ("CREDENCE_HOST", "192.0.2.1"),  # TEST-NET-1: never an address of this machine
]


@pytest.mark.parametrize(("variable", "value"), BAD_SETTINGS)
def test_a_bad_setting_is_one_line_naming_it(tmp_path: Path, variable: str, value: str) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    result = subprocess.run(
        SERVE,
        env=_env(tmp_path, **{variable: value.format(tmp=tmp_path)}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0
    assert len(lines) == 1, result.stderr
    assert variable in lines[0] and "$." not in lines[0], lines[0]
    assert "listening" not in result.stdout


def test_a_port_in_use_is_one_line_naming_it(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = subprocess.run(
            SERVE,
            env=_env(tmp_path, CREDENCE_PORT=port),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0
    assert len(lines) == 1 and "CREDENCE_PORT" in lines[0] and port in lines[0], result.stderr


def test_a_bad_setting_is_reported_before_the_app_is_imported(tmp_path: Path) -> None:
    # The app's imports (Litestar, the model runtime, MCP) take seconds; a typo should not.
    probe = (
        "import sys; from credence.cli import main; code = main(['serve']);"
        " print(code, 'credence.app' in sys.modules, 'litestar' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env=_env(tmp_path, CREDENCE_PUSH_TTL_S="-5"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.stdout.split() == ["2", "False", "False"], result.stdout + result.stderr
    assert "CREDENCE_PUSH_TTL_S" in result.stderr


def _read_until(process: subprocess.Popen, pattern: str, timeout: float) -> str:
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    seen = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not re.search(pattern, seen):
        if selector.select(timeout=0.5):
            line = process.stdout.readline()
            if not line:
                break
            seen += line
    return seen


def test_listening_is_printed_once_the_server_answers(tmp_path: Path) -> None:
    env = _env(tmp_path)
    process = subprocess.Popen(
        SERVE, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        seen = _read_until(process, "listening", timeout=120)
        assert "Credence listening on" in seen, seen
        # No retry: when "listening" is printed, the server already answers.
        health = httpx.get(f"http://127.0.0.1:{env['CREDENCE_PORT']}/healthz", timeout=10)
        assert health.status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=60)
    assert process.returncode in (0, 130)  # Ctrl-C: uvicorn re-raises it after shutting down
    assert (seen + out).count("listening") == 1


def test_a_failed_start_never_says_listening(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "credence.sqlite3").write_bytes(b"this is not a database" * 100)
    result = subprocess.run(
        SERVE, env=_env(tmp_path), capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode != 0
    assert "listening" not in result.stdout


def test_the_readme_docker_example_is_accepted(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [command] = re.findall(r"docker run [^`]*?credence\n", readme)
    settings = dict(re.findall(r"-e (CREDENCE_[A-Z_]+)=(\S+)", command))
    assert "CREDENCE_VAPID_SUBJECT" in settings
    env = {**settings, "CREDENCE_DATA_DIR": str(tmp_path / "data")}
    check_startup(load_settings(env))  # raises SettingsError for a subject the server refuses


def test_an_unreachable_database_is_one_line_naming_it(tmp_path: Path) -> None:
    port = _free_port()  # nothing listens there: the connection is refused at once
    url = f"postgresql://credence:hunter2@127.0.0.1:{port}/credence"
    result = subprocess.run(
        SERVE,
        env=_env(tmp_path, CREDENCE_DATABASE_URL=url),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0
    assert len(lines) == 1, result.stderr
    assert "CREDENCE_DATABASE_URL" in lines[0] and "refused" in lines[0].lower(), lines[0]
    assert "hunter2" not in result.stderr and "***" in lines[0]
    assert "listening" not in result.stdout
