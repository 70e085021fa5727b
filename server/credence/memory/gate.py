"""The deterministic gate: duplicates, contradictions, op routing, provenance and decay."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Final

import msgspec
import numpy

from credence.memory.text import (
    Change,
    Statement,
    analyse,
    holds_value_change,
    is_negation,
    is_paraphrase,
    jaccard,
    shares_core,
    statement,
    value_changes,
)
from credence.models import BeliefOp, GateVerdict

OPS = ("add", "strengthen", "weaken", "forget", "supersede")
# Ops that bring new wording into memory; the others restate their target's content.
CONTENT_OPS = frozenset({"add", "supersede"})
CONTRADICTION_STATUSES = frozenset({"pending", "active"})

JACCARD_THRESHOLD = 0.4
# Tuned on the bundled wordllama 256-d model, where a sentence and its negation score 0.67-0.92
# and same-topic but compatible lessons ("Never deploy on Fridays" / "Deploy on Mondays")
# mostly stay below 0.65. Other embedders may want other values: every figure is a parameter.
COSINE_THRESHOLD = 0.70
COSINE_JACCARD_FLOOR = 0.2
STRONG_COSINE = 0.85
MAX_CONTRADICTIONS = 3
# Same polarity and this close in the bundled model's space: the same lesson in other words.
NEAR_DUPLICATE_COSINE = 0.92
# Canonical tokens either side may own and still be a paraphrase or value change of the other
# (a value change rewrites at most two short slots; a paraphrase or negation owns none).
MAX_STRUCTURAL_DIFFERENCE = 2
MAX_CHANGE_CHARS = 60
UNSOURCED = "unsourced"

SAFE: Final = "safe"
NEEDS_REVIEW: Final = "needs_review"
DUPLICATE: Final = "duplicate"

# Which of several beliefs sharing one duplicate key is named: the one a reviewer most needs
# to see (active memory first, then what is already waiting, then past refusals).
_STATUS_RANK = {"active": 0, "pending": 1, "forgotten": 2}
# A restated past refusal matters most: it is named before a restated live belief.
_NEAR_RANK = {"forgotten": 0, "active": 1, "pending": 2}
# Above any Jaccard or cosine, so value changes are named first.
_VALUE_CHANGE_SCORE = 2.0
_EPSILON = 1e-9
# Cosines come from float32 products, so "at the threshold" may miss it by rounding.
_COSINE_TOLERANCE = 1e-6


class LiveBelief(msgspec.Struct, frozen=True):
    """A belief as the gate sees it. ``embedding`` is L2-normalised float32 when present.

    Equality compares the embedding array too, so compare ids rather than whole structs.
    """

    id: str
    content: str
    status: str
    confidence: float
    created_at: datetime
    updated_at: datetime
    embedding: numpy.ndarray | None = None


class Proposal(msgspec.Struct, frozen=True):
    """One diff proposed by a reflector; ``index`` is its position in the reflector's answer."""

    index: int
    op: BeliefOp
    belief: str
    confidence: float
    rationale: str
    source_episodes: tuple[str, ...]
    target_belief_id: str | None = None


class GateResult(msgspec.Struct, frozen=True):
    """The gate's verdict on one proposal: ``safe``, ``needs_review`` or ``duplicate``."""

    index: int
    gate: GateVerdict
    reasons: tuple[str, ...]


class Decayed(msgspec.Struct, frozen=True):
    """An active belief whose confidence has decayed by at least the report's threshold."""

    belief_id: str
    confidence: float
    decayed_confidence: float
    age_days: float


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
        "_live_tokens",
        "_matrix",
        "_matrix_rows",
        "_negative",
        "_postings",
        "_row_contradicts",
        "_row_negative",
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
        self._live_tokens: list[frozenset[str]] = []
        self._live_negative = numpy.zeros(0, dtype=bool)
        self._live_sizes = numpy.zeros(0, dtype=numpy.int64)
        self._statements: list[Statement] = []
        self._canonical: dict[str, numpy.ndarray] = {}
        self._matrix: numpy.ndarray | None = None
        self._matrix_rows = numpy.zeros(0, dtype=numpy.int64)
        self._row_negative = numpy.zeros(0, dtype=bool)
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
            if belief.status not in _STATUS_RANK:
                continue
            key, tokens, negative = analyse(belief.content)
            index._statuses[belief.id] = belief.status
            if key:
                keyed.setdefault(key, []).append(
                    (_STATUS_RANK[belief.status], belief.created_at, belief.id)
                )
            if belief.status in CONTRADICTION_STATUSES and tokens:
                index._ids.append(belief.id)
                index._tokens.append(tokens)
                index._negative.append(negative)
            position = len(index._live_ids)
            shape = statement(belief.content)
            index._live_ids.append(belief.id)
            index._live_statuses.append(belief.status)
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
        self._matrix = _unit_rows(matrix)
        self._matrix_rows = numpy.asarray(rows, dtype=numpy.int64)
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
        required = math.ceil(self.jaccard_threshold * size - _EPSILON)
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
        threshold = self.jaccard_threshold - _EPSILON
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
        # einsum runs on this thread. BLAS (``@``) is faster on an idle machine, but its
        # worker threads stall when the other cores are busy: on a loaded two-core host
        # its p90 went from 1 ms to 10-20 ms, while this stays at about 0.25 ms per row.
        return numpy.einsum("ij,j->i", self._matrix, vector)

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
            (similarities >= cosine_threshold - _COSINE_TOLERANCE)
            & (self._row_negative != negative)
            & self._row_contradicts
        )
        for row in numpy.flatnonzero(close):
            position = int(self._matrix_rows[row])
            other = self._statements[position]
            cosine = float(similarities[row])
            overlap = jaccard(tokens, self._live_tokens[position])
            if (
                cosine >= strong_cosine - _COSINE_TOLERANCE
                or overlap >= cosine_jaccard_floor - _EPSILON
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
        close = (similarities >= threshold - _COSINE_TOLERANCE) & (self._row_negative == negative)
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


def _unit_rows(matrix: numpy.ndarray) -> numpy.ndarray:
    matrix = numpy.nan_to_num(numpy.asarray(matrix, dtype=numpy.float32))
    if matrix.ndim != 2:
        raise ValueError("embeddings must be a 2-D array")
    norms = numpy.linalg.norm(matrix, axis=1, keepdims=True)
    return numpy.divide(matrix, norms, out=numpy.zeros_like(matrix), where=norms > 0)


def gate(
    proposals: Sequence[Proposal],
    index: BeliefIndex,
    untrusted_episode_ids: AbstractSet[str],
    proposal_embeddings: numpy.ndarray | None = None,
    *,
    cosine_threshold: float = COSINE_THRESHOLD,
    cosine_jaccard_floor: float = COSINE_JACCARD_FLOOR,
    strong_cosine: float = STRONG_COSINE,
    near_duplicate_cosine: float = NEAR_DUPLICATE_COSINE,
) -> list[GateResult]:
    """Gate each proposal; results come back in the order of ``proposals``.

    Reasons accumulate, in this order: ``duplicate_of:<id>`` (an add or supersede whose text
    equals a live belief's after normalisation; strengthen/weaken/forget restate their target
    and are exempt), ``near_duplicate_of:<id>`` (an add or supersede that says what a live
    belief says: the same canonical tokens — numbers, units, comparatives, frequency adverbs,
    word and clause order normalised — or an embedding cosine ≥ ``near_duplicate_cosine`` with
    the same polarity, unless the two differ in a value slot; a restated forgotten belief is
    named first), ``duplicate_in_batch:<index>`` (the same against an earlier proposal),
    ``op:<op>`` (every op but add), ``missing_target``, ``unknown_target:<id>``,
    ``target_forgotten:<id>``, ``contradicts:<id>`` (at most three, value changes first then
    strongest first, pending/active beliefs only, never the op's own target), each value change
    followed by ``changes:<id>:<old>→<new>``, ``contradicts_in_batch:<index>``,
    ``untrusted_source`` and ``unsourced`` (no source episode). Any duplicate reason makes the
    gate ``duplicate``; any other reason ``needs_review``; no reason at all is ``safe``.

    A value change is a pair with one polarity that agrees except for short aligned spans
    holding values of one kind (:func:`~credence.memory.text.value_changes`): "Use yarn
    for the frontend" → "Use bun for the frontend". It is a contradiction, never a duplicate.

    A negation contradiction needs opposite polarity (a negation marker in exactly one of the
    two texts: two negative lessons agree) and then either the lexical floor, Jaccard ≥ 0.4
    over content tokens, or — when ``proposal_embeddings`` (rows aligned with ``proposals``)
    and belief embeddings are both present — a paraphrase signal: cosine ≥
    ``cosine_threshold`` with at least ``cosine_jaccard_floor`` token overlap, or cosine ≥
    ``strong_cosine``, and in both cases the same action on the same object
    (:func:`~credence.memory.text.shares_core`). Negation barely moves a sentence
    embedding, so a high cosine between texts of opposite polarity means "same topic, opposite
    advice" even when the wording differs ("Do not use tabs for indentation" / "Indent with
    tabs" overlap only 1/3); sharing one word is not enough ("Never approve a refund without a
    receipt" / "Receipts are stored in the billing folder").
    """
    vectors = _proposal_vectors(proposals, index, proposal_embeddings)
    analysed = [analyse(proposal.belief) for proposal in proposals]
    shapes = [statement(proposal.belief) for proposal in proposals]
    first_seen: dict[tuple[str, str, str | None], int] = {}
    results = []
    for position, proposal in enumerate(proposals):
        key, tokens, negative = analysed[position]
        shape = shapes[position]
        similarities = index.similarities(vectors[position]) if vectors is not None else None
        reasons: list[str] = []
        own_target = proposal.target_belief_id if proposal.op != "add" else None
        structural = [m for m in index.structural_matches(shape) if m[0] != own_target]
        if proposal.op in CONTENT_OPS:
            duplicates = [bid for bid in index.duplicates_of(key) if bid != own_target]
            if duplicates:
                reasons.append(f"duplicate_of:{duplicates[0]}")
            else:
                near = _near_duplicate(
                    shape,
                    negative,
                    structural,
                    similarities,
                    index,
                    own_target,
                    near_duplicate_cosine,
                )
                if near is not None:
                    reasons.append(f"near_duplicate_of:{near}")
        batch_key = (key, proposal.op, proposal.target_belief_id)
        if key and batch_key in first_seen:
            reasons.append(f"duplicate_in_batch:{first_seen[batch_key]}")
        elif key:
            first_seen[batch_key] = proposal.index
        if not reasons and proposal.op in CONTENT_OPS:
            earlier = _batch_duplicate(
                position, proposals, analysed, shapes, vectors, near_duplicate_cosine
            )
            if earlier is not None:
                reasons.append(f"duplicate_in_batch:{earlier}")
        is_duplicate = bool(reasons)
        reasons.extend(_routing_reasons(proposal, index))
        if not is_duplicate:
            reasons.extend(
                _memory_conflicts(
                    index,
                    shape,
                    tokens,
                    negative,
                    similarities,
                    structural,
                    own_target,
                    cosine_threshold=cosine_threshold,
                    cosine_jaccard_floor=cosine_jaccard_floor,
                    strong_cosine=strong_cosine,
                )
            )
            reasons.extend(
                _batch_conflicts(
                    position,
                    proposals,
                    analysed,
                    shapes,
                    vectors,
                    index.jaccard_threshold,
                    cosine_threshold,
                    cosine_jaccard_floor,
                    strong_cosine,
                )
            )
        if any(source in untrusted_episode_ids for source in proposal.source_episodes):
            reasons.append("untrusted_source")
        if not proposal.source_episodes:
            reasons.append(UNSOURCED)
        verdict: GateVerdict = DUPLICATE if is_duplicate else NEEDS_REVIEW if reasons else SAFE
        results.append(GateResult(index=proposal.index, gate=verdict, reasons=tuple(reasons)))
    return results


def _memory_conflicts(
    index: BeliefIndex,
    shape: Statement,
    tokens: frozenset[str],
    negative: bool,
    similarities: numpy.ndarray | None,
    structural: list[tuple[str, str, Statement]],
    own_target: str | None,
    *,
    cosine_threshold: float,
    cosine_jaccard_floor: float,
    strong_cosine: float,
) -> list[str]:
    """``contradicts:<id>`` reasons against live memory, each value change followed by its
    ``changes:`` reason: value changes first, then strongest first, never the own target."""
    conflicts = index.lexical_conflicts(tokens, negative)
    if similarities is not None:
        semantic = index.semantic_conflicts(
            shape,
            tokens,
            similarities,
            negative,
            cosine_threshold=cosine_threshold,
            cosine_jaccard_floor=cosine_jaccard_floor,
            strong_cosine=strong_cosine,
        )
        for belief_id, cosine in semantic.items():
            conflicts[belief_id] = max(conflicts.get(belief_id, 0.0), cosine)
    changes: dict[str, list[Change]] = {}
    for belief_id, status, other in structural:
        if status not in CONTRADICTION_STATUSES:
            continue
        found = value_changes(other, shape)
        if found:
            changes[belief_id] = found
            conflicts[belief_id] = _VALUE_CHANGE_SCORE
        elif is_negation(other, shape):
            conflicts[belief_id] = max(conflicts.get(belief_id, 0.0), 1.0)
    if own_target is not None:
        conflicts.pop(own_target, None)
    ranked = sorted(conflicts.items(), key=lambda item: (-item[1], item[0]))
    reasons = []
    for belief_id, _ in ranked[:MAX_CONTRADICTIONS]:
        reasons.append(f"contradicts:{belief_id}")
        reasons.extend(change_reason(belief_id, change) for change in changes.get(belief_id, ()))
    return reasons


def change_reason(belief_id: str, change: Change) -> str:
    """``changes:<id>:<old>→<new>``, each side cut to ``MAX_CHANGE_CHARS`` characters."""
    return f"changes:{belief_id}:{_cut(change.old)}\u2192{_cut(change.new)}"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHANGE_CHARS else text[: MAX_CHANGE_CHARS - 1] + "…"


def _near_duplicate(
    shape: Statement,
    negative: bool,
    structural: list[tuple[str, str, Statement]],
    similarities: numpy.ndarray | None,
    index: BeliefIndex,
    own_target: str | None,
    near_duplicate_cosine: float,
) -> str | None:
    """The live belief this proposal restates in other words, past refusals first."""
    found = [
        (_NEAR_RANK[status], 0.0, belief_id)
        for belief_id, status, other in structural
        if is_paraphrase(other, shape)
    ]
    if similarities is not None:
        found += [
            (_NEAR_RANK[status], -cosine, belief_id)
            for belief_id, status, cosine in index.near_duplicates(
                shape, similarities, negative, near_duplicate_cosine
            )
            if belief_id != own_target
        ]
    return min(found)[2] if found else None


def _batch_duplicate(
    position: int,
    proposals: Sequence[Proposal],
    analysed: list[tuple[str, frozenset[str], bool]],
    shapes: list[Statement],
    vectors: numpy.ndarray | None,
    near_duplicate_cosine: float,
) -> int | None:
    """The index of an earlier content proposal this one restates, or None."""
    shape, negative = shapes[position], analysed[position][2]
    for earlier in range(position):
        if proposals[earlier].op not in CONTENT_OPS:
            continue
        other = shapes[earlier]
        if is_paraphrase(other, shape):
            return proposals[earlier].index
        if (
            vectors is not None
            and analysed[earlier][2] == negative
            and other.negative == shape.negative
            and float(vectors[position] @ vectors[earlier])
            >= near_duplicate_cosine - _COSINE_TOLERANCE
            and not holds_value_change(other, shape)
        ):
            return proposals[earlier].index
    return None


def _routing_reasons(proposal: Proposal, index: BeliefIndex) -> list[str]:
    if proposal.op == "add":
        return []
    reasons = [f"op:{proposal.op}"]
    target = proposal.target_belief_id
    if not target:
        reasons.append("missing_target")
    elif (status := index.status_of(target)) is None:
        reasons.append(f"unknown_target:{target}")
    elif status == "forgotten":
        reasons.append(f"target_forgotten:{target}")
    return reasons


def _proposal_vectors(
    proposals: Sequence[Proposal], index: BeliefIndex, proposal_embeddings: numpy.ndarray | None
) -> numpy.ndarray | None:
    if proposal_embeddings is None:
        return None
    vectors = _unit_rows(proposal_embeddings)
    if vectors.shape[0] != len(proposals):
        raise ValueError(
            f"proposal_embeddings has {vectors.shape[0]} rows for {len(proposals)} proposals"
        )
    if index.dimension is not None and vectors.shape[1] != index.dimension:
        raise ValueError(
            f"proposal embeddings have dimension {vectors.shape[1]}, beliefs {index.dimension}"
        )
    return vectors


def _batch_conflicts(
    position: int,
    proposals: Sequence[Proposal],
    analysed: list[tuple[str, frozenset[str], bool]],
    shapes: list[Statement],
    vectors: numpy.ndarray | None,
    jaccard_threshold: float,
    cosine_threshold: float,
    cosine_jaccard_floor: float,
    strong_cosine: float,
) -> list[str]:
    _, tokens, negative = analysed[position]
    shape = shapes[position]
    reasons = []
    for earlier in range(position):
        _, other_tokens, other_negative = analysed[earlier]
        other = shapes[earlier]
        if value_changes(other, shape) or is_negation(other, shape):
            reasons.append(f"contradicts_in_batch:{proposals[earlier].index}")
            continue
        if other_negative == negative:
            continue
        if not tokens or not other_tokens:
            continue
        overlap = jaccard(tokens, other_tokens)
        conflict = overlap >= jaccard_threshold - _EPSILON
        if not conflict and vectors is not None and shares_core(shape, other):
            cosine = float(vectors[position] @ vectors[earlier])
            conflict = cosine >= strong_cosine - _COSINE_TOLERANCE or (
                cosine >= cosine_threshold - _COSINE_TOLERANCE
                and overlap >= cosine_jaccard_floor - _EPSILON
            )
        if conflict:
            reasons.append(f"contradicts_in_batch:{proposals[earlier].index}")
    return reasons


def age_days(anchor: datetime, now: datetime) -> float:
    """Return the days from ``anchor`` to ``now``; an anchor in the future counts as age 0."""
    return max(0.0, (now - anchor).total_seconds() / 86400.0)


def decayed_confidence(
    confidence: float, anchor: datetime, now: datetime, lambda_per_day: float
) -> float:
    """Return ``confidence × exp(−λ·age_days)``; λ ≤ 0 means no decay."""
    if lambda_per_day <= 0:
        return confidence
    return confidence * math.exp(-lambda_per_day * age_days(anchor, now))


def decay_report(
    beliefs: Iterable[LiveBelief],
    now: datetime,
    lambda_per_day: float = 0.02,
    min_drop: float = 0.05,
) -> list[Decayed]:
    """Report active beliefs whose confidence decayed by ≥ ``min_drop``, largest drop first.

    Age is measured from max(created_at, updated_at): any change to a belief renews it.
    λ ≤ 0 disables the report entirely.
    """
    if lambda_per_day <= 0:
        return []
    report = []
    for belief in beliefs:
        if belief.status != "active":
            continue
        anchor = max(belief.created_at, belief.updated_at)
        decayed = decayed_confidence(belief.confidence, anchor, now, lambda_per_day)
        if belief.confidence - decayed >= min_drop - _EPSILON:
            report.append(
                Decayed(
                    belief_id=belief.id,
                    confidence=belief.confidence,
                    decayed_confidence=decayed,
                    age_days=age_days(anchor, now),
                )
            )
    report.sort(key=lambda item: (item.decayed_confidence - item.confidence, item.belief_id))
    return report
