"""Tests for credence.embed: the blob helpers and the OpenAI-compatible client (the bundled
model is tested in tests/memory/semantics/test_model.py)."""

from __future__ import annotations

import ipaddress
import json
import socket
import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import numpy as np
import pytest

from credence.embed import (
    Embedder,
    EmbeddingUnavailable,
    OpenAIEmbedder,
    to_blob,
)

RELATED_A = "PDF uploads over 10MB crash the ingester"
RELATED_B = "large PDF files make the ingester fail"
UNRELATED = "the reviewer prefers dark mode in the morning"


def _is_loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX path
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Fail any attempt to reach beyond 127.0.0.1, by connect or by name lookup."""
    attempts: list[Any] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def guarded_connect(sock: socket.socket, address: Any) -> None:
        if not _is_loopback(address):
            attempts.append(address)
            raise ConnectionRefusedError(f"test guard: non-loopback connect to {address!r}")
        real_connect(sock, address)

    def guarded_connect_ex(sock: socket.socket, address: Any) -> int:
        if not _is_loopback(address):
            attempts.append(address)
            raise ConnectionRefusedError(f"test guard: non-loopback connect to {address!r}")
        return real_connect_ex(sock, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not _is_loopback((host,)):
            attempts.append(host)
            raise socket.gaierror(f"test guard: name lookup for {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield attempts
    assert attempts == [], f"network attempts beyond loopback: {attempts}"


# --- helpers -----------------------------------------------------------------------------------


def test_blob_round_trip_is_exact_little_endian_float32() -> None:
    vector = np.asarray([1.0, -0.5, 0.25, 3.4028235e38], dtype=np.float32)
    blob = to_blob(vector)
    assert blob[:4] == struct.pack("<f", 1.0)
    assert len(blob) == 16
    np.testing.assert_array_equal(np.frombuffer(blob, dtype="<f4"), vector)


def test_blob_shape_is_checked() -> None:
    with pytest.raises(ValueError, match="one vector"):
        to_blob(np.zeros((2, 2), dtype=np.float32))


# --- the OpenAI-compatible client against a real loopback server -------------------------------


def _fake_vector(text: str) -> list[float]:
    """A deterministic vector that identifies its text, so misordering is visible."""
    return [float(len(text)), float(sum(ch in "aeiou" for ch in text)), 1.0]


class _FakeEmbeddingsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _EmbeddingsHandler)
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    server: _FakeEmbeddingsServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {"path": self.path, "headers": dict(self.headers.items()), "body": body}
        )
        model, inputs = body["model"], body["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": _fake_vector(text)}
            for i, text in enumerate(inputs)
        ]
        status, payload = 200, None
        if self.path != "/v1/embeddings":
            status, payload = 404, b'{"error": "not found"}'
        elif model == "shuffled":
            data.reverse()
        elif model == "fail500":
            status, payload = 500, b'{"error": {"message": "model overloaded"}}'
        elif model == "malformed":
            payload = b'{"data": [ {"index": 0, "embedding": [0.1, '
        elif model == "short":
            data = data[:-1]
        elif model == "strings":
            data[0]["embedding"] = ["0.1", "0.2", "0.3"]
        elif model == "slow":
            self.server.release.wait(5.0)
        if payload is None:
            payload = json.dumps({"object": "list", "model": model, "data": data}).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)


@pytest.fixture
def fake_server() -> Iterator[_FakeEmbeddingsServer]:
    server = _FakeEmbeddingsServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()
    thread.join(5.0)


def _expected_rows(texts: list[str]) -> np.ndarray:
    rows = np.asarray([_fake_vector(text) for text in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


async def test_openai_embedder_speaks_the_protocol(fake_server: _FakeEmbeddingsServer) -> None:
    embedder = OpenAIEmbedder(fake_server.base_url + "/", "echo", "sk-test-123", None, 5.0)
    assert embedder.dim == 0
    vectors = await embedder.embed(["alpha", "", "beta gamma"])
    assert embedder.dim == 3
    assert vectors.shape == (3, 3) and vectors.dtype == np.float32
    assert not vectors[1].any()
    np.testing.assert_allclose(vectors[[0, 2]], _expected_rows(["alpha", "beta gamma"]), atol=1e-6)
    [request] = fake_server.requests
    assert request["path"] == "/v1/embeddings"
    assert request["body"] == {"model": "echo", "input": ["alpha", "beta gamma"]}
    assert request["headers"]["Authorization"] == "Bearer sk-test-123"
    assert isinstance(embedder, Embedder)


async def test_out_of_order_indices_are_put_back_in_order(
    fake_server: _FakeEmbeddingsServer,
) -> None:
    texts = ["a", "bb bb", "ccc ccc ccc", "dddd"]
    async with httpx.AsyncClient() as client:
        embedder = OpenAIEmbedder(fake_server.base_url, "shuffled", None, client)
        vectors = await embedder.embed(texts)
    np.testing.assert_allclose(vectors, _expected_rows(texts), atol=1e-6)
    assert "Authorization" not in fake_server.requests[0]["headers"]


async def test_large_inputs_are_sent_in_batches(fake_server: _FakeEmbeddingsServer) -> None:
    texts = [f"text number {i}" + " x" * i for i in range(5)]
    embedder = OpenAIEmbedder(fake_server.base_url, "echo", None, batch_size=2)
    vectors = await embedder.embed(texts)
    assert [len(r["body"]["input"]) for r in fake_server.requests] == [2, 2, 1]
    np.testing.assert_allclose(vectors, _expected_rows(texts), atol=1e-6)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("fail500", "HTTP 500: .*model overloaded"),
        ("malformed", "not JSON"),
        ("short", "1 embeddings for 2 inputs"),
        ("strings", "not finite numbers"),
    ],
)
async def test_bad_answers_raise_embedding_unavailable(
    fake_server: _FakeEmbeddingsServer, model: str, message: str
) -> None:
    embedder = OpenAIEmbedder(fake_server.base_url, model, "sk-secret-key")
    with pytest.raises(EmbeddingUnavailable, match=message) as caught:
        await embedder.embed(["one", "two"])
    assert "sk-secret-key" not in str(caught.value)


async def test_wrong_path_and_dimension_mismatch_raise(fake_server: _FakeEmbeddingsServer) -> None:
    with pytest.raises(EmbeddingUnavailable, match="HTTP 404"):
        await OpenAIEmbedder(fake_server.base_url + "/extra", "echo").embed(["one"])
    with pytest.raises(EmbeddingUnavailable, match="length 3, expected 1536"):
        await OpenAIEmbedder(fake_server.base_url, "echo", dim=1536).embed(["one"])


async def test_timeout_raises_embedding_unavailable(fake_server: _FakeEmbeddingsServer) -> None:
    embedder = OpenAIEmbedder(fake_server.base_url, "slow", None, None, 0.3)
    with pytest.raises(EmbeddingUnavailable, match="timed out"):
        await embedder.embed(["one"])


async def test_unreachable_service_raises_embedding_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    embedder = OpenAIEmbedder(f"http://127.0.0.1:{closed_port}/v1", "echo", None, None, 2.0)
    with pytest.raises(EmbeddingUnavailable, match="unreachable"):
        await embedder.embed(["one"])


async def test_blank_only_input_makes_no_request(fake_server: _FakeEmbeddingsServer) -> None:
    embedder = OpenAIEmbedder(fake_server.base_url, "echo", dim=3)
    vectors = await embedder.embed(["", "  "])
    assert vectors.shape == (2, 3) and not vectors.any()
    assert fake_server.requests == []
