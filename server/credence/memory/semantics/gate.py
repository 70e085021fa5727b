"""The deterministic gate: duplicates, contradictions, op routing, provenance and decay."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import numpy

from credence.memory.semantics.belief_index import BeliefIndex, structural_candidates, unit_rows
from credence.memory.semantics.decay import Decayed, age_days, decay_report, decayed_confidence
from credence.memory.semantics.gate_terms import (
    CONTENT_OPS,
    CONTRADICTION_STATUSES,
    COSINE_JACCARD_FLOOR,
    COSINE_THRESHOLD,
    DUPLICATE,
    EPSILON,
    JACCARD_THRESHOLD,
    MAX_CHANGE_CHARS,
    MAX_CONTRADICTIONS,
    MAX_NEIGHBOURS,
    MAX_STRUCTURAL,
    MAX_STRUCTURAL_DIFFERENCE,
    NEAR_DUPLICATE_COSINE,
    NEAR_RANK,
    NEEDS_REVIEW,
    OPS,
    SAFE,
    STRONG_COSINE,
    UNSOURCED,
    UNSUPPORTED_LANGUAGE,
    VALUE_CHANGE_SCORE,
    GateResult,
    LiveBelief,
    Proposal,
)
from credence.memory.semantics.relation import Relation, is_english, relate
from credence.memory.semantics.statements import Change, statement
from credence.memory.semantics.tokens import analyse, jaccard
from credence.models import GateVerdict
from credence.models.reasons import Reason

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
    compare_cosine: float = COSINE_THRESHOLD,
) -> list[GateResult]:
    """Gate each proposal; results come back in the order of ``proposals``.

    Each proposal is compared with the live beliefs close enough to compare: those sharing its
    canonical content (structure) and its nearest neighbours by embedding cosine at or above
    ``compare_cosine`` (``proposal_embeddings``: rows aligned with ``proposals``). Each pair is
    judged by :func:`~credence.memory.semantics.relation.relate`: structure (value slots,
    polarity, antonyms, scope, swapped preferences, normalised numbers) decides the kind; the
    cosine decides only closeness. Nothing that differs in a value, polarity or scope is ever a
    duplicate.

    Reasons accumulate, in this order: ``duplicate_of:<id>`` (an add or supersede whose text
    equals a live belief's after normalisation; strengthen/weaken/forget restate their target
    and are exempt), ``near_duplicate_of:<id>`` (an add or supersede that says what a live
    belief says in other words; a restated forgotten belief is named first),
    ``duplicate_in_batch:<index>`` (the same against an earlier proposal), ``op:<op>`` (every op
    but add), ``missing_target``, ``unknown_target:<id>``, ``target_forgotten:<id>``,
    ``unsupported_language`` (not English: never a near-duplicate, always reviewed),
    ``contradicts:<id>`` (at most three, value changes first then strongest first,
    pending/active beliefs only, never the op's own target), each value change followed by
    ``changes:<id>:<old>→<new>``, ``unsettled:<id>`` (close, but structure could not decide),
    ``contradicts_in_batch:<index>``, ``untrusted_source`` and ``unsourced`` (no source
    episode). Any duplicate reason makes the gate ``duplicate``; any other reason
    ``needs_review``; no reason at all is ``safe``.

    The Jaccard floor stays underneath: opposite polarity and Jaccard ≥ 0.4 over content
    tokens is a contradiction whatever the embedding says.
    """
    vectors = _proposal_vectors(proposals, index, proposal_embeddings)
    analysed = [analyse(proposal.belief) for proposal in proposals]
    first_seen: dict[tuple[str, str, str | None], int] = {}
    results = []
    for position, proposal in enumerate(proposals):
        key, tokens, negative = analysed[position]
        similarities = index.similarities(vectors[position]) if vectors is not None else None
        reasons: list[Reason] = []
        own_target = proposal.target_belief_id if proposal.op != "add" else None
        english = is_english(proposal.belief)
        judged = _judge_memory(proposal.belief, index, similarities, own_target, compare_cosine)
        if proposal.op in CONTENT_OPS:
            duplicates = [bid for bid in index.duplicates_of(key) if bid != own_target]
            if duplicates:
                reasons.append(Reason("duplicate_of", duplicates[0]))
            elif english:
                near = [
                    (NEAR_RANK[status], -relation.score, belief_id)
                    for belief_id, status, relation in judged
                    if relation.kind == "duplicate"
                ]
                if near:
                    reasons.append(Reason("near_duplicate_of", min(near)[2]))
        batch_key = (key, proposal.op, proposal.target_belief_id)
        if key and batch_key in first_seen:
            reasons.append(Reason("duplicate_in_batch", str(first_seen[batch_key])))
        elif key:
            first_seen[batch_key] = proposal.index
        batch = _judge_batch(position, proposals, vectors)
        if not reasons and proposal.op in CONTENT_OPS:
            earlier = [index_ for index_, relation in batch if relation.kind == "duplicate"]
            if earlier:
                reasons.append(Reason("duplicate_in_batch", str(earlier[0])))
        is_duplicate = bool(reasons)
        reasons.extend(_routing_reasons(proposal, index))
        if not english:
            reasons.append(Reason(UNSUPPORTED_LANGUAGE))
        if not is_duplicate:
            reasons.extend(_memory_conflicts(index, tokens, negative, judged, own_target))
            reasons.extend(
                Reason("contradicts_in_batch", str(index_))
                for index_, relation in batch
                if relation.kind == "contradiction"
            )
        if any(source in untrusted_episode_ids for source in proposal.source_episodes):
            reasons.append(Reason("untrusted_source"))
        if not proposal.source_episodes:
            reasons.append(Reason(UNSOURCED))
        verdict: GateVerdict = DUPLICATE if is_duplicate else NEEDS_REVIEW if reasons else SAFE
        results.append(GateResult(index=proposal.index, gate=verdict, reasons=tuple(reasons)))
    return results


def _judge_memory(
    text: str,
    index: BeliefIndex,
    similarities: numpy.ndarray | None,
    own_target: str | None,
    compare_cosine: float,
) -> list[tuple[str, str, Relation]]:
    """(id, status, relation) for every live belief close enough to compare with ``text``.

    Candidates are the structural matches (shared canonical content) and the nearest
    neighbours by embedding cosine; structure then decides each pair's relation.
    """
    positions: dict[int, float] = {}
    structural = [
        (index.cosine_at(similarities, position), position)
        for position in index.structural_positions(statement(text))
    ]
    # A handful of structural look-alikes carries every value change a reviewer can read;
    # the closest ones first, so a crowded memory cannot make the gate slow.
    for cosine, position in sorted(structural, key=lambda hit: -hit[0])[:MAX_STRUCTURAL]:
        positions[position] = cosine
    if similarities is not None:
        for position, cosine in index.neighbours(similarities, compare_cosine, MAX_NEIGHBOURS):
            positions[position] = cosine
    judged = []
    for position, cosine in positions.items():
        belief_id, status, content = index.live(position)
        if belief_id == own_target:
            continue
        judged.append((belief_id, status, relate(content, text, cosine)))
    return judged


def _memory_conflicts(
    index: BeliefIndex,
    tokens: frozenset[str],
    negative: bool,
    judged: list[tuple[str, str, Relation]],
    own_target: str | None,
) -> list[Reason]:
    """``contradicts:<id>`` reasons against live memory, each value change followed by its
    ``changes:`` reason: value changes first, then strongest first, never the own target;
    then ``unsettled:<id>`` for close pairs structure could not decide."""
    conflicts = index.lexical_conflicts(tokens, negative)
    changes: dict[str, tuple[Change, ...]] = {}
    unsettled = []
    for belief_id, status, relation in judged:
        if status not in CONTRADICTION_STATUSES:
            continue
        if relation.kind == "contradiction":
            score = VALUE_CHANGE_SCORE if relation.changes else 1.0 + relation.score
            conflicts[belief_id] = max(conflicts.get(belief_id, 0.0), score)
            changes[belief_id] = relation.changes
        elif relation.kind == "refinement":
            # The words overlap and the polarity differs, but structure reads the proposal as
            # the belief plus a clause of its own ("…, and avoid single letters"): no reversal.
            conflicts.pop(belief_id, None)
        elif not relation.settled and relation.kind != "unrelated":
            unsettled.append(belief_id)
    if own_target is not None:
        conflicts.pop(own_target, None)
    ranked = sorted(conflicts.items(), key=lambda item: (-item[1], item[0]))
    reasons = []
    for belief_id, _ in ranked[:MAX_CONTRADICTIONS]:
        reasons.append(Reason("contradicts", belief_id))
        reasons.extend(change_reason(belief_id, change) for change in changes.get(belief_id, ()))
    reasons.extend(
        Reason("unsettled", belief_id)
        for belief_id in sorted(unsettled)
        if belief_id not in conflicts
    )
    return reasons


def change_reason(belief_id: str, change: Change) -> Reason:
    """``changes:<id>:<old>→<new>``, each side cut to ``MAX_CHANGE_CHARS`` characters."""
    return Reason("changes", belief_id, _cut(change.old), _cut(change.new))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHANGE_CHARS else text[: MAX_CHANGE_CHARS - 1] + "…"


def _judge_batch(
    position: int, proposals: Sequence[Proposal], vectors: numpy.ndarray | None
) -> list[tuple[int, Relation]]:
    """(index, relation) of earlier content proposals in the batch this one relates to."""
    found = []
    text = proposals[position].belief
    for earlier in range(position):
        if proposals[earlier].op not in CONTENT_OPS and proposals[position].op in CONTENT_OPS:
            continue
        cosine = float(vectors[position] @ vectors[earlier]) if vectors is not None else 0.0
        relation = relate(proposals[earlier].belief, text, cosine)
        if relation.kind in ("duplicate", "contradiction"):
            found.append((proposals[earlier].index, relation))
        elif _lexical_conflict(analyse(proposals[earlier].belief), analyse(text)):
            found.append((proposals[earlier].index, Relation("contradiction", cosine, "polarity")))
    return found


def _lexical_conflict(
    first: tuple[str, frozenset[str], bool], second: tuple[str, frozenset[str], bool]
) -> bool:
    """The floor under every embedding: opposite polarity and Jaccard ≥ the threshold."""
    return (
        first[2] != second[2]
        and bool(first[1] and second[1])
        and jaccard(first[1], second[1]) >= JACCARD_THRESHOLD - EPSILON
    )


def _routing_reasons(proposal: Proposal, index: BeliefIndex) -> list[Reason]:
    if proposal.op == "add":
        return []
    reasons = [Reason("op", proposal.op)]
    target = proposal.target_belief_id
    if not target:
        reasons.append(Reason("missing_target"))
    elif (status := index.status_of(target)) is None:
        reasons.append(Reason("unknown_target", target))
    elif status == "forgotten":
        reasons.append(Reason("target_forgotten", target))
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
