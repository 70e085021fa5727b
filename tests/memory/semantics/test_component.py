"""The Semantics component over the bundled sentence model and the loopback chat server."""

from __future__ import annotations

import json

import httpx
import numpy as np

from credence.memory.semantics.component import Semantics
from credence.memory.semantics.judge import LLMJudge
from credence.memory.semantics.model import MINILM_DIM, MiniLMEmbedder


async def test_relate_uses_the_model_for_closeness_and_structure_for_the_kind() -> None:
    semantics = Semantics(MiniLMEmbedder())
    vectors = await semantics.embed(["Use yarn for the frontend", "Use bun for the frontend"])
    assert vectors.shape == (2, MINILM_DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    change = await semantics.relate("Use yarn for the frontend", "Use bun for the frontend")
    assert (change.kind, change.contradiction) == ("contradiction", "value_change")
    assert [(c.old, c.new) for c in change.changes] == [("yarn", "bun")]
    same = await semantics.relate("Cache results for 90 minutes", "Cache results for 1.5 hours")
    assert same.kind == "duplicate"
    far = await semantics.relate("Water the plants on Wednesdays", "Rotate TLS certificates")
    assert far.kind == "unrelated"


async def test_only_unsettled_pairs_reach_the_judge(fake_llm) -> None:
    fake_llm.answer(json.dumps({"relation": "contradiction", "why": "opposite strictness"}))
    async with httpx.AsyncClient() as http:
        semantics = Semantics(MiniLMEmbedder(), LLMJudge(http, fake_llm.url, "m"))
        settled = await semantics.relate("Never deploy on Fridays", "Deploy on Fridays")
        unsettled = await semantics.relate(
            "Make the retry policy strict", "Make the retry policy permissive"
        )
    assert settled.contradiction == "polarity"
    assert unsettled.kind == "contradiction" and unsettled.evidence.startswith("LLM judge")
    assert fake_llm.calls == 1
