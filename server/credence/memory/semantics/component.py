"""The one Semantics component: embed texts and relate pairs, with an optional LLM judge."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from credence.embed import Embedder
from credence.memory.semantics.judge import LLMJudge
from credence.memory.semantics.relation import Relation, relate


class Semantics:
    """``embed(texts)`` through the configured embedder and ``relate(a, b)`` by structure.

    The embedder decides only how close two texts are; :func:`relate` decides what kind of
    relation they have. With a judge, pairs structure cannot settle are asked about once
    (see :class:`~credence.memory.semantics.judge.LLMJudge`); the judge only ever adds a flag.
    """

    def __init__(self, embedder: Embedder, judge: LLMJudge | None = None) -> None:
        self.embedder = embedder
        self.judge = judge

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit rows for ``texts`` from the configured embedder."""
        return np.asarray(await self.embedder.embed(texts))

    async def relate(self, old: str, new: str) -> Relation:
        """How ``new`` relates to ``old``: duplicate, contradiction (with its kind and any
        change), refinement, compatible or unrelated, with a score and evidence."""
        vectors = await self.embed([old, new])
        cosine = float(vectors[0] @ vectors[1])
        relation = relate(old, new, cosine)
        if self.judge is not None and not relation.settled:
            return await self.judge.settle(old, new, relation)
        return relation
