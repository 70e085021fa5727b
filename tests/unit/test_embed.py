"""Tests for the embedders: the bundled offline model and the OpenAI-compatible client."""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import struct
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

import credence
from credence.embed import (
    Embedder,
    EmbeddingUnavailable,
    OpenAIEmbedder,
    WordLlamaEmbedder,
    make_embedder,
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


# --- the bundled model -------------------------------------------------------------------------

_FRESH_PROCESS_SCRIPT = textwrap.dedent(
    """
    import json, logging, socket, sys

    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(repr(args[1:] or args))
        raise ConnectionRefusedError("network is forbidden in this test")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.getaddrinfo = refuse
    socket.create_connection = refuse

    from credence.embed import WordLlamaEmbedder

    embedder = WordLlamaEmbedder()
    vectors = embedder.embed_sync(sys.argv[1:])
    print(json.dumps({
        "attempts": attempts,
        "shape": list(vectors.shape),
        "dtype": str(vectors.dtype),
        "norms": [float(n) for n in (vectors ** 2).sum(axis=1)],
        "cosine": (vectors @ vectors.T).tolist(),
        "wordllama_package_imported": "wordllama" in sys.modules,
        "root_handlers": len(logging.getLogger().handlers),
    }))
    """
)


def _run_fresh(script: str, args: list[str], home: Path) -> dict[str, Any]:
    package_root = Path(credence.__file__).resolve().parents[1]
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME", "XDG_CACHE_HOME"}
    }
    env["HOME"] = str(home)  # an empty home: no model cache can be found there
    env["PYTHONPATH"] = os.pathsep.join([str(package_root), env.get("PYTHONPATH", "")])
    completed = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_bundled_model_loads_in_a_fresh_process_without_any_network(tmp_path: Path) -> None:
    result = _run_fresh(_FRESH_PROCESS_SCRIPT, [RELATED_A, RELATED_B, UNRELATED, ""], tmp_path)
    assert result["attempts"] == []
    assert result["shape"] == [4, 256]
    assert result["dtype"] == "float32"
    assert result["norms"][:3] == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert result["norms"][3] == 0.0
    # wordllama's own package __init__ configures the root logger and imports a downloader.
    assert result["wordllama_package_imported"] is False
    assert result["root_handlers"] == 0
    assert not any(tmp_path.iterdir()), "nothing may be cached into the home directory"


def test_vectors_match_wordllamas_own_inference(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import json, sys
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference
        from credence.embed import WordLlamaEmbedder, wordllama_files

        weights, tokenizer = wordllama_files()
        reference = WordLlamaInference(
            load_file(str(weights))["embedding.weight"], Tokenizer.from_file(str(tokenizer))
        ).embed(sys.argv[1:], norm=True)
        ours = WordLlamaEmbedder().embed_sync(sys.argv[1:])
        print(json.dumps({"max_diff": float(abs(reference - ours).max())}))
        """
    )
    texts = [RELATED_A, RELATED_B, UNRELATED, "x", "Ünïcode — with emoji 🎉 and tabs\t!"]
    assert _run_fresh(script, texts, tmp_path)["max_diff"] < 1e-5


async def test_embed_returns_normalised_float32_rows() -> None:
    embedder = WordLlamaEmbedder()
    vectors = await embedder.embed([RELATED_A, RELATED_B, UNRELATED])
    assert embedder.name == "wordllama-l2_supercat-256"
    assert embedder.dim == 256
    assert vectors.shape == (3, 256)
    assert vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert isinstance(embedder, Embedder)


async def test_related_sentences_score_higher_than_unrelated() -> None:
    vectors = await WordLlamaEmbedder().embed([RELATED_A, RELATED_B, UNRELATED])
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.2
    assert similarity[0, 1] > similarity[1, 2] + 0.2


async def test_blank_texts_give_zero_rows_and_keep_positions() -> None:
    embedder = WordLlamaEmbedder()
    vectors = await embedder.embed(["", RELATED_A, "   \n\t", RELATED_B])
    alone = await embedder.embed([RELATED_A, RELATED_B])
    assert not vectors[0].any() and not vectors[2].any()
    np.testing.assert_allclose(vectors[[1, 3]], alone, atol=1e-6)
    assert (await embedder.embed([])).shape == (0, 256)


async def test_large_batch_matches_small_batches() -> None:
    embedder = WordLlamaEmbedder()
    texts = [f"episode {i}: the ingester failed on file {i * 7}" for i in range(150)]
    batched = await embedder.embed(texts)
    singles = np.vstack([await embedder.embed([text]) for text in texts[:5]])
    assert batched.shape == (150, 256)
    np.testing.assert_allclose(batched[:5], singles, atol=1e-6)
    assert not np.allclose(batched[0], batched[1])


async def test_very_long_text_averages_like_its_repeated_unit() -> None:
    embedder = WordLlamaEmbedder()
    unit = "alpha beta"
    long_text = " ".join([unit] * 40_000)  # 80 000 tokens: past the per-chunk gather budget
    vectors = await embedder.embed([unit, long_text])
    assert float(vectors[0] @ vectors[1]) == pytest.approx(1.0, abs=1e-5)


def test_concurrent_threads_embed_identically() -> None:
    embedder = WordLlamaEmbedder()
    results: list[np.ndarray] = []
    lock = threading.Lock()

    def work() -> None:
        vector = embedder.embed_sync([RELATED_A])
        with lock:
            results.append(vector)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8
    for vector in results[1:]:
        np.testing.assert_array_equal(vector, results[0])


async def test_a_single_string_is_refused() -> None:
    with pytest.raises(TypeError, match="sequence of strings"):
        await WordLlamaEmbedder().embed(RELATED_A)
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        await WordLlamaEmbedder().embed(["ok", 3])  # type: ignore[list-item]


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


def test_make_embedder_picks_by_url() -> None:
    default = make_embedder(None, None, None)
    assert isinstance(default, WordLlamaEmbedder)
    remote = make_embedder("http://127.0.0.1:9/v1/", "nomic-embed-text", "k")
    assert isinstance(remote, OpenAIEmbedder)
    assert remote.name == "openai:nomic-embed-text"
    assert remote.url == "http://127.0.0.1:9/v1"
    with pytest.raises(ValueError, match="model"):
        make_embedder("http://127.0.0.1:9/v1", None, None)


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
