"""Greedy, deterministic cosine clustering of embedding rows."""

from __future__ import annotations

import numpy

# Embeddings arrive as float32: a cosine "equal" to the threshold may miss it by rounding.
_COSINE_TOLERANCE = 1e-6


def greedy_clusters(embeddings: numpy.ndarray, threshold: float = 0.75) -> list[list[int]]:
    """Cluster rows by cosine similarity; each row index lands in exactly one cluster.

    Rows are visited in order. A row joins the existing cluster whose centroid is most similar
    (the earliest cluster on a tie) when that cosine is ≥ ``threshold``, and otherwise starts a
    new cluster. Rows are re-normalised defensively; an all-zero or non-finite row matches
    nothing and stays alone. Clusters come back ordered by their first member, members
    ascending, so the same input always yields the same output.
    """
    matrix = numpy.asarray(embeddings, dtype=numpy.float64)
    if matrix.ndim != 2:
        raise ValueError("embeddings must be a 2-D array (rows × dimensions)")
    if matrix.shape[0] == 0:
        return []
    matrix = numpy.where(numpy.isfinite(matrix), matrix, 0.0)
    norms = numpy.linalg.norm(matrix, axis=1, keepdims=True)
    units = numpy.divide(matrix, norms, out=numpy.zeros_like(matrix), where=norms > 0)
    members: list[list[int]] = []
    sums = numpy.zeros_like(units)
    centroids = numpy.zeros_like(units)
    # A cluster seeded by a zero row has no direction, so nothing may join it.
    joinable = numpy.zeros(units.shape[0], dtype=bool)
    for row, vector in enumerate(units):
        count = len(members)
        if count and norms[row, 0] > 0:
            similarities = numpy.where(joinable[:count], centroids[:count] @ vector, -numpy.inf)
            best = int(numpy.argmax(similarities))
            if similarities[best] >= threshold - _COSINE_TOLERANCE:
                members[best].append(row)
                sums[best] += vector
                length = numpy.linalg.norm(sums[best])
                centroids[best] = sums[best] / length if length > 0 else 0.0
                continue
        members.append([row])
        sums[count] = vector
        centroids[count] = vector
        joinable[count] = norms[row, 0] > 0
    return members
