"""Prometheus metrics: this replica's counters and histograms, and database-wide gauges."""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from credence.db import stats as db_stats
from credence.db.engine import Database
from credence.models.reasons import DUPLICATE_KINDS, Reason
from credence.observe import tracing

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)
# Database-wide figures are read at most this often, however many scrapers ask.
DATABASE_REFRESH_S = 5.0
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
RUN_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)
PENDING_AGE_BUCKETS = db_stats.PENDING_AGE_BUCKETS
# Off unless the app serving this process has CREDENCE_METRICS on: then nothing is counted.
_enabled = False


def enable(on: bool) -> None:
    """Count (or stop counting) in this process; the app sets it from CREDENCE_METRICS."""
    global _enabled
    _enabled = on


REQUESTS = Counter(
    "credence_http_requests",
    "HTTP requests answered, by method, route template and status.",
    ["method", "route", "status"],
    registry=REGISTRY,
)
REQUEST_SECONDS = Histogram(
    "credence_http_request_duration_seconds",
    "Time to answer an HTTP request, by method and route template.",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
PROPOSALS = Counter(
    "credence_proposals",
    "Proposals gated, by agent, gate verdict and whether they were submitted for review.",
    ["agent", "verdict", "outcome"],
    registry=REGISTRY,
)
DECISIONS = Counter(
    "credence_decisions",
    "Review decisions applied (keep, forget, edit, reopen), by agent and the gate's verdict.",
    ["agent", "action", "verdict"],
    registry=REGISTRY,
)
REFLECTION_RUNS = Counter(
    "credence_reflection_runs",
    "Reflection jobs finished, by outcome (succeeded, failed).",
    ["outcome"],
    registry=REGISTRY,
)
REFLECTION_SECONDS = Histogram(
    "credence_reflection_run_duration_seconds",
    "Wall time of a reflection job, by outcome.",
    ["outcome"],
    buckets=RUN_BUCKETS,
    registry=REGISTRY,
)
LLM_TOKENS = Counter(
    "credence_llm_tokens",
    "Tokens the reflection LLM reported using, by kind (input, output).",
    ["kind"],
    registry=REGISTRY,
)
PUSHES = Counter(
    "credence_push_sends",
    "Web Push deliveries attempted, by outcome.",
    ["outcome"],
    registry=REGISTRY,
)
CHANNEL_MESSAGES = Counter(
    "credence_channel_messages",
    "Messages to other notification channels (apprise), by outcome.",
    ["outcome"],
    registry=REGISTRY,
)
CONTEXT_READS = Counter(
    "credence_context_reads",
    "Memory context reads by agents, with or without a query.",
    ["query"],
    registry=REGISTRY,
)
CONTEXT_SECONDS = Histogram(
    "credence_context_read_duration_seconds",
    "Time to build a memory context block, with or without a query.",
    ["query"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)


# The gate's kinds that report a conflict with a kept belief or another proposal.
CONFLICT_KINDS = frozenset({"contradicts", "changes", "contradicts_in_batch", "unsettled"})


def gate_verdict(reasons: Iterable[Reason]) -> str:
    """One label for what the gate said: duplicate, contradiction, review or clean."""
    kinds = {reason.kind for reason in reasons}
    if kinds & DUPLICATE_KINDS:
        return "duplicate"
    if kinds & CONFLICT_KINDS:
        return "contradiction"
    return "review" if kinds else "clean"


@functools.lru_cache(maxsize=1024)
def _request_series(method: str, route: str, status: int) -> tuple[Any, Any]:
    # Route templates and statuses are few; looking a labelled child up costs more than the
    # count itself on the context path, so each (method, route, status) is looked up once.
    return REQUESTS.labels(method, route, str(status)), REQUEST_SECONDS.labels(method, route)


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    """Count one answered request and its latency."""
    if not _enabled:
        return
    count, latency = _request_series(method, route, status)
    count.inc()
    latency.observe(seconds)


def observe_proposal(agent_id: str, reasons: Sequence[Reason], submitted: bool) -> None:
    """Count one gated proposal."""
    if not _enabled:
        return
    outcome = "submitted" if submitted else "rejected"
    PROPOSALS.labels(agent_id, gate_verdict(reasons), outcome).inc()


def observe_decision(agent_id: str, action: str, reasons: Sequence[Reason]) -> None:
    """Count one applied decision (keep, forget, edit or reopen)."""
    DECISIONS.labels(agent_id, action, gate_verdict(reasons)).inc()


def observe_decided(action: str, agent_id: str, reasons: Sequence[Reason]) -> None:
    """Count a decision by its belief's agent and review reasons, and name the agent on the
    decision's span (traced whether or not metrics are on)."""
    if not _enabled and not tracing.recording():
        return
    tracing.annotate_store(agent_id)
    if _enabled:
        observe_decision(agent_id, action, reasons)


def observe_reflection(outcome: str, seconds: float) -> None:
    """Count one finished reflection job and its duration."""
    if not _enabled:
        return
    REFLECTION_RUNS.labels(outcome).inc()
    REFLECTION_SECONDS.labels(outcome).observe(seconds)


def observe_llm_tokens(input_tokens: int | None, output_tokens: int | None) -> None:
    """Add the tokens one LLM call reported."""
    if not _enabled:
        return
    if input_tokens:
        LLM_TOKENS.labels("input").inc(input_tokens)
    if output_tokens:
        LLM_TOKENS.labels("output").inc(output_tokens)


def observe_push(outcome: str) -> None:
    """Count one Web Push delivery attempt."""
    if not _enabled:
        return
    PUSHES.labels(outcome).inc()


def observe_channel(delivered: bool) -> None:
    """Count one message to a notification channel."""
    if not _enabled:
        return
    CHANNEL_MESSAGES.labels("delivered" if delivered else "failed").inc()


def observe_context(with_query: bool, seconds: float) -> None:
    """Count one context read and its latency."""
    if not _enabled:
        return
    label = "with" if with_query else "without"
    CONTEXT_READS.labels(label).inc()
    CONTEXT_SECONDS.labels(label).observe(seconds)


class DatabaseGauges(Collector):
    """Database-wide gauges, read from the database at most every DATABASE_REFRESH_S.

    Every replica reads the same figures, so a dashboard takes ``max`` (not ``sum``) of them.
    """

    def __init__(self, refresh_s: float = DATABASE_REFRESH_S) -> None:
        self.refresh_s = refresh_s
        self.snapshot: db_stats.Snapshot | None = None
        self._read_at = -float("inf")
        self._store: Database | None = None
        self.reads = 0  # how many times the database was read, for tests and benchmarks

    async def refresh(self, store: Database, now: datetime) -> None:
        """Read the figures again when the last read is older than ``refresh_s``."""
        if store is self._store and time.monotonic() - self._read_at < self.refresh_s:
            return
        # Marked first, so scrapes arriving during the read serve the previous snapshot.
        self._store, self._read_at = store, time.monotonic()
        self.snapshot = await store.read(lambda conn: db_stats.snapshot(conn, now))
        self.reads += 1

    def collect(self) -> Iterator[Any]:
        """The gauges of the last snapshot (none before the first read)."""
        snap = self.snapshot
        if snap is None:
            return
        beliefs = GaugeMetricFamily(
            "credence_beliefs", "Beliefs by agent and status.", labels=["agent", "status"]
        )
        for (agent, status), count in sorted(snap.beliefs.items()):
            beliefs.add_metric([agent, status], count)
        yield beliefs
        oldest = GaugeMetricFamily(
            "credence_pending_oldest_age_seconds",
            "Age of the oldest belief waiting for review, by agent.",
            labels=["agent"],
        )
        for agent, age in sorted(snap.oldest_pending_s.items()):
            oldest.add_metric([agent], age)
        yield oldest
        ages = HistogramMetricFamily(
            "credence_pending_age_seconds", "How long pending beliefs have been waiting."
        )
        cumulative = [
            (_bound(b), float(n)) for b, n in zip(PENDING_AGE_BUCKETS, snap.pending_le, strict=True)
        ]
        ages.add_metric(
            [], [*cumulative, ("+Inf", float(snap.pending_total))], sum_value=snap.pending_age_sum
        )
        yield ages
        depth = GaugeMetricFamily(
            "credence_outbox_depth", "Notifications waiting to be sent, by queue.", labels=["queue"]
        )
        lag = GaugeMetricFamily(
            "credence_outbox_lag_seconds",
            "How overdue the oldest due notification is, by queue (0 when none is due).",
            labels=["queue"],
        )
        for queue, (waiting, overdue) in sorted(snap.outbox.items()):
            depth.add_metric([queue], waiting)
            lag.add_metric([queue], overdue)
        yield depth
        yield lag

    def describe(self) -> Iterator[Any]:
        """Nothing up front: the families depend on the snapshot."""
        return iter(())


def _bound(seconds: float) -> str:
    return f"{seconds:g}"


class PoolGauges(Collector):
    """This replica's database connections: in use, idle, the most allowed, requests waiting."""

    def __init__(self) -> None:
        self.store: Database | None = None

    def collect(self) -> Iterator[Any]:
        """The pool figures of the store the app serves, when it is open."""
        stats = getattr(self.store, "pool_stats", None)
        if stats is None:
            return
        figures = stats()
        family = GaugeMetricFamily(
            "credence_db_pool_connections",
            "Database connections of this replica, by state (in_use, idle, max).",
            labels=["state"],
        )
        for state in ("in_use", "idle", "max"):
            family.add_metric([state], figures.get(state, 0))
        yield family
        yield GaugeMetricFamily(
            "credence_db_pool_waiting",
            "Units of work waiting for a database connection in this replica.",
            value=figures.get("waiting", 0),
        )

    def describe(self) -> Iterator[Any]:
        """Nothing up front: the pool appears once the store is open."""
        return iter(())


DATABASE = DatabaseGauges()
POOL = PoolGauges()
REGISTRY.register(DATABASE)
REGISTRY.register(POOL)


def render(store: Database) -> bytes:
    """The Prometheus text exposition of every metric, for the store this app serves."""
    POOL.store = store
    return generate_latest(REGISTRY)
