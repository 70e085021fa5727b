"""`credence pair`: a one-time code, its QR code, and the pairing URL alone on the last line."""

from __future__ import annotations

import io
import threading

import pytest
import segno

from credence.cli import main
from tests.livesrv import LiveServer


def run_pair(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    """Run `credence pair` in-process, in a thread of its own (the CLI runs its own event loop,
    so it must not share a thread where one is running); returns (exit code, stdout, stderr)."""
    codes: list[int] = []
    worker = threading.Thread(target=lambda: codes.append(main(["pair", *argv])))
    worker.start()
    worker.join()
    captured = capsys.readouterr()
    return codes[0], captured.out, captured.err


@pytest.fixture
def public_url(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point CREDENCE_PUBLIC_URL at the live server, as an operator would."""
    monkeypatch.setenv("CREDENCE_PUBLIC_URL", server.url)
    return server.url


def test_pair_prints_the_url_last_and_the_code_pairs_exactly_once(
    server: LiveServer, public_url: str, capsys: pytest.CaptureFixture
) -> None:
    status, out, _ = run_pair(capsys, "--data", str(server.settings.data_dir))
    assert status == 0
    url = out.rstrip("\n").splitlines()[-1]
    assert url.startswith(f"{public_url}/?pair=")
    code = url.split("?pair=", 1)[1]
    with server.client() as phone:
        first = phone.post("/api/v1/pair", json={"code": code})
        again = phone.post("/api/v1/pair", json={"code": code})
    assert first.status_code == 201
    assert first.json()["info"]["scope"] == "reviewer"
    assert first.json()["info"]["label"] == "paired device"
    assert again.status_code == 410
    assert "already used" in again.json()["detail"]


def test_the_qr_code_encodes_the_pairing_url(
    server: LiveServer, public_url: str, capsys: pytest.CaptureFixture
) -> None:
    _, out, _ = run_pair(capsys, "--data", str(server.settings.data_dir))
    url = out.rstrip("\n").splitlines()[-1]
    expected = io.StringIO()
    segno.make(url, error="m").terminal(out=expected, compact=True, border=2)
    assert expected.getvalue() in out
    assert "█" in out


def test_agent_flags_limit_the_key_to_those_agents(
    server: LiveServer, public_url: str, admin, capsys: pytest.CaptureFixture
) -> None:
    for agent_id in ("ingest", "support", "other"):
        assert admin.post("/api/v1/agents", json={"id": agent_id, "name": agent_id}).is_success
    data = str(server.settings.data_dir)
    status, out, _ = run_pair(
        capsys, "--agent", "ingest", "--agent", "support", "--label", "Ana's phone", "--data", data
    )
    assert status == 0
    assert "ingest, support" in out
    code = out.rstrip("\n").splitlines()[-1].split("?pair=", 1)[1]
    with server.client() as phone:
        key = phone.post("/api/v1/pair", json={"code": code}).json()
    assert key["info"]["agents"] == ["ingest", "support"]
    assert key["info"]["label"] == "Ana's phone"
    with server.client(key["key"]) as phone:
        assert phone.get("/api/v1/agents/other").status_code == 404
        assert phone.get("/api/v1/agents/ingest").status_code == 200


def test_an_unknown_agent_is_refused(server: LiveServer, capsys: pytest.CaptureFixture) -> None:
    status, out, err = run_pair(
        capsys, "--agent", "nobody", "--data", str(server.settings.data_dir)
    )
    assert status == 2
    assert out == ""
    assert "agent 'nobody' not found" in err


def test_a_data_dir_without_a_database_is_named_and_not_created(
    tmp_path, capsys: pytest.CaptureFixture
) -> None:
    absent = tmp_path / "data"
    status, out, err = run_pair(capsys, "--agent", "coder", "--data", str(absent))
    assert status == 2 and out == ""
    assert str(absent) in err and "./demo-data" in err
    assert not absent.exists()
