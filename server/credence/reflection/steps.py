"""The four steps of agent-reflection: pull, propose, check, submit (DESIGN §3)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import msgspec
import numpy as np

from credence.clock import Clock, parse_rfc3339, rfc3339
from credence.db import jobs as db_jobs
from credence.db.episodes import EpisodeRecord
from credence.embed import EmbeddingUnavailable
from credence.memory.ingest.redact import REDACTION_SECRET, redact
from credence.memory.lifecycle.feedback import ReviewerFeedback, recent_feedback
from credence.memory.read import recall
from credence.memory.semantics import gate as gate_module
from credence.memory.semantics import live
from credence.memory.semantics.gate import Decayed, GateResult, LiveBelief, Proposal
from credence.memory.semantics.tokens import normalise
from credence.models import (
    JobDecayed,
    JobDropped,
    JobInput,
    JobOutput,
    JobResult,
    ProposalIn,
    ProposedBy,
    ReflectionSettings,
)
from credence.models.reasons import DUPLICATE_KINDS, Reason, encode
from credence.reflection import jobs, reflectors
from credence.reflection.checkpoints import (
    AnswerMeta,
    CheckCheckpoint,
    ProposeCheckpoint,
    PullCheckpoint,
    SubmitCheckpoint,
)
from credence.reflection.deps import ReflectionDeps
from credence.reflection.llm import Sleep
from credence.reflection.parse import ParseError, ParseResult, parse_proposals
from credence.reflection.pulled import PulledEpisode
from credence.reflection.reflectors import ReflectorError

DECAY_MIN_DROP = 0.05
REVIEW_PREFIX = "[needs human review]"
MAX_RATIONALE = 4000
MAX_REVIEW_REASONS = 20

# Each step takes the previous step's output and returns its own, which carries the checkpoint
# the engine persists. Only check runs the gate: submit takes check's output, where every
# proposal is paired with its one verdict, so no proposal reaches the store ungated or gated twice.


class StepError(RuntimeError):
    """A step cannot complete; the job fails with this message and the watermark stays."""


@dataclass(frozen=True)
class JobRun:
    """One attempt at one job: whose it is, who runs it, what it was submitted with."""

    job_id: str
    agent_id: str
    owner: str
    input: JobInput
    clock: Clock
    sleep: Sleep
    stored_answer: str | None = None

    def now(self) -> str:
        """The job's notion of now, in the store's format."""
        return rfc3339(self.clock())


class Pulled(msgspec.Struct, frozen=True):
    """Pull's output: the episodes to reflect on and the memory the reflector weighs."""

    checkpoint: PullCheckpoint
    settings: ReflectionSettings
    episodes: tuple[PulledEpisode, ...]
    active: tuple[LiveBelief, ...]
    forgotten: tuple[LiveBelief, ...]
    feedback: ReviewerFeedback


class Proposed(msgspec.Struct, frozen=True):
    """Propose's output: the stored (redacted) answer, what it covers, and its parse."""

    checkpoint: ProposeCheckpoint
    settings: ReflectionSettings
    answer: str
    parsed: ParseResult


class Gated(msgspec.Struct, frozen=True):
    """One valid proposal with the gate's one verdict on it."""

    proposal: Proposal
    verdict: GateResult


class Checked(msgspec.Struct, frozen=True):
    """Check's output: every proposal gated once, and the decayed active beliefs."""

    checkpoint: CheckCheckpoint
    proposed: Proposed
    gated: tuple[Gated, ...]
    decayed: tuple[Decayed, ...]


class Submitted(msgspec.Struct, frozen=True):
    """Submit's output: what became of each gated proposal."""

    checkpoint: SubmitCheckpoint
    checked: Checked
    results: tuple[JobResult, ...]


class Outcome(msgspec.Struct, frozen=True):
    """What the proposals logic made of one proposal (or why it was never sent)."""

    accepted: bool
    belief_id: str | None = None
    rejected_reason: str | None = None


# --- pull -------------------------------------------------------------------------------------


def _vector(blob: bytes | None, dim: int) -> np.ndarray | None:
    if not blob or len(blob) != dim * 4:
        return None
    return np.frombuffer(blob, dtype="<f4")


def _episode(row: EpisodeRecord, dim: int) -> PulledEpisode:
    return PulledEpisode(
        id=row.id,
        summary=row.summary,
        interventions=tuple((i["trigger"], i["text"]) for i in row.interventions),
        origin=row.origin,
        seq=row.seq,
        embedding=_vector(row.embedding, dim),
    )


async def _recalled(
    deps: ReflectionDeps, agent_id: str, settings: ReflectionSettings, since: str | None
) -> list[EpisodeRecord]:
    """The top k un-reflected episodes by the agent's recall queries, then the newest."""
    k = settings.recall_k
    try:
        hits = await recall.search(
            deps.store,
            deps.embedder,
            agent_id,
            settings.recall_queries,
            k,
            since=since,
            reflected=False,
        )
        if len(hits) < k:
            # Episodes no query speaks to still need reflecting some day: after the
            # ranked ones come the newest others, up to k.
            seen = {hit.episode.id for hit in hits}
            newest = await recall.search(
                deps.store, deps.embedder, agent_id, [], k, since=since, reflected=False
            )
            hits += [hit for hit in newest if hit.episode.id not in seen][: k - len(hits)]
    except recall.RecallUnavailable as exc:
        raise StepError(f"recall search unavailable: {exc}") from exc
    return [hit.episode for hit in hits]


async def pull(deps: ReflectionDeps, run: JobRun, resume: PullCheckpoint | None) -> Pulled:
    """Un-reflected episodes ranked by the agent's recall queries (top k), plus active beliefs,
    forgotten ones, and the reviewer's recent refusals and rewrites for the reflector to heed.

    Fails when the agent is gone or recall search cannot run: a run that cannot read memory
    must never reflect on nothing. A retry (``resume``) reuses the episodes the first attempt
    pulled, so a stored answer still refers to episodes the job considers.
    """
    agent_id = run.agent_id
    stored = await deps.store.read(lambda conn: db_jobs.agent_settings(conn, agent_id))
    if stored is None:
        raise StepError(f"agent {agent_id!r} not found")
    settings = msgspec.convert(stored, ReflectionSettings)
    dim = deps.embedder.dim
    if resume is not None:
        ids = resume.episode_ids
        rows = await deps.store.read(lambda conn: db_jobs.episodes_by_id(conn, agent_id, ids))
        by_id = {row.id: row for row in rows}
        episodes = tuple(_episode(by_id[i], dim) for i in ids if i in by_id)
        ranking = resume.ranking
    else:
        since = rfc3339(parse_rfc3339(run.input.since)) if run.input.since else None
        episodes = tuple(
            _episode(row, dim) for row in await _recalled(deps, agent_id, settings, since)
        )
        ranking = "recall" if any(q.strip() for q in settings.recall_queries) else "newest"
    snapshot = await live.agent_beliefs(deps.store, agent_id, dim)
    beliefs = snapshot.live()
    active = tuple(live.by_status(beliefs, "active"))
    forgotten = tuple(live.by_status(beliefs, "forgotten"))
    feedback = await recent_feedback(deps.store, agent_id)
    checkpoint = PullCheckpoint(
        episode_ids=[e.id for e in episodes],
        untrusted=sorted({e.id for e in episodes if e.origin != "clean"}),
        ranking=ranking,
        active_beliefs=len(active),
        refused=len(feedback.refused),
        edited=len(feedback.edited),
    )
    return Pulled(checkpoint, settings, episodes, active, forgotten, feedback)


# --- propose ----------------------------------------------------------------------------------


async def propose(
    deps: ReflectionDeps, run: JobRun, pulled: Pulled, resume: AnswerMeta | None
) -> Proposed:
    """Ask the reflector once, store its raw answer before using it, then parse the answer.

    A retry whose earlier attempt stored an answer (``resume`` and ``run.stored_answer``)
    parses that answer again instead of asking twice.
    """
    settings = pulled.settings
    if run.stored_answer is not None and resume is not None:
        meta, answer, reused = resume, run.stored_answer, True
    else:
        name = reflectors.resolve(run.input.reflector, settings.reflector, deps.settings)
        try:
            reflector = reflectors.choose(
                name,
                stub_output=run.input.stub_output,
                embedder=deps.embedder,
                http=deps.http,
                settings=deps.settings,
                clock=run.clock,
                sleep=run.sleep,
            )
            reflection = await reflector.reflect(
                pulled.episodes,
                pulled.active,
                max_items=settings.max_diffs,
                feedback=pulled.feedback,
                forgotten=pulled.forgotten,
            )
        except (ReflectorError, EmbeddingUnavailable) as exc:
            raise StepError(str(exc)) from exc
        # A model may echo or invent a credential: redact before the answer is stored, so the
        # job, its output and any belief built from it never hold the secret.
        answer = redact(reflection.answer, digest_key=deps.store.secret(REDACTION_SECRET)).text
        meta = AnswerMeta(
            reflector=reflector.name,
            considered=reflection.considered,
            partial=reflection.partial,
            usage=reflection.usage,
        )
        reused = False
        await jobs.store_answer(deps.store, run.job_id, run.owner, answer, meta)
    try:
        parsed = parse_proposals(
            answer, allowed_sources=frozenset(meta.considered), max_items=settings.max_diffs
        )
    except ParseError as exc:
        cut = meta.usage is not None and meta.usage.finish_reason == "length"
        suffix = " (the model stopped at its token limit: finish_reason length)" if cut else ""
        raise StepError(f"{exc}{suffix}") from exc
    checkpoint = ProposeCheckpoint(
        reflector=meta.reflector,
        considered=meta.considered,
        partial=meta.partial,
        usage=meta.usage,
        reused_answer=reused,
        valid=len(parsed.proposals),
        dropped=len(parsed.dropped),
    )
    return Proposed(checkpoint, settings, answer, parsed)


# --- check ------------------------------------------------------------------------------------


def check_checkpoint(
    gated: Sequence[Gated], live_beliefs: int, gated_against: int, decayed: int
) -> CheckCheckpoint:
    """The verdict counts of ``gated`` with the gate run's figures."""
    counts = {verdict: 0 for verdict in ("safe", "needs_review", "duplicate")}
    for pair in gated:
        counts[pair.verdict.gate] += 1
    return CheckCheckpoint(
        safe=counts["safe"],
        needs_review=counts["needs_review"],
        duplicate=counts["duplicate"],
        live_beliefs=live_beliefs,
        gated_against=gated_against,
        decayed=decayed,
    )


async def check(deps: ReflectionDeps, run: JobRun, proposed: Proposed) -> Checked:
    """Gate every proposal against the live beliefs, once; report decayed active beliefs.

    The gate is the belief service's, the one every path that creates a pending belief runs.
    """
    proposals = proposed.parsed.proposals
    vectors = None
    if proposals:
        try:
            vectors = np.asarray(await deps.embedder.embed([p.belief for p in proposals]))
        except EmbeddingUnavailable as exc:
            raise StepError(f"embedder unavailable: {exc}") from exc
    gate_run = await deps.beliefs_at(run.clock).gate(
        run.agent_id, proposals, vectors, exclude_job=run.job_id
    )
    gated = tuple(
        Gated(proposal, verdict)
        for proposal, verdict in zip(proposals, gate_run.results, strict=True)
    )
    snapshot = await live.agent_beliefs(deps.store, run.agent_id, deps.embedder.dim)
    # The report reads active beliefs only; this job's own proposals are not its to report.
    decayed = tuple(
        gate_module.decay_report(
            snapshot.live(exclude_job=run.job_id),
            run.clock(),
            proposed.settings.lambda_per_day,
            DECAY_MIN_DROP,
        )
    )
    checkpoint = check_checkpoint(
        gated, gate_run.live_beliefs, gate_run.gated_against, len(decayed)
    )
    return Checked(checkpoint, proposed, gated, decayed)


# --- submit -----------------------------------------------------------------------------------


def review_rationale(reasons: tuple[Reason, ...], rationale: str) -> str:
    """``[needs human review] <reasons>`` in front of the reflector's rationale, bounded."""
    prefix = f"{REVIEW_PREFIX} {', '.join(encode(r) for r in reasons)}"
    text = f"{prefix}. {rationale}" if rationale else prefix
    return text if len(text) <= MAX_RATIONALE else text[: MAX_RATIONALE - 1] + "…"


def bounded_verdict(verdict: GateResult) -> GateResult:
    """The verdict with at most MAX_REVIEW_REASONS reasons."""
    return msgspec.structs.replace(verdict, reasons=verdict.reasons[:MAX_REVIEW_REASONS])


def proposal_in(pair: Gated) -> ProposalIn:
    """The proposals endpoint's input for one gated proposal; needs-review ones say why."""
    proposal, verdict = pair.proposal, pair.verdict
    return ProposalIn(
        op=proposal.op,
        belief=proposal.belief,
        confidence=proposal.confidence,
        rationale=(
            review_rationale(verdict.reasons, proposal.rationale)
            if verdict.gate == gate_module.NEEDS_REVIEW
            else proposal.rationale[:MAX_RATIONALE]
        ),
        source_episodes=list(proposal.source_episodes),
        target_belief_id=proposal.target_belief_id,
    )


def settled_without_sending(pair: Gated, already: Mapping[str, str]) -> Outcome | None:
    """The outcome of a proposal that is not sent: a duplicate is rejected with its duplicate
    reason, and one this job already turned into a belief (an earlier attempt) is reported
    accepted with that belief. None: the proposal goes to the proposals logic."""
    verdict = pair.verdict
    if verdict.gate == gate_module.DUPLICATE:
        reason = next(
            (encode(r) for r in verdict.reasons if r.kind in DUPLICATE_KINDS),
            encode(verdict.reasons[0]) if verdict.reasons else "duplicate",
        )
        return Outcome(False, None, reason)
    made = already.get(normalise(pair.proposal.belief))
    return Outcome(True, made) if made is not None else None


def job_results(gated: Sequence[Gated], outcomes: Sequence[Outcome]) -> tuple[JobResult, ...]:
    """One result per gated proposal, in answer order."""
    return tuple(
        JobResult(
            index=pair.proposal.index,
            op=pair.proposal.op,
            belief=pair.proposal.belief,
            confidence=pair.proposal.confidence,
            gate=pair.verdict.gate,
            reasons=[encode(r) for r in pair.verdict.reasons],
            accepted=outcome.accepted,
            belief_id=outcome.belief_id,
            rejected_reason=outcome.rejected_reason,
        )
        for pair, outcome in zip(gated, outcomes, strict=True)
    )


async def submit(deps: ReflectionDeps, run: JobRun, checked: Checked) -> Submitted:
    """Send gated proposals through the proposals endpoint's logic; record each outcome.

    Duplicates are not resubmitted. Needs-review proposals carry ``[needs human review]
    <reasons>`` on their rationale and the reasons as review reasons. On a retry, proposals
    this job already turned into beliefs are reported as accepted, not submitted twice.
    The proposals logic takes check's verdicts: the gate does not run again here.
    """
    snapshot = await live.agent_beliefs(deps.store, run.agent_id, deps.embedder.dim)
    already = {
        snapshot.keys[belief_id]: belief_id
        for belief_id, job_id in snapshot.jobs.items()
        if job_id == run.job_id and belief_id in snapshot.keys
    }
    outcomes: list[Outcome | None] = [
        settled_without_sending(pair, already) for pair in checked.gated
    ]
    sending = [position for position, outcome in enumerate(outcomes) if outcome is None]
    if sending:
        service_results = await deps.beliefs_at(run.clock).propose(
            run.agent_id,
            [proposal_in(checked.gated[position]) for position in sending],
            ProposedBy(job_id=run.job_id, reflector=checked.proposed.checkpoint.reflector),
            f"job:{run.job_id}",
            indexes=[checked.gated[position].proposal.index for position in sending],
            verdicts=[bounded_verdict(checked.gated[position].verdict) for position in sending],
        )
        for position, result in zip(sending, service_results, strict=True):
            outcomes[position] = Outcome(result.accepted, result.belief_id, result.rejected_reason)
    settled = [outcome for outcome in outcomes if outcome is not None]
    results = job_results(checked.gated, settled)
    accepted = sum(1 for r in results if r.accepted)
    checkpoint = SubmitCheckpoint(accepted=accepted, rejected=len(results) - accepted)
    return Submitted(checkpoint, checked, results)


def job_output(submitted: Submitted) -> JobOutput:
    """The job's output_data, assembled from what the steps handed on."""
    checked = submitted.checked
    meta = checked.proposed.checkpoint
    parsed = checked.proposed.parsed
    return JobOutput(
        episodes_considered=len(meta.considered),
        proposed=len(parsed.proposals) + len(parsed.dropped),
        results=list(submitted.results),
        dropped=[JobDropped(index=d.index, reason=d.reason) for d in parsed.dropped],
        decayed=[
            JobDecayed(
                belief_id=d.belief_id,
                confidence=d.confidence,
                decayed_confidence=round(d.decayed_confidence, 6),
                age_days=round(d.age_days, 4),
            )
            for d in checked.decayed
        ],
        reflector=meta.reflector,
        partial=meta.partial,
        usage=meta.usage,
    )
