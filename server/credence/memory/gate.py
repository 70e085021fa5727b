"""The deterministic gate: duplicates, contradictions, op routing, provenance and decay."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import numpy

from credence.memory.belief_index import BeliefIndex, structural_candidates, unit_rows
from credence.memory.decay import Decayed, age_days, decay_report, decayed_confidence
from credence.memory.gate_terms import (
    CONTENT_OPS,
    CONTRADICTION_STATUSES,
    COSINE_JACCARD_FLOOR,
    COSINE_THRESHOLD,
    COSINE_TOLERANCE,
    DUPLICATE,
    EPSILON,
    JACCARD_THRESHOLD,
    MAX_CHANGE_CHARS,
    MAX_CONTRADICTIONS,
    MAX_STRUCTURAL_DIFFERENCE,
    NEAR_DUPLICATE_COSINE,
    NEAR_RANK,
    NEEDS_REVIEW,
    OPS,
    SAFE,
    STRONG_COSINE,
    UNSOURCED,
    VALUE_CHANGE_SCORE,
    GateResult,
    LiveBelief,
    Proposal,
)
from credence.memory.text import (
    Change,
    Statement,
    analyse,
    holds_value_change,
    is_negation,
    is_paraphrase,
    jaccard,
    shares_core,
    statement,
    value_changes,
)
from credence.models import GateVerdict

__all__ = [
    "CONTENT_OPS",
    "CONTRADICTION_STATUSES",
    "COSINE_JACCARD_FLOOR",
    "COSINE_THRESHOLD",
    "DUPLICATE",
    "JACCARD_THRESHOLD",
    "MAX_CHANGE_CHARS",
    "MAX_CONTRADICTIONS",
    "MAX_STRUCTURAL_DIFFERENCE",
    "NEAR_DUPLICATE_COSINE",
    "NEEDS_REVIEW",
    "OPS",
    "SAFE",
    "STRONG_COSINE",
    "UNSOURCED",
    "BeliefIndex",
    "Decayed",
    "GateResult",
    "LiveBelief",
    "Proposal",
    "age_days",
    "change_reason",
    "decay_report",
    "decayed_confidence",
    "gate",
    "structural_candidates",
]


def gate(
    proposals: Sequence[Proposal],
    index: BeliefIndex,
    untrusted_episode_ids: AbstractSet[str],
    proposal_embeddings: numpy.ndarray | None = None,
    *,
    cosine_threshold: float = COSINE_THRESHOLD,
    cosine_jaccard_floor: float = COSINE_JACCARD_FLOOR,
    strong_cosine: float = STRONG_COSINE,
    near_duplicate_cosine: float = NEAR_DUPLICATE_COSINE,
) -> list[GateResult]:
    """Gate each proposal; results come back in the order of ``proposals``.

    Reasons accumulate, in this order: ``duplicate_of:<id>`` (an add or supersede whose text
    equals a live belief's after normalisation; strengthen/weaken/forget restate their target
    and are exempt), ``near_duplicate_of:<id>`` (an add or supersede that says what a live
    belief says: the same canonical tokens — numbers, units, comparatives, frequency adverbs,
    word and clause order normalised — or an embedding cosine ≥ ``near_duplicate_cosine`` with
    the same polarity, unless the two differ in a value slot; a restated forgotten belief is
    named first), ``duplicate_in_batch:<index>`` (the same against an earlier proposal),
    ``op:<op>`` (every op but add), ``missing_target``, ``unknown_target:<id>``,
    ``target_forgotten:<id>``, ``contradicts:<id>`` (at most three, value changes first then
    strongest first, pending/active beliefs only, never the op's own target), each value change
    followed by ``changes:<id>:<old>→<new>``, ``contradicts_in_batch:<index>``,
    ``untrusted_source`` and ``unsourced`` (no source episode). Any duplicate reason makes the
    gate ``duplicate``; any other reason ``needs_review``; no reason at all is ``safe``.

    A value change is a pair with one polarity that agrees except for short aligned spans
    holding values of one kind (:func:`~credence.memory.text.value_changes`): "Use yarn
    for the frontend" → "Use bun for the frontend". It is a contradiction, never a duplicate.

    A negation contradiction needs opposite polarity (a negation marker in exactly one of the
    two texts: two negative lessons agree) and then either the lexical floor, Jaccard ≥ 0.4
    over content tokens, or — when ``proposal_embeddings`` (rows aligned with ``proposals``)
    and belief embeddings are both present — a paraphrase signal: cosine ≥
    ``cosine_threshold`` with at least ``cosine_jaccard_floor`` token overlap, or cosine ≥
    ``strong_cosine``, and in both cases the same action on the same object
    (:func:`~credence.memory.text.shares_core`). Negation barely moves a sentence
    embedding, so a high cosine between texts of opposite polarity means "same topic, opposite
    advice" even when the wording differs ("Do not use tabs for indentation" / "Indent with
    tabs" overlap only 1/3); sharing one word is not enough ("Never approve a refund without a
    receipt" / "Receipts are stored in the billing folder").
    """
    vectors = _proposal_vectors(proposals, index, proposal_embeddings)
    analysed = [analyse(proposal.belief) for proposal in proposals]
    shapes = [statement(proposal.belief) for proposal in proposals]
    first_seen: dict[tuple[str, str, str | None], int] = {}
    results = []
    for position, proposal in enumerate(proposals):
        key, tokens, negative = analysed[position]
        shape = shapes[position]
        similarities = index.similarities(vectors[position]) if vectors is not None else None
        reasons: list[str] = []
        own_target = proposal.target_belief_id if proposal.op != "add" else None
        structural = [m for m in index.structural_matches(shape) if m[0] != own_target]
        if proposal.op in CONTENT_OPS:
            duplicates = [bid for bid in index.duplicates_of(key) if bid != own_target]
            if duplicates:
                reasons.append(f"duplicate_of:{duplicates[0]}")
            else:
                near = _near_duplicate(
                    shape,
                    negative,
                    structural,
                    similarities,
                    index,
                    own_target,
                    near_duplicate_cosine,
                )
                if near is not None:
                    reasons.append(f"near_duplicate_of:{near}")
        batch_key = (key, proposal.op, proposal.target_belief_id)
        if key and batch_key in first_seen:
            reasons.append(f"duplicate_in_batch:{first_seen[batch_key]}")
        elif key:
            first_seen[batch_key] = proposal.index
        if not reasons and proposal.op in CONTENT_OPS:
            earlier = _batch_duplicate(
                position, proposals, analysed, shapes, vectors, near_duplicate_cosine
            )
            if earlier is not None:
                reasons.append(f"duplicate_in_batch:{earlier}")
        is_duplicate = bool(reasons)
        reasons.extend(_routing_reasons(proposal, index))
        if not is_duplicate:
            reasons.extend(
                _memory_conflicts(
                    index,
                    shape,
                    tokens,
                    negative,
                    similarities,
                    structural,
                    own_target,
                    cosine_threshold=cosine_threshold,
                    cosine_jaccard_floor=cosine_jaccard_floor,
                    strong_cosine=strong_cosine,
                )
            )
            reasons.extend(
                _batch_conflicts(
                    position,
                    proposals,
                    analysed,
                    shapes,
                    vectors,
                    index.jaccard_threshold,
                    cosine_threshold,
                    cosine_jaccard_floor,
                    strong_cosine,
                )
            )
        if any(source in untrusted_episode_ids for source in proposal.source_episodes):
            reasons.append("untrusted_source")
        if not proposal.source_episodes:
            reasons.append(UNSOURCED)
        verdict: GateVerdict = DUPLICATE if is_duplicate else NEEDS_REVIEW if reasons else SAFE
        results.append(GateResult(index=proposal.index, gate=verdict, reasons=tuple(reasons)))
    return results


def _memory_conflicts(
    index: BeliefIndex,
    shape: Statement,
    tokens: frozenset[str],
    negative: bool,
    similarities: numpy.ndarray | None,
    structural: list[tuple[str, str, Statement]],
    own_target: str | None,
    *,
    cosine_threshold: float,
    cosine_jaccard_floor: float,
    strong_cosine: float,
) -> list[str]:
    """``contradicts:<id>`` reasons against live memory, each value change followed by its
    ``changes:`` reason: value changes first, then strongest first, never the own target."""
    conflicts = index.lexical_conflicts(tokens, negative)
    if similarities is not None:
        semantic = index.semantic_conflicts(
            shape,
            tokens,
            similarities,
            negative,
            cosine_threshold=cosine_threshold,
            cosine_jaccard_floor=cosine_jaccard_floor,
            strong_cosine=strong_cosine,
        )
        for belief_id, cosine in semantic.items():
            conflicts[belief_id] = max(conflicts.get(belief_id, 0.0), cosine)
    changes: dict[str, list[Change]] = {}
    for belief_id, status, other in structural:
        if status not in CONTRADICTION_STATUSES:
            continue
        found = value_changes(other, shape)
        if found:
            changes[belief_id] = found
            conflicts[belief_id] = VALUE_CHANGE_SCORE
        elif is_negation(other, shape):
            conflicts[belief_id] = max(conflicts.get(belief_id, 0.0), 1.0)
    if own_target is not None:
        conflicts.pop(own_target, None)
    ranked = sorted(conflicts.items(), key=lambda item: (-item[1], item[0]))
    reasons = []
    for belief_id, _ in ranked[:MAX_CONTRADICTIONS]:
        reasons.append(f"contradicts:{belief_id}")
        reasons.extend(change_reason(belief_id, change) for change in changes.get(belief_id, ()))
    return reasons


def change_reason(belief_id: str, change: Change) -> str:
    """``changes:<id>:<old>→<new>``, each side cut to ``MAX_CHANGE_CHARS`` characters."""
    return f"changes:{belief_id}:{_cut(change.old)}\u2192{_cut(change.new)}"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHANGE_CHARS else text[: MAX_CHANGE_CHARS - 1] + "…"


def _near_duplicate(
    shape: Statement,
    negative: bool,
    structural: list[tuple[str, str, Statement]],
    similarities: numpy.ndarray | None,
    index: BeliefIndex,
    own_target: str | None,
    near_duplicate_cosine: float,
) -> str | None:
    """The live belief this proposal restates in other words, past refusals first."""
    found = [
        (NEAR_RANK[status], 0.0, belief_id)
        for belief_id, status, other in structural
        if is_paraphrase(other, shape)
    ]
    if similarities is not None:
        found += [
            (NEAR_RANK[status], -cosine, belief_id)
            for belief_id, status, cosine in index.near_duplicates(
                shape, similarities, negative, near_duplicate_cosine
            )
            if belief_id != own_target
        ]
    return min(found)[2] if found else None


def _batch_duplicate(
    position: int,
    proposals: Sequence[Proposal],
    analysed: list[tuple[str, frozenset[str], bool]],
    shapes: list[Statement],
    vectors: numpy.ndarray | None,
    near_duplicate_cosine: float,
) -> int | None:
    """The index of an earlier content proposal this one restates, or None."""
    shape, negative = shapes[position], analysed[position][2]
    for earlier in range(position):
        if proposals[earlier].op not in CONTENT_OPS:
            continue
        other = shapes[earlier]
        if is_paraphrase(other, shape):
            return proposals[earlier].index
        if (
            vectors is not None
            and analysed[earlier][2] == negative
            and other.negative == shape.negative
            and float(vectors[position] @ vectors[earlier])
            >= near_duplicate_cosine - COSINE_TOLERANCE
            and not holds_value_change(other, shape)
        ):
            return proposals[earlier].index
    return None


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
    vectors = unit_rows(proposal_embeddings)
    if vectors.shape[0] != len(proposals):
        raise ValueError(
            f"proposal_embeddings has {vectors.shape[0]} rows for {len(proposals)} proposals"
        )
    if index.dimension is not None and vectors.shape[1] != index.dimension:
        raise ValueError(
            f"proposal embeddings have dimension {vectors.shape[1]}, beliefs {index.dimension}"
        )
    return vectors


def _batch_conflicts(
    position: int,
    proposals: Sequence[Proposal],
    analysed: list[tuple[str, frozenset[str], bool]],
    shapes: list[Statement],
    vectors: numpy.ndarray | None,
    jaccard_threshold: float,
    cosine_threshold: float,
    cosine_jaccard_floor: float,
    strong_cosine: float,
) -> list[str]:
    _, tokens, negative = analysed[position]
    shape = shapes[position]
    reasons = []
    for earlier in range(position):
        _, other_tokens, other_negative = analysed[earlier]
        other = shapes[earlier]
        if value_changes(other, shape) or is_negation(other, shape):
            reasons.append(f"contradicts_in_batch:{proposals[earlier].index}")
            continue
        if other_negative == negative:
            continue
        if not tokens or not other_tokens:
            continue
        overlap = jaccard(tokens, other_tokens)
        conflict = overlap >= jaccard_threshold - EPSILON
        if not conflict and vectors is not None and shares_core(shape, other):
            cosine = float(vectors[position] @ vectors[earlier])
            conflict = cosine >= strong_cosine - COSINE_TOLERANCE or (
                cosine >= cosine_threshold - COSINE_TOLERANCE
                and overlap >= cosine_jaccard_floor - EPSILON
            )
        if conflict:
            reasons.append(f"contradicts_in_batch:{proposals[earlier].index}")
    return reasons
