"""Live beliefs indexed once, so gating a batch never compares every pair."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime

import numpy

from credence.memory.semantics.gate_terms import (
    CONTRADICTION_STATUSES,
    COSINE_TOLERANCE,
    EPSILON,
    JACCARD_THRESHOLD,
    MAX_STRUCTURAL_DIFFERENCE,
    STATUS_RANK,
    LiveBelief,
)
from credence.memory.semantics.statements import (
    Statement,
    holds_value_change,
    shares_core,
    statement,
)
from credence.memory.semantics.tokens import analyse, jaccard


class BeliefIndex:
    """Live beliefs prepared once so that gating a batch never compares every pair.

    Exact duplicates are a dictionary lookup on the normalised text. Contradictions use the
    prefix filter of set-similarity joins: with tokens in a fixed global order (rarest first),
    two sets with Jaccard ≥ t must share a token within the first ``n - ceil(t·n) + 1`` tokens
    of each. Each pending/active belief is therefore posted only under its rare prefix tokens,
    split by polarity, so a probe reads a few short posting lists and verifies the survivors.
    Paraphrases and value changes are found through postings of canonical content tokens
    (:func:`structural_candidates` says which overlaps can hold one), and near-duplicates
    through one embedding matrix over every live belief.
    """

    __slots__ = (
        "_by_key",
        "_canonical",
        "_dimension",
        "_document_frequency",
        "_ids",
        "_live_ids",
        "_live_negative",
        "_live_sizes",
        "_live_statuses",
        "_live_texts",
        "_live_tokens",
        "_matrix",
        "_matrix_rows",
        "_negative",
        "_postings",
        "_row_contradicts",
        "_row_negative",
        "_row_of",
        "_statements",
        "_statuses",
        "_tokens",
        "jaccard_threshold",
    )

    def __init__(self, jaccard_threshold: float) -> None:
        self.jaccard_threshold = jaccard_threshold
        self._by_key: dict[str, tuple[str, ...]] = {}
        self._statuses: dict[str, str] = {}
        self._ids: list[str] = []
        self._tokens: list[frozenset[str]] = []
        self._negative: list[bool] = []
        self._document_frequency: dict[str, int] = {}
        self._postings: tuple[dict[str, list[int]], dict[str, list[int]]] = ({}, {})
        self._live_ids: list[str] = []
        self._live_statuses: list[str] = []
        self._live_texts: list[str] = []
        self._live_tokens: list[frozenset[str]] = []
        self._live_negative = numpy.zeros(0, dtype=bool)
        self._live_sizes = numpy.zeros(0, dtype=numpy.int64)
        self._statements: list[Statement] = []
        self._canonical: dict[str, numpy.ndarray] = {}
        self._matrix: numpy.ndarray | None = None
        self._matrix_rows = numpy.zeros(0, dtype=numpy.int64)
        self._row_negative = numpy.zeros(0, dtype=bool)
        self._row_of: dict[int, int] = {}
        self._row_contradicts = numpy.zeros(0, dtype=bool)
        self._dimension: int | None = None

    @classmethod
    def build(
        cls, beliefs: Iterable[LiveBelief], *, jaccard_threshold: float = JACCARD_THRESHOLD
    ) -> BeliefIndex:
        """Index ``beliefs``; statuses outside pending/active/forgotten are ignored."""
        if not 0.0 < jaccard_threshold <= 1.0:
            raise ValueError("jaccard_threshold must be in (0, 1]")
        index = cls(jaccard_threshold)
        keyed: dict[str, list[tuple[int, datetime, str]]] = {}
        embeddings: list[numpy.ndarray | None] = []
        canonical: dict[str, list[int]] = {}
        negative_flags: list[bool] = []
        for belief in beliefs:
            if belief.status not in STATUS_RANK:
                continue
            key, tokens, negative = analyse(belief.content)
            index._statuses[belief.id] = belief.status
            if key:
                keyed.setdefault(key, []).append(
                    (STATUS_RANK[belief.status], belief.created_at, belief.id)
                )
            if belief.status in CONTRADICTION_STATUSES and tokens:
                index._ids.append(belief.id)
                index._tokens.append(tokens)
                index._negative.append(negative)
            position = len(index._live_ids)
            shape = statement(belief.content)
            index._live_ids.append(belief.id)
            index._live_statuses.append(belief.status)
            index._live_texts.append(belief.content)
            index._live_tokens.append(tokens)
            index._statements.append(shape)
            negative_flags.append(negative)
            embeddings.append(belief.embedding)
            for token in shape.content:
                canonical.setdefault(token, []).append(position)
        index._by_key = {
            key: tuple(belief_id for _, _, belief_id in sorted(entries))
            for key, entries in keyed.items()
        }
        frequency = index._document_frequency
        for tokens in index._tokens:
            for token in tokens:
                frequency[token] = frequency.get(token, 0) + 1
        for position, tokens in enumerate(index._tokens):
            side = index._postings[index._negative[position]]
            for token in index._prefix(tokens):
                side.setdefault(token, []).append(position)
        index._canonical = {
            token: numpy.asarray(rows, dtype=numpy.int64) for token, rows in canonical.items()
        }
        index._live_negative = numpy.asarray(negative_flags, dtype=bool)
        index._live_sizes = numpy.asarray(
            [len(shape.content) for shape in index._statements], dtype=numpy.int64
        )
        index._stack_embeddings(embeddings)
        return index

    def _stack_embeddings(self, embeddings: list[numpy.ndarray | None]) -> None:
        rows = [position for position, vector in enumerate(embeddings) if vector is not None]
        if not rows:
            return
        matrix = numpy.stack([numpy.asarray(embeddings[row]).ravel() for row in rows])
        self._matrix = unit_rows(matrix)
        self._matrix_rows = numpy.asarray(rows, dtype=numpy.int64)
        self._row_of = {position: row for row, position in enumerate(rows)}
        self._row_negative = self._live_negative[self._matrix_rows]
        self._row_contradicts = numpy.asarray(
            [self._live_statuses[row] in CONTRADICTION_STATUSES for row in rows], dtype=bool
        )
        self._dimension = self._matrix.shape[1]

    def __len__(self) -> int:
        """Return how many live beliefs were indexed."""
        return len(self._statuses)

    @property
    def dimension(self) -> int | None:
        """Return the embedding dimension of the indexed beliefs, or None without embeddings."""
        return self._dimension

    def status_of(self, belief_id: str) -> str | None:
        """Return the status of a live belief, or None when the id is not indexed."""
        return self._statuses.get(belief_id)

    def duplicates_of(self, key: str) -> tuple[str, ...]:
        """Return ids of live beliefs whose normalised content equals ``key`` (best first)."""
        return self._by_key.get(key, ()) if key else ()

    def _order(self, token: str) -> tuple[int, str]:
        return self._document_frequency.get(token, 0), token

    def _prefix(self, tokens: frozenset[str]) -> list[str]:
        size = len(tokens)
        required = math.ceil(self.jaccard_threshold * size - EPSILON)
        return sorted(tokens, key=self._order)[: size - required + 1]

    def lexical_conflicts(self, tokens: frozenset[str], negative: bool) -> dict[str, float]:
        """Return {belief id: Jaccard} for opposite-polarity beliefs at or above the threshold."""
        if not tokens:
            return {}
        postings = self._postings[not negative]
        seen: set[int] = set()
        for token in self._prefix(tokens):
            seen.update(postings.get(token, ()))
        hits = {}
        size = len(tokens)
        threshold = self.jaccard_threshold - EPSILON
        all_tokens = self._tokens
        for position in seen:
            other = all_tokens[position]
            shared = len(tokens & other)
            score = shared / (size + len(other) - shared)
            if score >= threshold:
                hits[self._ids[position]] = score
        return hits

    def similarities(self, vector: numpy.ndarray) -> numpy.ndarray | None:
        """Return the cosine of ``vector`` (unit length) with every embedded belief."""
        if self._matrix is None:
            return None
        # Meant to run with model.limit_blas_threads() in force, as services do.
        return self._matrix @ vector

    def semantic_conflicts(
        self,
        shape: Statement,
        tokens: frozenset[str],
        similarities: numpy.ndarray,
        negative: bool,
        *,
        cosine_threshold: float,
        cosine_jaccard_floor: float,
        strong_cosine: float,
    ) -> dict[str, float]:
        """Return {belief id: cosine} for opposite-polarity beliefs the embedding rule flags.

        ``similarities`` comes from :meth:`similarities`. Only pending and active beliefs
        about the same action on the same object (:func:`shares_core`) qualify.
        """
        hits = {}
        close = (
            (similarities >= cosine_threshold - COSINE_TOLERANCE)
            & (self._row_negative != negative)
            & self._row_contradicts
        )
        for row in numpy.flatnonzero(close):
            position = int(self._matrix_rows[row])
            other = self._statements[position]
            cosine = float(similarities[row])
            overlap = jaccard(tokens, self._live_tokens[position])
            if (
                cosine >= strong_cosine - COSINE_TOLERANCE
                or overlap >= cosine_jaccard_floor - EPSILON
            ) and shares_core(shape, other):
                hits[self._live_ids[position]] = cosine
        return hits

    def near_duplicates(
        self, shape: Statement, similarities: numpy.ndarray, negative: bool, threshold: float
    ) -> list[tuple[str, str, float]]:
        """Same-polarity beliefs at or above the near-duplicate cosine, best first.

        A pair whose aligned difference holds a value of one kind on both sides (a changed
        tool, number, time, …) is a value change, never a near-duplicate.
        """
        found = []
        close = (similarities >= threshold - COSINE_TOLERANCE) & (self._row_negative == negative)
        for row in numpy.flatnonzero(close):
            position = int(self._matrix_rows[row])
            other = self._statements[position]
            if other.negative != shape.negative:
                continue
            if holds_value_change(other, shape):
                continue
            found.append(
                (self._live_ids[position], self._live_statuses[position], float(similarities[row]))
            )
        found.sort(key=lambda hit: (-hit[2], hit[0]))
        return found

    def neighbours(
        self, similarities: numpy.ndarray, floor: float, limit: int
    ) -> list[tuple[int, float]]:
        """(position, cosine) of the ``limit`` closest embedded beliefs at or above ``floor``."""
        rows = numpy.flatnonzero(similarities >= floor - COSINE_TOLERANCE)
        if len(rows) > limit:
            # Partition first: a full sort of thousands of close rows costs milliseconds.
            scores = -similarities[rows]
            top = numpy.argpartition(scores, limit - 1)[:limit]
            rows = rows[top[numpy.lexsort((rows[top], scores[top]))]]
        return [(int(self._matrix_rows[row]), float(similarities[row])) for row in rows]

    def cosine_at(self, similarities: numpy.ndarray | None, position: int) -> float:
        """The cosine of the belief at ``position`` in ``similarities`` (0.0 if not embedded)."""
        if similarities is None:
            return 0.0
        row = self._row_of.get(position)
        return 0.0 if row is None else float(similarities[row])

    def content_of(self, belief_id: str) -> str | None:
        """The text of a live belief, or None when the id is not indexed."""
        for position, known in enumerate(self._live_ids):
            if known == belief_id:
                return self._live_texts[position]
        return None

    def live(self, position: int) -> tuple[str, str, str]:
        """(id, status, content) of the live belief at ``position``."""
        return (
            self._live_ids[position],
            self._live_statuses[position],
            self._live_texts[position],
        )

    def structural_positions(self, shape: Statement) -> list[int]:
        """Positions of beliefs that may restate or re-value ``shape`` (see below)."""
        content = shape.content
        arrays = [self._canonical[token] for token in content if token in self._canonical]
        if not arrays:
            return []
        shared = numpy.bincount(numpy.concatenate(arrays), minlength=len(self._live_ids))
        rows = numpy.flatnonzero(structural_candidates(shared, len(content), self._live_sizes))
        return [int(row) for row in rows]

    def structural_matches(self, shape: Statement) -> list[tuple[str, str, Statement]]:
        """Return (id, status, statement) of beliefs that may restate or re-value ``shape``.

        Which overlaps qualify is :func:`structural_candidates`'s rule.
        """
        content = shape.content
        arrays = [self._canonical[token] for token in content if token in self._canonical]
        if not arrays:
            return []
        shared = numpy.bincount(numpy.concatenate(arrays), minlength=len(self._live_ids))
        rows = numpy.flatnonzero(structural_candidates(shared, len(content), self._live_sizes))
        return [
            (self._live_ids[row], self._live_statuses[row], self._statements[row]) for row in rows
        ]


def structural_candidates(shared: numpy.ndarray, size: int, sizes: numpy.ndarray) -> numpy.ndarray:
    """Which beliefs (by shared canonical tokens and size) may be a paraphrase or value change.

    A paraphrase shares every canonical token; a value change differs in at most a few short
    spans around shared content. Either way the pair shares at least half of the larger side
    and neither side has more than ``MAX_STRUCTURAL_DIFFERENCE`` tokens of its own.
    """
    return (
        (shared > 0)
        & (2 * shared >= numpy.maximum(sizes, size))
        & (size - shared <= MAX_STRUCTURAL_DIFFERENCE)
        & (sizes - shared <= MAX_STRUCTURAL_DIFFERENCE)
    )


def unit_rows(matrix: numpy.ndarray) -> numpy.ndarray:
    matrix = numpy.nan_to_num(numpy.asarray(matrix, dtype=numpy.float32))
    if matrix.ndim != 2:
        raise ValueError("embeddings must be a 2-D array")
    norms = numpy.linalg.norm(matrix, axis=1, keepdims=True)
    return numpy.divide(matrix, norms, out=numpy.zeros_like(matrix), where=norms > 0)
