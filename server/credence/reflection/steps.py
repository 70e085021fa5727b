"""The four steps of agent-reflection: pull, propose, check, submit (DESIGN §3)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from credence.clock import Clock, parse_rfc3339, rfc3339
from credence.db import jobs as db_jobs
from credence.embed import EmbeddingUnavailable
from credence.memory import gate as gate_module
from credence.memory import live, recall
from credence.memory.beliefs import BeliefService
from credence.memory.feedback import ReviewerFeedback, recent_feedback
from credence.memory.gate import Decayed, GateResult, LiveBelief
from credence.memory.redact import REDACTION_SECRET, redact
from credence.memory.text import normalise
from credence.models import (
    JobDecayed,
    JobDropped,
    JobOutput,
    JobPartial,
    JobResult,
    JobUsage,
    ProposalIn,
    ProposedBy,
    ReflectionSettings,
)
from credence.reflection import jobs, reflectors
from credence.reflection.parse import ParseError, ParseResult, parse_proposals
from credence.reflection.reflectors import PulledEpisode, Reflection, ReflectorError

if TYPE_CHECKING:
    from credence.reflection.llm import Sleep
    from credence.services import Services

DECAY_MIN_DROP = 0.05
REVIEW_PREFIX = "[needs human review]"
MAX_RATIONALE = 4000
MAX_REVIEW_REASONS = 20
MAX_REASON_CHARS = 200


class StepError(RuntimeError):
    """A step cannot complete; the job fails with this message and the watermark stays."""


@dataclass
class JobContext:
    """One run of one job: its inputs, its clock, and what each step hands the next."""

    job_id: str
    agent_id: str
    owner: str
    input: dict[str, Any]
    clock: Clock
    services: Services
    sleep: Sleep
    stored_answer: str | None = None
    settings: ReflectionSettings = field(default_factory=ReflectionSettings)
    episodes: list[PulledEpisode] = field(default_factory=list)
    untrusted: set[str] = field(default_factory=set)
    active: list[LiveBelief] = field(default_factory=list)
    forgotten: list[LiveBelief] = field(default_factory=list)
    feedback: ReviewerFeedback | None = None
    reflector: str = ""
    reflection: Reflection | None = None
    parsed: ParseResult | None = None
    gated: list[GateResult] = field(default_factory=list)
    decayed: list[Decayed] = field(default_factory=list)
    results: list[JobResult] = field(default_factory=list)

    def now(self) -> str:
        """The job's notion of now, in the store's format."""
        return rfc3339(self.clock())


# --- reads ------------------------------------------------------------------------------------


def _vector(blob: bytes | None, dim: int) -> np.ndarray | None:
    if not blob or len(blob) != dim * 4:
        return None
    return np.frombuffer(blob, dtype="<f4")


def _episode(row: Any, dim: int) -> PulledEpisode:
    return PulledEpisode(
        id=row["id"],
        seq=row["seq"],
        summary=row["summary"],
        interventions=tuple((i["trigger"], i["text"]) for i in json.loads(row["interventions"])),
        origin=row["origin"],
        embedding=_vector(row["embedding"], dim),
    )


# --- pull -------------------------------------------------------------------------------------


async def pull(ctx: JobContext, previous: dict[str, Any] | None) -> dict[str, Any]:
    """Un-reflected episodes ranked by the agent's recall queries (top k), plus active beliefs,
    forgotten ones, and the reviewer's recent refusals and rewrites for the reflector to heed.

    Fails when the agent is gone or recall search cannot run: a run that cannot read memory
    must never reflect on nothing. A retry reuses the episodes the first attempt pulled, so
    a stored answer still refers to episodes the job considers.
    """
    services = ctx.services
    agent_id = ctx.agent_id
    settings = await services.store.read(lambda conn: db_jobs.agent_settings(conn, agent_id))
    if settings is None:
        raise StepError(f"agent {ctx.agent_id!r} not found")
    ctx.settings = msgspec.convert(json.loads(settings), ReflectionSettings)
    dim = services.embedder.dim
    if previous is not None and "episode_ids" in previous:
        ids = list(previous["episode_ids"])
        rows = await services.store.read(lambda conn: db_jobs.episodes_by_id(conn, agent_id, ids))
        by_id = {row["id"]: row for row in rows}
        ctx.episodes = [_episode(by_id[i], dim) for i in ids if i in by_id]
        ranking = previous.get("ranking", "recall")
    else:
        since = ctx.input.get("since")
        since = rfc3339(parse_rfc3339(since)) if since else None
        k = ctx.settings.recall_k
        try:
            hits = await recall.search(
                services.store,
                services.embedder,
                ctx.agent_id,
                ctx.settings.recall_queries,
                k,
                since=since,
                reflected=False,
            )
            if len(hits) < k:
                # Episodes no query speaks to still need reflecting some day: after the
                # ranked ones come the newest others, up to k.
                seen = {hit.episode["id"] for hit in hits}
                newest = await recall.search(
                    services.store,
                    services.embedder,
                    ctx.agent_id,
                    [],
                    k,
                    since=since,
                    reflected=False,
                )
                hits += [hit for hit in newest if hit.episode["id"] not in seen][: k - len(hits)]
        except recall.RecallUnavailable as exc:
            raise StepError(f"recall search unavailable: {exc}") from exc
        ctx.episodes = [_episode(hit.episode, dim) for hit in hits]
        ranking = "recall" if any(q.strip() for q in ctx.settings.recall_queries) else "newest"
    ctx.untrusted = {e.id for e in ctx.episodes if e.origin != "clean"}
    snapshot = await live.agent_beliefs(services.store, ctx.agent_id, services.embedder.dim)
    ctx.active = live.by_status(snapshot.live(), "active")
    ctx.forgotten = live.by_status(snapshot.live(), "forgotten")
    ctx.feedback = await recent_feedback(services.store, ctx.agent_id)
    return {
        "episode_ids": [e.id for e in ctx.episodes],
        "untrusted": sorted(ctx.untrusted),
        "ranking": ranking,
        "active_beliefs": len(ctx.active),
        "refused": len(ctx.feedback.refused),
        "edited": len(ctx.feedback.edited),
    }


# --- propose ----------------------------------------------------------------------------------


async def propose(ctx: JobContext, previous: dict[str, Any] | None) -> dict[str, Any]:
    """Ask the reflector once, store its raw answer before using it, then parse the answer."""
    services = ctx.services
    ctx.reflector = reflectors.resolve(
        ctx.input.get("reflector"), ctx.settings.reflector, services.settings
    )
    if ctx.stored_answer is not None and previous is not None and "considered" in previous:
        ctx.reflector = previous.get("reflector", ctx.reflector)
        ctx.reflection = Reflection(
            answer=ctx.stored_answer,
            considered=list(previous["considered"]),
            partial=previous.get("partial"),
            usage=previous.get("usage"),
        )
        reused = True
    else:
        try:
            ctx.reflection = await reflectors.reflect(
                ctx.reflector,
                ctx.episodes,
                ctx.active,
                max_items=ctx.settings.max_diffs,
                stub_output=ctx.input.get("stub_output"),
                embedder=services.embedder,
                http=services.http,
                settings=services.settings,
                clock=ctx.clock,
                sleep=ctx.sleep,
                feedback=ctx.feedback,
                forgotten=ctx.forgotten,
            )
        except (ReflectorError, EmbeddingUnavailable) as exc:
            raise StepError(str(exc)) from exc
        # A model may echo or invent a credential: redact before the answer is stored, so the
        # job, its output and any belief built from it never hold the secret.
        key = services.store.secret(REDACTION_SECRET)
        answer = redact(ctx.reflection.answer, digest_key=key).text
        ctx.reflection = Reflection(
            answer=answer,
            considered=ctx.reflection.considered,
            partial=ctx.reflection.partial,
            usage=ctx.reflection.usage,
        )
        reused = False
    reflection = ctx.reflection
    meta = {
        "reflector": ctx.reflector,
        "considered": reflection.considered,
        "partial": reflection.partial,
        "usage": reflection.usage,
    }
    if not reused:
        await jobs.store_answer(services.store, ctx.job_id, ctx.owner, reflection.answer, meta)
    try:
        ctx.parsed = parse_proposals(
            reflection.answer,
            allowed_sources=frozenset(reflection.considered),
            max_items=ctx.settings.max_diffs,
        )
    except ParseError as exc:
        cut = (reflection.usage or {}).get("finish_reason") == "length"
        suffix = " (the model stopped at its token limit: finish_reason length)" if cut else ""
        raise StepError(f"{exc}{suffix}") from exc
    return {
        **meta,
        "reused_answer": reused,
        "valid": len(ctx.parsed.proposals),
        "dropped": len(ctx.parsed.dropped),
    }


# --- check ------------------------------------------------------------------------------------


async def check(ctx: JobContext, previous: dict[str, Any] | None) -> dict[str, Any]:
    """Gate every proposal against the live beliefs; report decayed active beliefs.

    The gate is the belief service's, the one every path that creates a pending belief runs.
    """
    assert ctx.parsed is not None
    services = ctx.services
    proposals = list(ctx.parsed.proposals)
    vectors = None
    if proposals:
        try:
            vectors = np.asarray(await services.embedder.embed([p.belief for p in proposals]))
        except EmbeddingUnavailable as exc:
            raise StepError(f"embedder unavailable: {exc}") from exc
    run = await belief_service(ctx).gate(ctx.agent_id, proposals, vectors, exclude_job=ctx.job_id)
    ctx.gated = run.results
    snapshot = await live.agent_beliefs(services.store, ctx.agent_id, services.embedder.dim)
    ctx.decayed = gate_module.decay_report(
        live.by_status(snapshot.live(exclude_job=ctx.job_id), "active"),
        ctx.clock(),
        ctx.settings.lambda_per_day,
        DECAY_MIN_DROP,
    )
    counts = {verdict: 0 for verdict in ("safe", "needs_review", "duplicate")}
    for result in ctx.gated:
        counts[result.gate] += 1
    return {
        **counts,
        "live_beliefs": run.live_beliefs,
        "gated_against": run.gated_against,
        "decayed": len(ctx.decayed),
    }


# --- submit -----------------------------------------------------------------------------------


def review_rationale(reasons: tuple[str, ...], rationale: str) -> str:
    """``[needs human review] <reasons>`` in front of the reflector's rationale, bounded."""
    prefix = f"{REVIEW_PREFIX} {', '.join(reasons)}"
    text = f"{prefix}. {rationale}" if rationale else prefix
    return text if len(text) <= MAX_RATIONALE else text[: MAX_RATIONALE - 1] + "…"


def _bounded(reasons: tuple[str, ...]) -> list[str]:
    return [r[:MAX_REASON_CHARS] for r in reasons][:MAX_REVIEW_REASONS]


def belief_service(ctx: JobContext) -> BeliefService:
    """The proposals logic, reading the job's clock when the job pins one."""
    services = ctx.services
    if ctx.input.get("now") is None:
        return services.beliefs
    return BeliefService(services.store, services.embedder, ctx.clock, services.hooks)


async def submit(ctx: JobContext, previous: dict[str, Any] | None) -> dict[str, Any]:
    """Send gated proposals through the proposals endpoint's logic; record each outcome.

    Duplicates are not resubmitted. Needs-review proposals carry ``[needs human review]
    <reasons>`` on their rationale and the reasons as review reasons. On a retry, proposals
    this job already turned into beliefs are reported as accepted, not submitted twice.
    """
    assert ctx.parsed is not None
    services = ctx.services
    proposals = list(ctx.parsed.proposals)
    snapshot = await live.agent_beliefs(services.store, ctx.agent_id, services.embedder.dim)
    already = {
        snapshot.keys[belief_id]: belief_id
        for belief_id, job_id in snapshot.jobs.items()
        if job_id == ctx.job_id and belief_id in snapshot.keys
    }
    outcome: dict[int, tuple[bool, str | None, str | None]] = {}
    pending: list[tuple[int, ProposalIn]] = []
    for position, (proposal, verdict) in enumerate(zip(proposals, ctx.gated, strict=True)):
        if verdict.gate == gate_module.DUPLICATE:
            reason = next(
                (
                    r
                    for r in verdict.reasons
                    if r.startswith(
                        (
                            "duplicate_of:",
                            "near_duplicate_of:",
                            "previously_forgotten:",
                            "duplicate_in_",
                        )
                    )
                ),
                verdict.reasons[0] if verdict.reasons else "duplicate",
            )
            outcome[position] = (False, None, reason)
            continue
        key = normalise(proposal.belief)
        if key in already:
            outcome[position] = (True, already[key], None)
            continue
        needs_review = verdict.gate == gate_module.NEEDS_REVIEW
        pending.append(
            (
                position,
                ProposalIn(
                    op=proposal.op,
                    belief=proposal.belief,
                    confidence=proposal.confidence,
                    rationale=(
                        review_rationale(verdict.reasons, proposal.rationale)
                        if needs_review
                        else proposal.rationale[:MAX_RATIONALE]
                    ),
                    source_episodes=list(proposal.source_episodes),
                    target_belief_id=proposal.target_belief_id,
                    review_reasons=_bounded(verdict.reasons),
                ),
            )
        )
    if pending:
        service_results = await belief_service(ctx).propose(
            ctx.agent_id,
            [proposal_in for _, proposal_in in pending],
            ProposedBy(job_id=ctx.job_id, reflector=ctx.reflector),
            f"job:{ctx.job_id}",
            indexes=[proposals[position].index for position, _ in pending],
        )
        for (position, _), result in zip(pending, service_results, strict=True):
            outcome[position] = (result.accepted, result.belief_id, result.rejected_reason)
    ctx.results = []
    for position, (proposal, verdict) in enumerate(zip(proposals, ctx.gated, strict=True)):
        accepted, belief_id, rejected = outcome[position]
        ctx.results.append(
            JobResult(
                index=proposal.index,
                op=proposal.op,
                belief=proposal.belief,
                confidence=proposal.confidence,
                gate=verdict.gate,
                reasons=list(verdict.reasons),
                accepted=accepted,
                belief_id=belief_id,
                rejected_reason=rejected,
            )
        )
    return {
        "accepted": sum(1 for r in ctx.results if r.accepted),
        "rejected": sum(1 for r in ctx.results if not r.accepted),
    }


def job_output(ctx: JobContext) -> JobOutput:
    """The job's output_data, assembled from what the steps recorded."""
    assert ctx.parsed is not None and ctx.reflection is not None
    reflection = ctx.reflection
    return JobOutput(
        episodes_considered=len(reflection.considered),
        proposed=len(ctx.parsed.proposals) + len(ctx.parsed.dropped),
        results=ctx.results,
        dropped=[JobDropped(index=d.index, reason=d.reason) for d in ctx.parsed.dropped],
        decayed=[
            JobDecayed(
                belief_id=d.belief_id,
                confidence=d.confidence,
                decayed_confidence=round(d.decayed_confidence, 6),
                age_days=round(d.age_days, 4),
            )
            for d in ctx.decayed
        ],
        reflector=ctx.reflector,
        partial=msgspec.convert(reflection.partial, JobPartial) if reflection.partial else None,
        usage=msgspec.convert(reflection.usage, JobUsage) if reflection.usage else None,
    )


STEP_FUNCTIONS = {"pull": pull, "propose": propose, "check": check, "submit": submit}
