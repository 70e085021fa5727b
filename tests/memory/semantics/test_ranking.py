"""Note ranking for a query: BM25 in memory, cosine first, the floor, the query-vector LRU."""

from __future__ import annotations

import numpy as np
import pytest

from credence.memory.semantics.ranking import (
    DENSE_ONLY,
    KeywordIndex,
    QueryVectors,
    Weights,
    choose,
    decayed,
    terms,
)


def test_terms_drop_stop_words_and_fold_plurals() -> None:
    assert terms("The deploys of Billing, and the 3 retries") == [
        "deploy",
        "billing",
        "3",
        "retrie",
    ]


def test_bm25_prefers_rare_terms_and_shorter_texts() -> None:
    index = KeywordIndex(
        [
            "Priya owns the billing service",
            "the billing service runs nightly billing exports for billing",
            "backups run nightly",
            "",
        ]
    )
    scores = index.scores("who owns billing? ask Priya")
    assert scores[0] > scores[1] > 0 and scores[2] == 0 and scores[3] == 0
    assert index.idf("priya") > index.idf("billing")
    assert not index.scores("nothing matches here").any()
    assert KeywordIndex([]).scores("billing").shape == (0,)


def test_cosine_leads_and_keyword_only_breaks_near_ties() -> None:
    dense = np.array([0.30, 0.62, 0.60, 0.10], dtype=np.float32)
    keyword = np.array([9.0, 0.0, 3.0, 5.0], dtype=np.float32)
    confidence = np.array([0.99, 0.5, 0.5, 0.99], dtype=np.float32)
    chosen = choose(dense, keyword, confidence, 10, Weights(keyword=0.1, confidence=0.0))
    # A look-alike with many shared words (position 0) stays below the paraphrase.
    assert [c.position for c in chosen] == [2, 1, 0]
    assert chosen[0].dense == pytest.approx(0.6) and chosen[0].keyword == pytest.approx(1 / 3, 1e-3)
    # Below the floor nothing is chosen, however well the words match.
    assert 3 not in [c.position for c in chosen]
    assert [c.position for c in choose(dense, keyword, confidence, 1, DENSE_ONLY)] == [1]


def test_without_cosines_keyword_alone_chooses_and_ties_keep_position_order() -> None:
    keyword = np.array([0.0, 2.0, 2.0], dtype=np.float32)
    confidence = np.zeros(3, dtype=np.float32)
    chosen = choose(None, keyword, confidence, 5)
    assert [c.position for c in chosen] == [1, 2] and chosen[0].dense is None
    assert choose(None, np.zeros(2, np.float32), np.zeros(2, np.float32), 5) == []
    assert choose(np.ones(2, np.float32), np.zeros(2, np.float32), np.zeros(2), 0) == []


def test_query_vectors_are_an_lru_per_model() -> None:
    cache = QueryVectors(max_entries=2)
    one = np.ones((1, 3), dtype=np.float32)
    cache.put("m", "a", one)
    cache.put("m", "b", one * 2)
    assert cache.get("m", "a") is one  # a is now the most recent
    cache.put("m", "c", one * 3)
    assert cache.get("m", "b") is None and cache.get("other", "a") is None
    assert cache.get("m", "a") is one and len(cache) == 2
    assert (cache.hits, cache.misses) == (2, 2)


def test_decayed_matches_the_scalar_rule() -> None:
    from datetime import UTC, datetime, timedelta

    from credence.memory.semantics.decay import decayed_confidence

    now = datetime(2026, 12, 1, tzinfo=UTC)
    anchors = [now - timedelta(days=d) for d in (0, 10, 400)] + [now + timedelta(days=3)]
    confidence = np.array([0.9, 0.8, 0.7, 0.6])
    stamps = np.array([a.timestamp() for a in anchors])
    for lam in (0.02, 0.0):
        expected = [
            decayed_confidence(c, a, now, lam) for c, a in zip(confidence, anchors, strict=True)
        ]
        got = decayed(confidence, stamps, now.timestamp(), lam)
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_dense_index_cosines_equal_the_explicit_centring() -> None:
    from credence.memory.semantics.ranking import CENTERING_NOTES, DenseIndex

    rng = np.random.default_rng(7)
    columns = rng.standard_normal((16, 30)).astype(np.float32)
    columns /= np.linalg.norm(columns, axis=0)
    columns[:, 4] = 0.0  # a note without a vector
    query = rng.standard_normal(16).astype(np.float32)
    query /= np.linalg.norm(query)
    raw, centred = DenseIndex(columns).scores(query)
    alpha = 30 / (30 + CENTERING_NOTES)
    mean = columns.mean(axis=1)
    shifted = columns - alpha * mean[:, None]
    shifted_query = query - alpha * mean
    expected = (shifted_query @ shifted) / (
        np.linalg.norm(shifted, axis=0) * np.linalg.norm(shifted_query)
    )
    np.testing.assert_allclose(raw, query @ columns, atol=1e-6)
    np.testing.assert_allclose(centred, expected, atol=1e-5)
    assert raw[4] == 0.0 and centred.dtype == np.float32


def test_top_keeps_position_order_among_equal_scores_at_the_cut() -> None:
    dense = np.array([0.5, 0.9, 0.5, 0.5, 0.1, 0.5], dtype=np.float32)
    chosen = choose(dense, None, None, 3, DENSE_ONLY)
    assert [c.position for c in chosen] == [1, 0, 2]
    assert chosen[0].keyword is None and chosen[0].confidence is None
