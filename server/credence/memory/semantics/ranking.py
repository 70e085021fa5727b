"""Ranking notes for a query: sentence-model cosine first, then BM25 and confidence, fused."""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from credence.memory.semantics.tokens import NEGATION_WORDS, STOP_WORDS

_TERM = re.compile(r"[^\W_]+", re.UNICODE)
BM25_K1 = 1.2
BM25_B = 0.75
QUERY_CACHE_ENTRIES = 4096


def terms(text: str) -> list[str]:
    """Content terms of ``text``: casefolded words and numbers, stop words out, plurals folded."""
    found = []
    for raw in _TERM.findall(text):
        term = raw.casefold()
        if term in STOP_WORDS or term in NEGATION_WORDS:
            continue
        if len(term) > 3 and term.endswith("s") and not term.endswith("ss"):
            term = term[:-1]
        found.append(term)
    return found


class KeywordIndex:
    """BM25 over a fixed list of texts, held in memory (built once per cached set of notes)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.count = len(texts)
        postings: dict[str, dict[int, int]] = {}
        lengths = np.zeros(self.count, dtype=np.float32)
        for position, text in enumerate(texts):
            found = terms(text)
            lengths[position] = len(found)
            for term in found:
                row = postings.setdefault(term, {})
                row[position] = row.get(position, 0) + 1
        average = float(lengths.mean()) if self.count else 0.0
        self._norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths / max(average, 1e-9))
        self._postings = {
            term: (
                np.fromiter(row.keys(), dtype=np.int64, count=len(row)),
                np.fromiter(row.values(), dtype=np.float32, count=len(row)),
            )
            for term, row in postings.items()
        }

    def nbytes(self) -> int:
        """Approximate bytes held: posting arrays, length norms, terms and dict slots."""
        arrays = sum(p.nbytes + f.nbytes + 2 * 112 for p, f in self._postings.values())
        terms = sum(49 + len(term) + 100 for term in self._postings)
        return int(arrays + terms + self._norm.nbytes)

    def idf(self, term: str) -> float:
        """BM25's inverse document frequency (never negative)."""
        posting = self._postings.get(term)
        frequency = 0 if posting is None else len(posting[0])
        return math.log(1 + (self.count - frequency + 0.5) / (frequency + 0.5))

    def scores(self, query: str) -> np.ndarray:
        """BM25 of every text for the query's distinct terms (zeros when none matches)."""
        out = np.zeros(self.count, dtype=np.float32)
        for term in dict.fromkeys(terms(query)):
            posting = self._postings.get(term)
            if posting is None:
                continue
            positions, tf = posting
            out[positions] += self.idf(term) * tf * (BM25_K1 + 1) / (tf + self._norm[positions])
        return out


# Centering shrinks with few notes: the mean of two notes is no "common direction".
CENTERING_NOTES = 50


class DenseIndex:
    """Cosine between a query and every note, raw and centred on the notes' mean.

    Sentence vectors of one agent's notes share a common direction (same domain, same
    phrasing habits) that makes every note look alike; ranking by cosine after removing a
    share α = n / (n + 50) of their mean lets the meaning that differs decide (on the
    development set: 71 % → 79 % of answers served, with no loss elsewhere). Both cosines
    come from one product of the query with the notes' matrix plus per-note terms computed
    once, so no second matrix is kept.
    """

    def __init__(self, columns: np.ndarray) -> None:
        self.columns = np.ascontiguousarray(columns, dtype=np.float32)  # (dim, n), unit columns
        count = self.columns.shape[1]
        self.alpha = count / (count + CENTERING_NOTES) if count else 0.0
        self.mean = (
            self.columns.mean(axis=1) if count else np.zeros(self.columns.shape[0], np.float32)
        ).astype(np.float32)
        a = self.alpha
        self._mean_sq = float(self.mean @ self.mean)
        note_mean = self.mean @ self.columns
        norms_sq = (self.columns * self.columns).sum(axis=0)
        # |note − α·mean|, kept finite for a note without a vector (its raw cosine is 0, below
        # any floor, so it is never chosen).
        note_norm = np.sqrt(np.maximum(norms_sq - 2 * a * note_mean + a * a * self._mean_sq, 1e-12))
        self._inverse_norm = (1.0 / note_norm).astype(np.float32)
        # (q − α·m)·(c − α·m) = q·c − α·(m·c) − α·(q·m) + α²·(m·m): the per-note term is kept.
        self._shift = (a * note_mean).astype(np.float32)

    def nbytes(self) -> int:
        """Bytes of the arrays held (the matrix and the per-note terms)."""
        return int(
            self.columns.nbytes + self._inverse_norm.nbytes + self._shift.nbytes + self.mean.nbytes
        )

    def scores(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(raw cosine, centred cosine) of every note for one unit query vector (dim,).

        One product with the matrix; the centring is two scalars and in-place passes.
        """
        a = self.alpha
        raw = query @ self.columns
        query_mean = float(query @ self.mean)
        query_sq = float(query @ query)
        query_norm = math.sqrt(max(query_sq - 2 * a * query_mean + a * a * self._mean_sq, 1e-12))
        centred = raw - self._shift
        centred -= a * query_mean - a * a * self._mean_sq
        centred *= self._inverse_norm
        centred *= 1.0 / query_norm
        return raw, centred


@dataclass(frozen=True)
class Weights:
    """How much keyword and confidence add to cosine, and the cosine a chosen note needs.

    Chosen on the tuning split of the development sets (benchmarks/bench_retrieval.py reports
    the held-back split and the frozen set): neither signal raised the answers served above
    centred cosine alone on either split, and weights of 0.1 or more lowered it (look-alikes
    share the task's words), so by default both are off and meaning alone ranks; BM25 still
    chooses when the embedder is down, and both are reported in each note's ``why``.
    """

    keyword: float = 0.0
    confidence: float = 0.0
    floor: float = 0.2


DEFAULT_WEIGHTS = Weights()
DENSE_ONLY = Weights(keyword=0.0, confidence=0.0)


@dataclass(frozen=True, slots=True)
class Choice:
    """One chosen note: its position and the signals that chose it.

    ``keyword`` and ``confidence`` are None when the ranking did not compute them (their
    weight is 0 and cosines ranked): only what is used is computed per query.
    """

    position: int
    score: float
    dense: float | None
    keyword: float | None
    confidence: float | None


def choose(
    dense: np.ndarray | None,
    keyword: np.ndarray | None,
    confidence: np.ndarray | None,
    limit: int,
    weights: Weights = DEFAULT_WEIGHTS,
    centred: np.ndarray | None = None,
) -> list[Choice]:
    """The ``limit`` best notes for a query, best first (ties to the smaller position).

    ``dense`` holds each note's cosine to the query (None when the embedder is down: keyword
    alone then chooses); ``keyword`` its BM25, scaled here to 0..1 by the best; ``confidence``
    its decayed confidence; ``centred`` the cosines after centring (DenseIndex), which rank
    when given. ``keyword`` and ``confidence`` may be None when cosines are given and their
    weight is 0 (see ``signals_needed``). A note is eligible when its raw cosine reaches the
    floor (or, without cosines, when a keyword matches), so an unrelated note is never chosen.
    """
    present = dense if dense is not None else keyword
    if present is None or len(present) == 0 or limit < 1:
        return []
    scaled = None
    if keyword is not None:
        best = float(keyword.max())
        scaled = keyword / best if best > 0 else keyword
    if dense is None:
        assert scaled is not None
        eligible = scaled > 0
        score = scaled
    else:
        eligible = dense >= weights.floor
        score = dense if centred is None else centred
        if scaled is not None and weights.keyword:
            score = score + weights.keyword * scaled
    if confidence is not None and weights.confidence:
        score = score + weights.confidence * confidence
    order = _top(np.flatnonzero(eligible), score, limit)

    # Python floats, one conversion per signal: what the why reports, to 4 decimals.
    def rounded(values: np.ndarray | None) -> list[float] | list[None]:
        if values is None:
            return [None] * len(order)
        return [round(v, 4) for v in values[order].tolist()]

    return [
        Choice(p, s, d, k, c)
        for p, s, d, k, c in zip(
            order.tolist(),
            [round(v, 4) for v in score[order].tolist()],
            rounded(dense),
            rounded(scaled),
            rounded(confidence),
            strict=True,
        )
    ]


def _top(candidates: np.ndarray, score: np.ndarray, limit: int) -> np.ndarray:
    """The ``limit`` candidates of highest score, best first, equal scores in position order.

    A partition finds the ``limit``-th best score, so only the few above it are sorted.
    """
    if candidates.size > limit:
        values = score[candidates]
        threshold = np.partition(values, values.size - limit)[values.size - limit]
        # Every candidate above the threshold, then those equal to it by position.
        candidates = np.concatenate(
            (candidates[values > threshold], candidates[values == threshold])
        )
    values = score[candidates]
    # Sort by descending score, then ascending position (lexsort: last key is primary).
    return candidates[np.lexsort((candidates, -values))][:limit]


def signals_needed(weights: Weights, has_cosines: bool) -> tuple[bool, bool]:
    """(keyword needed, confidence needed) for a query's ranking under ``weights``.

    With cosines, a signal of weight 0 changes nothing and is not computed; without them
    (embedder down) keywords choose.
    """
    return (not has_cosines or weights.keyword != 0, weights.confidence != 0)


def decayed(
    confidence: np.ndarray, anchors: np.ndarray, now: float, lambda_per_day: float
) -> np.ndarray:
    """``confidence × exp(−λ·days since anchor)`` for arrays (anchors and now in epoch
    seconds; a future anchor counts as age 0, λ ≤ 0 as no decay), as float32."""
    if lambda_per_day <= 0:
        return confidence.astype(np.float32)
    days = np.maximum(now - anchors, 0.0) / 86400.0
    return (confidence * np.exp(-lambda_per_day * days)).astype(np.float32)


class QueryVectors:
    """An LRU of query embeddings by text: agents repeat their task queries."""

    def __init__(self, max_entries: int = QUERY_CACHE_ENTRIES) -> None:
        self.max_entries = max_entries
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, model: str, text: str) -> np.ndarray | None:
        """The cached (1, dim) vector of ``text`` under ``model``, or None."""
        key = (model, text)
        found = self._vectors.get(key)
        if found is None:
            self.misses += 1
            return None
        self._vectors.move_to_end(key)
        self.hits += 1
        return found

    def put(self, model: str, text: str, vector: np.ndarray) -> None:
        """Remember a vector, evicting the least recently used beyond ``max_entries``."""
        self._vectors[(model, text)] = vector
        self._vectors.move_to_end((model, text))
        while len(self._vectors) > self.max_entries:
            self._vectors.popitem(last=False)

    def __len__(self) -> int:
        return len(self._vectors)
