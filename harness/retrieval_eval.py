"""Scores note retrieval on a labelled set with the service's own ranking, signal by signal.

A set is a memory (belief id, text, confidence) and tasks (query, id of the belief that answers
it), optionally per scope (an agent and role: the notes that query may see). The served notes
are what the context block serves: the chosen notes, then the most confident others up to
``limit`` — exactly ContextService's rule, run on ranking.choose without a database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from credence.memory.semantics.ranking import (
    DEFAULT_WEIGHTS,
    DENSE_ONLY,
    DenseIndex,
    KeywordIndex,
    Weights,
    choose,
)

Embed = Callable[[list[str]], np.ndarray]
SERVED = 10


@dataclass(frozen=True)
class Scope:
    """The notes one group of tasks may see, with their vectors and keyword index."""

    ids: list[str]
    confidence: np.ndarray
    vectors: np.ndarray
    keywords: KeywordIndex
    dense: DenseIndex


@dataclass(frozen=True)
class Prepared:
    """Tasks with their query vectors, each tied to a scope."""

    scopes: list[Scope]
    # (scope index, query, vector, answer id or ids: any of them served counts)
    tasks: list[tuple[int, str, np.ndarray, Any]]


def prepare(
    scoped: Sequence[tuple[Sequence[tuple[str, str, float]], Sequence[tuple[str, Any]]]],
    embed: Embed,
) -> Prepared:
    """Embed every scope's notes and tasks once."""
    scopes, tasks = [], []
    for memory, labelled in scoped:
        texts = [text for _, text, _ in memory]
        scope = Scope(
            [belief_id for belief_id, _, _ in memory],
            np.asarray([c for _, _, c in memory], dtype=np.float32),
            vectors := embed(texts),
            KeywordIndex(texts),
            DenseIndex(np.ascontiguousarray(vectors.T)),
        )
        scopes.append(scope)
        if labelled:
            vectors = embed([query for query, _ in labelled])
            tasks += [
                (len(scopes) - 1, query, vector, answer)
                for (query, answer), vector in zip(labelled, vectors, strict=True)
            ]
    return Prepared(scopes, tasks)


def served(scope: Scope, query: str, vector: np.ndarray | None, weights: Weights, limit: int):
    """The ids the context block would serve: chosen notes, then the most confident others."""
    dense = centred = None
    if vector is not None:
        dense, centred = scope.dense.scores(vector)
    keyword = scope.keywords.scores(query)
    chosen = [c.position for c in choose(dense, keyword, scope.confidence, limit, weights, centred)]
    taken = set(chosen)
    rest = [int(p) for p in np.argsort(-scope.confidence, kind="stable") if int(p) not in taken]
    return [scope.ids[p] for p in (chosen + rest)[:limit]]


def answer_served(
    prepared: Prepared,
    mode: str,
    weights: Weights = DEFAULT_WEIGHTS,
    limit: int = SERVED,
    split: str = "all",
) -> float:
    """The share of tasks whose answer is among the served notes.

    ``mode``: "dense" (cosine alone), "keyword" (BM25 alone) or "fused" (``weights``);
    ``split``: "all", "tune" (even-numbered tasks) or "held" (odd-numbered).
    """
    found = total = 0
    for index, (scope_index, query, vector, answer) in enumerate(prepared.tasks):
        if (split == "tune" and index % 2) or (split == "held" and not index % 2):
            continue
        scope = prepared.scopes[scope_index]
        if mode == "keyword":
            ids = served(scope, query, None, weights, limit)
        else:
            ids = served(scope, query, vector, DENSE_ONLY if mode == "dense" else weights, limit)
        answers = (answer,) if isinstance(answer, str) else answer
        found += any(a in ids for a in answers)
        total += 1
    return found / max(total, 1)
