"""Text embedders: the Embedder protocol, vector helpers and an OpenAI-compatible API client."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import httpx
import numpy as np

from credence.tls import tls_context

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


def check_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list, refusing a bare string or any item that is not a str."""
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
        checked = check_texts(texts)
        rows = [i for i, text in enumerate(checked) if text.strip()]
        vectors: list[np.ndarray] = []
        if rows:
            if self._client is not None:
                vectors = await self._embed_rows(self._client, checked, rows)
            else:
                async with httpx.AsyncClient(timeout=self._timeout, verify=tls_context()) as client:
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
