"""The embedder factory: the bundled sentence model by default, or an OpenAI-compatible API."""

from __future__ import annotations

import httpx

from credence.embed import Embedder, OpenAIEmbedder
from credence.memory.semantics.model import MiniLMEmbedder


def make_embedder(
    url: str | None,
    model: str | None,
    api_key: str | None,
    client: httpx.AsyncClient | None = None,
) -> Embedder:
    """The configured embedder: OpenAI-compatible when ``url`` is set, else MiniLM (offline)."""
    if url is None or not url.strip():
        return MiniLMEmbedder()
    if not model:
        raise ValueError("an embedding url needs an embedding model name")
    return OpenAIEmbedder(url, model, api_key, client)
