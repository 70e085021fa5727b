"""Reading a Prometheus text exposition into samples, for tests and benchmarks."""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse_samples(text: str) -> Samples:
    """Every sample of an exposition, keyed by (sample name, its labels)."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """One sample's value (0 when absent: a counter never incremented is not exported)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of a sample over every series whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, found), v in samples.items() if n == name and wanted <= found)


def delta(
    after: Samples, before: Mapping[tuple[str, frozenset[tuple[str, str]]], float]
) -> Samples:
    """What changed between two scrapes of one process (counters and histograms)."""
    return {key: v - before.get(key, 0.0) for key, v in after.items()}
