"""Tests for greedy cosine clustering."""

from __future__ import annotations

import numpy
import pytest

from credence.reflection.cluster import greedy_clusters


def rows(*vectors: tuple[float, ...]) -> numpy.ndarray:
    matrix = numpy.asarray(vectors, dtype=numpy.float32)
    norms = numpy.linalg.norm(matrix, axis=1, keepdims=True)
    return numpy.divide(matrix, norms, out=numpy.zeros_like(matrix), where=norms > 0)


def test_similar_rows_group_and_dissimilar_ones_stay_apart() -> None:
    embeddings = rows((1, 0, 0), (0, 1, 0), (0.95, 0.05, 0), (0.05, 0.98, 0), (0, 0, 1))
    assert greedy_clusters(embeddings) == [[0, 2], [1, 3], [4]]


def test_every_index_is_in_exactly_one_cluster() -> None:
    rng = numpy.random.default_rng(7)
    embeddings = rows(*rng.standard_normal((200, 8)))
    clusters = greedy_clusters(embeddings, threshold=0.3)
    members = sorted(index for cluster in clusters for index in cluster)
    assert members == list(range(200))
    assert 1 < len(clusters) < 200


def test_deterministic_and_ordered() -> None:
    rng = numpy.random.default_rng(11)
    embeddings = rows(*rng.standard_normal((60, 5)))
    first = greedy_clusters(embeddings, threshold=0.5)
    assert first == greedy_clusters(embeddings.copy(), threshold=0.5)
    assert [cluster[0] for cluster in first] == sorted(cluster[0] for cluster in first)
    assert all(cluster == sorted(cluster) for cluster in first)


def test_a_row_joins_the_closest_cluster() -> None:
    embeddings = rows((1, 0), (0, 1), (0.6, 0.8))
    assert greedy_clusters(embeddings, threshold=0.5) == [[0], [1, 2]]


def test_threshold_bounds() -> None:
    embeddings = rows((1, 0), (0.8, 0.6))  # cosine 0.8
    assert greedy_clusters(embeddings, threshold=0.8) == [[0, 1]]
    assert greedy_clusters(embeddings, threshold=0.81) == [[0], [1]]


def test_zero_and_non_finite_rows_stay_alone() -> None:
    embeddings = numpy.array([[0, 0], [1, 0], [numpy.nan, numpy.nan], [1, 0]], dtype=float)
    assert greedy_clusters(embeddings, threshold=-1.0) == [[0], [1, 3], [2]]


def test_rows_are_normalised_defensively() -> None:
    assert greedy_clusters(numpy.array([[10.0, 0.0], [0.5, 0.01]])) == [[0, 1]]


def test_empty_input_and_shape_errors() -> None:
    assert greedy_clusters(numpy.zeros((0, 4))) == []
    with pytest.raises(ValueError, match="2-D"):
        greedy_clusters(numpy.zeros(4))
