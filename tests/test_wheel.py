"""The built wheel works anywhere: installed into a fresh venv, served from another directory."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import httpx
import pytest

import credence

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "server", "pwa", "examples")

pytestmark = pytest.mark.slow


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run(*argv: str | Path, **kwargs) -> subprocess.CompletedProcess:
    """Run a command, failing the test with its output when it fails."""
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{argv}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with only the built wheel installed; its dependencies come from ours."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for name in SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=ignore)
        else:
            shutil.copy2(origin, source / name)
    dist = work / "dist"
    run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist, source)
    (wheel,) = dist.glob("credence-*.whl")
    venv = work / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", wheel)
    # No network in tests: the fresh venv borrows our installed dependencies, but not our
    # editable checkout (a path line in a .pth is not itself scanned for .pth files).
    site = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    Path(site.stdout.strip(), "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def test_the_installed_package_is_the_wheel_with_one_version(installed: Path) -> None:
    probe = (
        "import credence, importlib.metadata as m, json;"
        "print(json.dumps([credence.__file__, credence.__version__, m.version('credence')]))"
    )
    done = run(installed / "bin" / "python", "-c", probe, cwd=installed.parent)
    location, version, metadata_version = json.loads(done.stdout)
    assert Path(location).is_relative_to(installed)
    assert version == metadata_version == credence.__version__
    assert (Path(location).parent / "pwa" / "index.html").is_file()


def test_credence_serve_from_another_directory_serves_the_app_and_the_api(
    installed: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREDENCE_")}
    env.update(CREDENCE_PORT=str(port), CREDENCE_SCHEDULER="off", CREDENCE_LOG_LEVEL="WARNING")
    server = subprocess.Popen(
        [installed / "bin" / "credence", "serve", "--data", tmp_path / "data"],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=10) as client:
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None, server.stdout.read()
                try:
                    if client.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "credence serve did not start"
                time.sleep(0.2)
            index = client.get("/")
            manifest = client.get("/manifest.webmanifest")
            worker = client.get("/sw.js")
            document = client.get("/api/v1/openapi.json")
    finally:
        server.terminate()
        server.wait(timeout=30)
        server.stdout.close()
    assert index.status_code == 200 and "text/html" in index.headers["content-type"]
    assert (ROOT / "pwa" / "index.html").read_text(encoding="utf-8") == index.text
    assert manifest.status_code == 200 and manifest.json()["name"]
    assert worker.status_code == 200 and "javascript" in worker.headers["content-type"]
    assert worker.text == (ROOT / "pwa" / "sw.js").read_text(encoding="utf-8")
    assert document.status_code == 200 and document.json()["info"]["version"] == (
        credence.__version__
    )
    assert list(elsewhere.iterdir()) == []


def test_credence_demo_from_the_wheel_reaches_its_pairing_url(
    installed: Path, tmp_path: Path
) -> None:
    """The wheel carries the demo data: `credence demo` in a fresh venv prints a pairing URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREDENCE_")}
    env.update(CREDENCE_PORT=str(port))
    demo = subprocess.Popen(
        [installed / "bin" / "credence", "demo", "--data", tmp_path / "demo-data"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: list[str] = []
    try:
        assert demo.stdout is not None
        for line in demo.stdout:
            seen.append(line)
            if line.startswith(f"http://127.0.0.1:{port}/?pair="):
                break
    finally:
        demo.terminate()
        demo.wait(timeout=30)
        assert demo.stdout is not None
        demo.stdout.close()
    output = "".join(seen)
    assert seen and seen[-1].startswith(f"http://127.0.0.1:{port}/?pair="), output
    assert "beliefs are waiting for your review" in output
    assert "FileNotFoundError" not in output
