"""The deterministic gate: duplicates, contradictions, op routing, provenance and decay."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime

import msgspec
import numpy

from credence.reflection.text import analyse, jaccard

OPS = ("add", "strengthen", "weaken", "forget", "supersede")
# Ops that bring new wording into memory; the others restate their target's content.
CONTENT_OPS = frozenset({"add", "supersede"})
LIVE_STATUSES = ("pending", "active", "forgotten")
CONTRADICTION_STATUSES = frozenset({"pending", "active"})

JACCARD_THRESHOLD = 0.4
# Tuned on the bundled wordllama 256-d model, where a sentence and its negation score 0.67-0.92
# and same-topic but compatible lessons ("Never deploy on Fridays" / "Deploy on Mondays")
# mostly stay below 0.65. Other embedders may want other values: every figure is a parameter.
COSINE_THRESHOLD = 0.70
COSINE_JACCARD_FLOOR = 0.2
STRONG_COSINE = 0.85
MAX_CONTRADICTIONS = 3

SAFE = "safe"
NEEDS_REVIEW = "needs_review"
DUPLICATE = "duplicate"

# Which of several beliefs sharing one duplicate key is named: the one a reviewer most needs
# to see (active memory first, then what is already waiting, then past refusals).
_STATUS_RANK = {"active": 0, "pending": 1, "forgotten": 2}
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
    op: str
    belief: str
    confidence: float
    rationale: str
    source_episodes: tuple[str, ...]
    target_belief_id: str | None = None


class GateResult(msgspec.Struct, frozen=True):
    """The gate's verdict on one proposal: ``safe``, ``needs_review`` or ``duplicate``."""

    index: int
    gate: str
    reasons: tuple[str, ...]


class Decayed(msgspec.Struct, frozen=True):
    """An active belief whose confidence has decayed by at least the report's threshold."""

    belief_id: str
    confidence: float
    decayed_confidence: float
    age_days: float


class _Candidates:
    """Contradiction candidates of one polarity: prefix postings plus an embedding matrix."""

    __slots__ = ("embedded_rows", "matrix", "postings")

    def __init__(self) -> None:
        self.postings: dict[str, list[int]] = {}
        self.embedded_rows: list[int] = []
        self.matrix: numpy.ndarray | None = None


class BeliefIndex:
    """Live beliefs prepared once so that gating a batch never compares every pair.

    Duplicates are a dictionary lookup on the normalised text. Contradictions use the
    prefix filter of set-similarity joins: with tokens in a fixed global order (rarest first),
    two sets with Jaccard ≥ t must share a token within the first ``n - ceil(t·n) + 1`` tokens
    of each. Each pending/active belief is therefore posted only under its rare prefix tokens,
    split by polarity, so a probe reads a few short posting lists and verifies the survivors.
    """

    __slots__ = (
        "_by_key",
        "_by_polarity",
        "_dimension",
        "_document_frequency",
        "_ids",
        "_negative",
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
        self._by_polarity = (_Candidates(), _Candidates())
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
                embeddings.append(belief.embedding)
        index._by_key = {
            key: tuple(belief_id for _, _, belief_id in sorted(entries))
            for key, entries in keyed.items()
        }
        frequency = index._document_frequency
        for tokens in index._tokens:
            for token in tokens:
                frequency[token] = frequency.get(token, 0) + 1
        for position, tokens in enumerate(index._tokens):
            side = index._by_polarity[index._negative[position]]
            for token in index._prefix(tokens):
                side.postings.setdefault(token, []).append(position)
        index._stack_embeddings(embeddings)
        return index

    def _stack_embeddings(self, embeddings: list[numpy.ndarray | None]) -> None:
        for negative in (False, True):
            side = self._by_polarity[negative]
            rows = [
                position
                for position, vector in enumerate(embeddings)
                if vector is not None and self._negative[position] == negative
            ]
            if not rows:
                continue
            matrix = numpy.stack([numpy.asarray(embeddings[row]).ravel() for row in rows])
            side.embedded_rows = rows
            side.matrix = _unit_rows(matrix)
            if self._dimension is None:
                self._dimension = side.matrix.shape[1]
            elif side.matrix.shape[1] != self._dimension:
                raise ValueError("belief embeddings have different dimensions")

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
        postings = self._by_polarity[not negative].postings
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

    def semantic_conflicts(
        self,
        tokens: frozenset[str],
        similarities: numpy.ndarray,
        negative: bool,
        *,
        cosine_threshold: float,
        cosine_jaccard_floor: float,
        strong_cosine: float,
    ) -> dict[str, float]:
        """Return {belief id: cosine} for opposite-polarity beliefs the embedding rule flags.

        ``similarities`` holds the proposal's cosine against :meth:`opposite_matrix` rows.
        """
        side = self._by_polarity[not negative]
        hits = {}
        for row in numpy.flatnonzero(similarities >= cosine_threshold - _COSINE_TOLERANCE):
            position = side.embedded_rows[row]
            cosine = float(similarities[row])
            overlap = jaccard(tokens, self._tokens[position])
            if (
                cosine >= strong_cosine - _COSINE_TOLERANCE
                or overlap >= cosine_jaccard_floor - _EPSILON
            ):
                hits[self._ids[position]] = cosine
        return hits

    def opposite_matrix(self, negative: bool) -> numpy.ndarray | None:
        """Return the embedding matrix of beliefs whose polarity differs from ``negative``."""
        return self._by_polarity[not negative].matrix


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
) -> list[GateResult]:
    """Gate each proposal; results come back in the order of ``proposals``.

    Reasons accumulate, in this order: ``duplicate_of:<id>`` (an add or supersede whose text
    equals a live belief's after normalisation; strengthen/weaken/forget restate their target
    and are exempt), ``duplicate_in_batch:<index>`` (same text, op and target as an earlier
    proposal), ``op:<op>`` (every op but add), ``missing_target``,
    ``unknown_target:<id>``, ``target_forgotten:<id>``, ``contradicts:<id>`` (at most three,
    strongest first, pending/active beliefs only, never the op's own target),
    ``contradicts_in_batch:<index>`` and ``untrusted_source``. Any duplicate reason makes the
    gate ``duplicate``; any other reason ``needs_review``; no reason at all is ``safe``.

    Contradiction needs opposite polarity (a negation marker in exactly one of the two
    texts: two negative lessons agree) and then either the lexical floor, Jaccard ≥ 0.4 over
    content tokens, or — when ``proposal_embeddings`` (rows aligned with ``proposals``) and
    belief embeddings are both present — a paraphrase signal: cosine ≥ ``cosine_threshold``
    with at least ``cosine_jaccard_floor`` token overlap, or cosine ≥ ``strong_cosine`` alone.
    Negation barely moves a sentence embedding, so a high cosine between texts of opposite
    polarity means "same topic, opposite advice" even when the wording differs ("Do not use
    tabs for indentation" / "Indent with tabs" overlap only 1/3). The small overlap floor keeps
    compatible same-topic advice ("Never deploy on Fridays" / "Deploy on Mondays") unflagged.
    """
    vectors = _proposal_vectors(proposals, index, proposal_embeddings)
    analysed = [analyse(proposal.belief) for proposal in proposals]
    similarities = _similarities(analysed, index, vectors)
    first_seen: dict[tuple[str, str, str | None], int] = {}
    results = []
    for position, proposal in enumerate(proposals):
        key, tokens, negative = analysed[position]
        reasons: list[str] = []
        own_target = proposal.target_belief_id if proposal.op != "add" else None
        if proposal.op in CONTENT_OPS:
            duplicates = [bid for bid in index.duplicates_of(key) if bid != own_target]
            if duplicates:
                reasons.append(f"duplicate_of:{duplicates[0]}")
        batch_key = (key, proposal.op, proposal.target_belief_id)
        if key and batch_key in first_seen:
            reasons.append(f"duplicate_in_batch:{first_seen[batch_key]}")
        elif key:
            first_seen[batch_key] = proposal.index
        is_duplicate = bool(reasons)
        reasons.extend(_routing_reasons(proposal, index))
        if not is_duplicate:
            conflicts = index.lexical_conflicts(tokens, negative)
            if similarities[position] is not None:
                semantic = index.semantic_conflicts(
                    tokens,
                    similarities[position],
                    negative,
                    cosine_threshold=cosine_threshold,
                    cosine_jaccard_floor=cosine_jaccard_floor,
                    strong_cosine=strong_cosine,
                )
                for belief_id, cosine in semantic.items():
                    conflicts[belief_id] = max(conflicts.get(belief_id, 0.0), cosine)
            conflicts.pop(own_target, None)
            ranked = sorted(conflicts.items(), key=lambda item: (-item[1], item[0]))
            reasons.extend(f"contradicts:{bid}" for bid, _ in ranked[:MAX_CONTRADICTIONS])
            reasons.extend(
                _batch_conflicts(
                    position,
                    proposals,
                    analysed,
                    vectors,
                    index.jaccard_threshold,
                    cosine_threshold,
                    cosine_jaccard_floor,
                    strong_cosine,
                )
            )
        if any(source in untrusted_episode_ids for source in proposal.source_episodes):
            reasons.append("untrusted_source")
        verdict = DUPLICATE if is_duplicate else NEEDS_REVIEW if reasons else SAFE
        results.append(GateResult(index=proposal.index, gate=verdict, reasons=tuple(reasons)))
    return results


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


def _similarities(
    analysed: list[tuple[str, frozenset[str], bool]],
    index: BeliefIndex,
    vectors: numpy.ndarray | None,
) -> list[numpy.ndarray | None]:
    similarities: list[numpy.ndarray | None] = [None] * len(analysed)
    if vectors is None:
        return similarities
    for position, (_, _, negative) in enumerate(analysed):
        matrix = index.opposite_matrix(negative)
        if matrix is not None:
            # einsum runs on this thread. BLAS (``@``) is faster on an idle machine, but its
            # worker threads stall when the other cores are busy: on a loaded two-core host
            # its p90 went from 1 ms to 10-20 ms, while this stays at about 0.25 ms per row.
            similarities[position] = numpy.einsum("ij,j->i", matrix, vectors[position])
    return similarities


def _batch_conflicts(
    position: int,
    proposals: Sequence[Proposal],
    analysed: list[tuple[str, frozenset[str], bool]],
    vectors: numpy.ndarray | None,
    jaccard_threshold: float,
    cosine_threshold: float,
    cosine_jaccard_floor: float,
    strong_cosine: float,
) -> list[str]:
    _, tokens, negative = analysed[position]
    reasons = []
    for earlier in range(position):
        _, other_tokens, other_negative = analysed[earlier]
        if other_negative == negative or not tokens or not other_tokens:
            continue
        overlap = jaccard(tokens, other_tokens)
        conflict = overlap >= jaccard_threshold - _EPSILON
        if not conflict and vectors is not None:
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
