"""The memory-quality report: what became of proposals, how fast, by whom, and what is unused."""

from __future__ import annotations

from msgspec import Struct

from credence.models.common import TimestampText


class OutcomeCounts(Struct, frozen=True, kw_only=True):
    """Proposals by what became of them (each counted once, by its state now)."""

    kept: int = 0
    edited: int = 0
    forgotten: int = 0
    superseded: int = 0
    pending: int = 0


class ReportDay(OutcomeCounts, frozen=True, kw_only=True):
    """The proposals made on one UTC day."""

    date: str


class GateFlags(Struct, frozen=True, kw_only=True):
    """How many of the period's proposals the gate flagged, and their share of all of them."""

    proposals: int
    duplicate: int
    contradiction: int
    duplicate_share: float
    contradiction_share: float


class DecisionTimes(Struct, frozen=True, kw_only=True):
    """Time from proposal to a reviewer's decision, over the period's decisions."""

    decisions: int
    median_s: float | None
    p90_s: float | None


class ReviewerCount(Struct, frozen=True, kw_only=True):
    """One reviewer (the key that decided) and how many decisions they made in the period."""

    reviewer: str
    decisions: int


class UnusedBelief(Struct, frozen=True, kw_only=True):
    """A kept belief the agent was never served in the period: re-confirm it or retire it."""

    belief_id: str
    content: str
    decided_at: TimestampText | None
    last_served_at: TimestampText | None


class FadingBelief(Struct, frozen=True, kw_only=True):
    """A kept belief whose confidence, decayed by age, fell below the threshold."""

    belief_id: str
    content: str
    confidence: float
    decayed_confidence: float


class MemoryReport(Struct, frozen=True, kw_only=True):
    """Whether an agent's memory is getting better: the period's proposals and what is idle."""

    agent_id: str
    days: int
    since: TimestampText
    generated_at: TimestampText
    threshold: float
    totals: OutcomeCounts
    per_day: list[ReportDay]
    flagged: GateFlags
    time_to_decision: DecisionTimes
    reviewers: list[ReviewerCount]
    unused_count: int
    unused: list[UnusedBelief]
    fading_count: int
    fading: list[FadingBelief]
