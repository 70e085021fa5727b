"""Confidence decay: a belief's confidence fades with the days since it last changed."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime

import msgspec

from credence.memory.semantics.gate_terms import EPSILON, LiveBelief


class Decayed(msgspec.Struct, frozen=True):
    """An active belief whose confidence has decayed by at least the report's threshold."""

    belief_id: str
    confidence: float
    decayed_confidence: float
    age_days: float


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
        if belief.confidence - decayed >= min_drop - EPSILON:
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
