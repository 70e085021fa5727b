"""A client sending its headers or body at 1 byte/s is disconnected within the request timeout."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from credence.settings import Settings
from tests.livesrv import LiveServer, cli_key, running
from tests.security.rawhttp import address_of, read_message, status_of

TIMEOUT_S = 1.0  # CREDENCE_REQUEST_TIMEOUT_S for these tests
MAX_BYTES = 12  # a byte a second: without the bound the server would still be waiting


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    settings = Settings(data_dir=tmp_path / "data", scheduler=False, request_timeout_s=TIMEOUT_S)
    with running(settings) as server:
        yield server


def _trickle(url: str, head: bytes, tail: bytes) -> tuple[int, bytes]:
    """Send ``head`` at once, then ``tail`` a byte a second; return bytes trickled and the answer.

    Stops as soon as the server answers or closes; after MAX_BYTES it gives up.
    """
    with socket.create_connection(address_of(url), timeout=5) as conn:
        conn.sendall(head)
        for sent, byte in enumerate(tail[:MAX_BYTES]):
            answer = _answer_within(conn, 1.0)
            if answer is not None:
                return sent, answer
            try:
                conn.sendall(bytes([byte]))
            except OSError:
                return sent, b""
        return MAX_BYTES, _answer_within(conn, 0.1) or b"<still open>"


def _answer_within(conn: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing, or None if it is still open after ``seconds``."""
    conn.settimeout(seconds)
    received = b""
    try:
        while chunk := conn.recv(65536):
            received += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return received


def test_headers_sent_a_byte_a_second_are_cut_off(live) -> None:
    sent, answer = _trickle(
        live.url, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", b"X-Slow: " + b"a" * 40 + b"\r\n\r\n"
    )
    assert answer != b"<still open>" and sent < MAX_BYTES
    assert b"HTTP/1.1 200" not in answer  # the request never started


def test_a_body_sent_a_byte_a_second_gets_408_and_is_closed(live) -> None:
    key = cli_key(live.settings, "admin")
    body = b'{"id": "slowpoke", "name": "Slow"}'
    head = (
        b"POST /api/v1/agents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    )
    sent, answer = _trickle(live.url, head, body)
    assert sent < MAX_BYTES, answer
    assert status_of(answer) == 408, answer
    assert b"did not arrive within 1 s" in answer
    with live.client(key) as admin:
        assert admin.get("/api/v1/agents/slowpoke").status_code == 404


def test_an_idle_connection_that_never_sends_is_closed(live) -> None:
    with socket.create_connection(address_of(live.url), timeout=5) as conn:
        assert _answer_within(conn, 4 * TIMEOUT_S) == b""


def test_a_prompt_client_keeps_its_connection_across_requests(live) -> None:
    with socket.create_connection(address_of(live.url), timeout=5) as conn:
        for _ in range(3):
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = read_message(conn)
            assert answer is not None and status_of(answer[0]) == 200
            time.sleep(TIMEOUT_S / 4)


def test_the_setting_must_be_positive() -> None:
    from credence.settings import SettingsError, load_settings

    with pytest.raises(SettingsError, match="CREDENCE_REQUEST_TIMEOUT_S"):
        load_settings({"CREDENCE_REQUEST_TIMEOUT_S": "0"})
    assert load_settings({"CREDENCE_REQUEST_TIMEOUT_S": "2.5"}).request_timeout_s == 2.5
