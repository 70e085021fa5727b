"""The bundled sentence model: pinned files, verified digests, offline loading, sane vectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import credence
from credence.embed import EmbeddingUnavailable
from credence.memory.semantics import model
from credence.memory.semantics.model import MINILM_DIM, MiniLMEmbedder, minilm_files

_OFFLINE_SCRIPT = textwrap.dedent(
    """
    import json, socket, sys

    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(repr(args[1:] or args))
        raise ConnectionRefusedError("network is forbidden in this test")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.getaddrinfo = refuse
    socket.create_connection = refuse

    from credence.memory.semantics.model import MiniLMEmbedder

    vectors = MiniLMEmbedder().embed_sync(sys.argv[1:])
    print(json.dumps({
        "attempts": attempts,
        "shape": list(vectors.shape),
        "norms": [float(n) for n in (vectors ** 2).sum(axis=1)],
        "cosine": (vectors @ vectors.T).tolist(),
    }))
    """
)


def _run_offline(args: list[str], home: Path) -> dict[str, Any]:
    package_root = Path(credence.__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["HOME"] = str(home)  # an empty home: no model cache can be found there
    env["PYTHONPATH"] = os.pathsep.join([str(package_root), env.get("PYTHONPATH", "")])
    completed = subprocess.run(
        [sys.executable, "-c", _OFFLINE_SCRIPT, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_model_runs_with_the_network_refused_and_an_empty_home(tmp_path: Path) -> None:
    texts = ["Ship the new build to the test environment", "Staging deploys need a canary", ""]
    result = _run_offline(texts, tmp_path)
    assert result["attempts"] == []
    assert result["shape"] == [3, MINILM_DIM]
    assert result["norms"][:2] == pytest.approx([1.0, 1.0], abs=1e-4)
    assert result["norms"][2] == 0.0  # a blank text is a zero row, not a vector of padding
    assert not any(tmp_path.iterdir()), "nothing may be cached into the home directory"


def test_files_are_the_pinned_ones() -> None:
    weights, tokenizer = minilm_files()
    assert weights.name == "model.onnx" and weights.stat().st_size == 22_928_619
    assert tokenizer.parent == Path(model.__file__).parent  # shipped inside credence itself


def test_a_changed_weights_file_is_refused_with_one_clear_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(model, "MINILM_SHA256", "0" * 64)
    refusal = r"model\.onnx has sha256 [0-9a-f]{64}, expected 0{64}"
    with pytest.raises(EmbeddingUnavailable, match=refusal):
        minilm_files()


def test_another_package_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model, "MINILM_VERSION", "0.0.1")
    with pytest.raises(EmbeddingUnavailable, match=r"pinned to 0\.0\.1"):
        minilm_files()


async def test_paraphrases_are_closer_than_look_alikes() -> None:
    vectors = await MiniLMEmbedder().embed(
        [
            "Ship the new build to the test environment",
            "Deploy the latest release to staging",
            "Ship the new sofa to the customer's home",
        ]
    )
    cosine = vectors @ vectors.T
    assert cosine[0, 1] > cosine[0, 2]


async def test_batches_match_single_calls_and_keep_their_order() -> None:
    texts = [f"rule number {i}: " + "word " * (i % 7) for i in range(70)]
    embedder = MiniLMEmbedder()
    together = await embedder.embed(texts)
    alone = np.vstack([embedder.embed_sync([text]) for text in texts[::9]])
    assert np.abs(together[::9] - alone).max() < 1e-4


async def test_embed_refuses_a_bare_string() -> None:
    with pytest.raises(TypeError):
        await MiniLMEmbedder().embed("not a list")  # type: ignore[arg-type]


def test_tokens_are_counted_with_the_bundled_wordpiece_tokenizer_untruncated() -> None:
    assert model.count_tokens("") == 0
    # WordPiece: uncased, a rare word in several pieces, punctuation its own token.
    assert model.count_tokens("Use PNPM.") == model.count_tokens("use pnpm .")
    assert model.count_tokens("unbelievably") > 1
    long_text = "deploy the billing service " * 200  # 800 words, past the model's 256
    assert model.count_tokens(long_text) == 200 * model.count_tokens("deploy the billing service")


_BLAS_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from threadpoolctl import threadpool_info
    from credence.services import open_services
    from credence.settings import Settings

    def blas_threads():
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    async def main():
        before = blas_threads()
        settings = Settings(data_dir=Path(sys.argv[1]), scheduler=False)
        async with open_services(settings, embedder=None):
            print(json.dumps({"before": before, "serving": blas_threads()}))

    asyncio.run(main())
    """
)


def test_services_multiply_matrices_on_one_blas_thread(tmp_path: Path) -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    completed = subprocess.run(
        [sys.executable, "-c", _BLAS_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    threads = json.loads(completed.stdout.strip().splitlines()[-1])
    assert threads["before"] == [2], "numpy's OpenBLAS should start with the threads it was given"
    assert threads["serving"] == [model.BLAS_THREADS] == [1]
