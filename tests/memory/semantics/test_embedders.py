"""The embedder factory: MiniLM offline by default, the OpenAI-compatible client when configured."""

from __future__ import annotations

import pytest

from credence.embed import OpenAIEmbedder
from credence.memory.semantics.embedders import make_embedder
from credence.memory.semantics.model import MINILM_DIM, MINILM_NAME, MiniLMEmbedder


def test_default_is_the_bundled_sentence_model() -> None:
    default = make_embedder(None, None, None)
    assert isinstance(default, MiniLMEmbedder)
    assert (default.name, default.dim) == (MINILM_NAME, MINILM_DIM)
    assert isinstance(make_embedder("  ", None, None), MiniLMEmbedder)


def test_a_url_picks_the_openai_compatible_client() -> None:
    remote = make_embedder("http://127.0.0.1:9/v1/", "nomic-embed-text", "k")
    assert isinstance(remote, OpenAIEmbedder)
    assert remote.name == "openai:nomic-embed-text"
    assert remote.url == "http://127.0.0.1:9/v1"


def test_a_url_without_a_model_is_refused() -> None:
    with pytest.raises(ValueError, match="model"):
        make_embedder("http://127.0.0.1:9/v1", None, None)
