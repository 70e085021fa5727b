"""Text embedders: the bundled WordLlama model by default, an OpenAI-compatible API as option."""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import httpx
import numpy as np

WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIM = 256
WORDLLAMA_NAME = f"wordllama-{WORDLLAMA_CONFIG}-{WORDLLAMA_DIM}"
_WORDLLAMA_TENSOR_KEY = "embedding.weight"

# Above these sizes the CPU work moves off the event loop; below them a thread hop costs more
# than the embedding itself.
INLINE_MAX_TEXTS = 64
INLINE_MAX_CHARS = 32_000

# Bounds the temporary (tokens x dim) gather per chunk; longer single texts use token counts.
_TOKEN_BUDGET = 65_536

_BLOB_DTYPE = np.dtype("<f4")


class EmbeddingUnavailable(RuntimeError):
    """The embedder could not produce vectors (service down, bad answer, model files missing)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows; an empty text may yield a zero row."""

    name: str
    dim: int

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), dtype float32."""
        ...


def _check_texts(texts: Sequence[str]) -> list[str]:
    # A bare string is a Sequence[str] too; embedding it character by character is never meant.
    if isinstance(texts, str | bytes) or not isinstance(texts, Sequence):
        raise TypeError("texts must be a sequence of strings, not a single string")
    checked = list(texts)
    for position, text in enumerate(checked):
        if not isinstance(text, str):
            raise TypeError(f"texts[{position}] must be a str, got {type(text).__name__}")
    return checked


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Scale each row to unit L2 norm in place (zero rows stay zero) and return the matrix."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


def to_blob(vec: np.ndarray | Sequence[float]) -> bytes:
    """Serialise a vector as little-endian float32 bytes for a SQLite BLOB column."""
    array = np.asarray(vec, dtype=np.float32)
    if array.ndim != 1:
        raise ValueError(f"to_blob expects one vector, got shape {array.shape}")
    return array.astype(_BLOB_DTYPE, copy=False).tobytes()


def wordllama_files() -> tuple[Path, Path]:
    """Locate the bundled weights and tokenizer config inside the installed wordllama package."""
    # find_spec locates the package without executing its __init__, which would configure the
    # root logger and import a downloader.
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingUnavailable("the wordllama package is not installed")
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    weights = package_dir / "weights" / f"{WORDLLAMA_CONFIG}_{WORDLLAMA_DIM}.safetensors"
    tokenizer = package_dir / "tokenizers" / f"{WORDLLAMA_CONFIG}_tokenizer_config.json"
    return weights, tokenizer


@functools.cache
def _bundled_tokenizer() -> Any:
    from tokenizers import Tokenizer

    _, config = wordllama_files()
    if not config.is_file():
        raise EmbeddingUnavailable(f"bundled tokenizer file missing: {config}")
    return Tokenizer.from_file(str(config))


def count_tokens(text: str) -> int:
    """Tokens in ``text`` under the tokenizer bundled with wordllama (offline, deterministic)."""
    return len(_bundled_tokenizer().encode(text, add_special_tokens=False).ids)


class _TokenAverager:
    """A static token-embedding table plus its tokenizer: the whole WordLlama inference."""

    def __init__(self, table: np.ndarray, tokenizer: Any) -> None:
        self.table = np.ascontiguousarray(table, dtype=np.float32)
        self.tokenizer = tokenizer
        self.vocab_size, self.dim = self.table.shape

    @classmethod
    def from_files(cls, weights: Path, tokenizer_config: Path) -> _TokenAverager:
        """Load both files from disk; nothing here can reach the network."""
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        for path in (weights, tokenizer_config):
            if not path.is_file():
                raise EmbeddingUnavailable(f"bundled embedding model file missing: {path}")
        tensors = load_file(str(weights))
        if _WORDLLAMA_TENSOR_KEY not in tensors:
            raise EmbeddingUnavailable(f"{weights} has no tensor {_WORDLLAMA_TENSOR_KEY!r}")
        return cls(tensors[_WORDLLAMA_TENSOR_KEY], Tokenizer.from_file(str(tokenizer_config)))

    def embed(self, texts: list[str]) -> np.ndarray:
        """Average-pool token embeddings per text and L2-normalise the rows."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows = [i for i, text in enumerate(texts) if text.strip()]
        if not rows:
            return out
        encodings = self.tokenizer.encode_batch([texts[i] for i in rows], add_special_tokens=False)
        token_ids = [np.asarray(encoding.ids, dtype=np.int64) for encoding in encodings]
        chunk_rows: list[int] = []
        chunk_ids: list[np.ndarray] = []
        chunk_tokens = 0
        for row, ids in zip(rows, token_ids, strict=True):
            if ids.size == 0:
                continue
            np.clip(ids, 0, self.vocab_size - 1, out=ids)
            if ids.size > _TOKEN_BUDGET:
                counts = np.bincount(ids, minlength=self.vocab_size).astype(np.float32)
                out[row] = (counts @ self.table) / ids.size
                continue
            if chunk_tokens + ids.size > _TOKEN_BUDGET:
                self._pool_into(out, chunk_rows, chunk_ids)
                chunk_rows, chunk_ids, chunk_tokens = [], [], 0
            chunk_rows.append(row)
            chunk_ids.append(ids)
            chunk_tokens += ids.size
        if chunk_rows:
            self._pool_into(out, chunk_rows, chunk_ids)
        return normalize_rows(out)

    def _pool_into(self, out: np.ndarray, rows: list[int], ids: list[np.ndarray]) -> None:
        lengths = np.fromiter((chunk.size for chunk in ids), dtype=np.int64, count=len(ids))
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        sums = np.add.reduceat(self.table[np.concatenate(ids)], starts, axis=0)
        out[rows] = sums / lengths[:, None].astype(np.float32)


_MODELS: dict[tuple[Path, Path], _TokenAverager] = {}
_MODELS_LOCK = threading.Lock()


def _shared_model(weights: Path, tokenizer_config: Path) -> _TokenAverager:
    key = (weights, tokenizer_config)
    model = _MODELS.get(key)
    if model is None:
        with _MODELS_LOCK:
            model = _MODELS.get(key)
            if model is None:
                model = _TokenAverager.from_files(weights, tokenizer_config)
                _MODELS[key] = model
    return model


class WordLlamaEmbedder:
    """The default embedder: wordllama's bundled 256-d l2_supercat model, fully offline.

    The model is loaded lazily on first use, once per process, and shared by all instances.
    """

    name: str = WORDLLAMA_NAME
    dim: int = WORDLLAMA_DIM

    def __init__(self) -> None:
        self._weights, self._tokenizer_config = wordllama_files()

    def load(self) -> None:
        """Load the model now (blocking) instead of on the first embed call."""
        model = _shared_model(self._weights, self._tokenizer_config)
        if model.dim != self.dim:
            raise EmbeddingUnavailable(f"bundled model has dim {model.dim}, expected {self.dim}")

    @property
    def loaded(self) -> bool:
        """Whether this process already holds the model in memory."""
        return (self._weights, self._tokenizer_config) in _MODELS

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """Embed on the calling thread; shape (len(texts), 256), rows L2-normalised."""
        checked = _check_texts(texts)
        self.load()
        return _shared_model(self._weights, self._tokenizer_config).embed(checked)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts; large batches and the first load run in a worker thread."""
        checked = _check_texts(texts)
        small = len(checked) <= INLINE_MAX_TEXTS and sum(map(len, checked)) <= INLINE_MAX_CHARS
        if small and self.loaded:
            return self.embed_sync(checked)
        return await asyncio.to_thread(self.embed_sync, checked)


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST {url}/embeddings`` endpoint (OpenAI, Ollama, vLLM, LiteLLM…).

    ``dim`` is 0 until the first answer unless given. Blank texts are not sent (the protocol
    rejects empty input) and come back as zero rows.
    """

    def __init__(
        self,
        url: str,
        model: str,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float | httpx.Timeout = 30.0,
        *,
        dim: int | None = None,
        batch_size: int = 256,
    ) -> None:
        if not url:
            raise ValueError("embedding url is required")
        if not model:
            raise ValueError("embedding model is required")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.url = url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.dim = dim or 0
        self._api_key = api_key
        self._client = client
        self._timeout = timeout
        self._batch_size = batch_size

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(url={self.url!r}, model={self.model!r}, dim={self.dim})"

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts remotely; raises EmbeddingUnavailable on any transport or protocol fault."""
        checked = _check_texts(texts)
        rows = [i for i, text in enumerate(checked) if text.strip()]
        vectors: list[np.ndarray] = []
        if rows:
            if self._client is not None:
                vectors = await self._embed_rows(self._client, checked, rows)
            else:
                async with httpx.AsyncClient(timeout=self._timeout) as client:
                    vectors = await self._embed_rows(client, checked, rows)
        out = np.zeros((len(checked), self.dim), dtype=np.float32)
        for batch_rows, batch in zip(_batches(rows, self._batch_size), vectors, strict=True):
            out[batch_rows] = batch
        return normalize_rows(out)

    async def _embed_rows(
        self, client: httpx.AsyncClient, texts: list[str], rows: list[int]
    ) -> list[np.ndarray]:
        results = []
        for batch_rows in _batches(rows, self._batch_size):
            results.append(await self._request(client, [texts[i] for i in batch_rows]))
        return results

    async def _request(self, client: httpx.AsyncClient, inputs: list[str]) -> np.ndarray:
        endpoint = f"{self.url}/embeddings"
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            response = await client.post(
                endpoint,
                json={"model": self.model, "input": inputs},
                headers=headers,
                timeout=self._timeout,
            )
        except httpx.TimeoutException as exc:
            raise EmbeddingUnavailable(f"embedding service at {endpoint} timed out") from exc
        except httpx.HTTPError as exc:
            raise EmbeddingUnavailable(
                f"embedding service at {endpoint} unreachable: {type(exc).__name__}: {exc}"
            ) from exc
        if response.status_code >= 400:
            snippet = " ".join(response.text[:200].split())
            raise EmbeddingUnavailable(
                f"embedding service at {endpoint} answered HTTP {response.status_code}: {snippet}"
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise EmbeddingUnavailable(
                f"embedding service at {endpoint} answered something that is not JSON"
            ) from exc
        return self._parse(payload, len(inputs), endpoint)

    def _parse(self, payload: Any, expected: int, endpoint: str) -> np.ndarray:
        def malformed(reason: str) -> EmbeddingUnavailable:
            return EmbeddingUnavailable(f"malformed answer from {endpoint}: {reason}")

        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise malformed("no 'data' list")
        if len(data) != expected:
            raise malformed(f"{len(data)} embeddings for {expected} inputs")
        by_index: dict[int, list[Any]] = {}
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            embedding = item.get("embedding") if isinstance(item, dict) else None
            if type(index) is not int or not 0 <= index < expected or index in by_index:
                raise malformed(f"bad or repeated index {index!r}")
            if not isinstance(embedding, list) or not embedding:
                raise malformed(f"item {index} has no embedding list")
            if not all(type(x) in (int, float) and math.isfinite(x) for x in embedding):
                raise malformed(f"item {index} holds values that are not finite numbers")
            by_index[index] = embedding
        widths = {len(vector) for vector in by_index.values()}
        if len(widths) != 1:
            raise malformed(f"embeddings of differing lengths {sorted(widths)}")
        width = widths.pop()
        if self.dim and width != self.dim:
            raise malformed(f"embedding length {width}, expected {self.dim}")
        self.dim = width
        return np.asarray([by_index[i] for i in range(expected)], dtype=np.float32)


def _batches(rows: list[int], size: int) -> list[list[int]]:
    return [rows[start : start + size] for start in range(0, len(rows), size)]


def make_embedder(
    url: str | None,
    model: str | None,
    api_key: str | None,
    client: httpx.AsyncClient | None = None,
) -> Embedder:
    """The configured embedder: OpenAI-compatible when ``url`` is set, else the bundled model."""
    if url is None or not url.strip():
        return WordLlamaEmbedder()
    if not model:
        raise ValueError("an embedding url needs an embedding model name")
    return OpenAIEmbedder(url, model, api_key, client)
