"""The one shape every benchmark figure takes: median, p10–p90 spread, runs and target."""

from __future__ import annotations

import statistics


def figure(
    name: str,
    samples: list[float],
    target: float,
    *,
    unit: str = "ms",
    better: str = "lower",
) -> dict:
    """A figure row for the harness; a single sample is its own spread."""
    deciles = statistics.quantiles(samples, n=10) if len(samples) > 1 else samples * 9
    return {
        "name": name,
        "unit": unit,
        "median": statistics.median(samples),
        "p10": deciles[0],
        "p90": deciles[-1],
        "runs": len(samples),
        "target": target,
        "better": better,
    }
