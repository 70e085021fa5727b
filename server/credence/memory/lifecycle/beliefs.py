"""The belief lifecycle: proposals become pending; Keep, Forget, Edit and Reopen decide them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from credence.clock import Clock, rfc3339
from credence.db import beliefs as rows_of
from credence.db import changes
from credence.db.beliefs import BeliefRecord, ChangeHook, PendingHook
from credence.db.paging import next_cursor
from credence.errors import DomainError, NotFound
from credence.memory.ingest.redact import REDACTION_SECRET, redact
from credence.memory.lifecycle.decisions import (
    Decision,
    Edit,
    Embedded,
    Forget,
    Keep,
    Reopen,
    Transition,
    decide,
)
from credence.memory.lifecycle.pending import insert_pending, no_nul, rejection
from credence.memory.lifecycle.proposers import credit_starter
from credence.memory.semantics import gate as gate_rules
from credence.memory.semantics import live
from credence.memory.semantics.gate import GateResult, Proposal
from credence.memory.semantics.judge import LLMJudge, settle_unsettled
from credence.memory.semantics.tokens import normalise
from credence.memory.semantics.verdicts import batch_duplicate, named_reasons
from credence.models import Belief, ProposalIn, ProposalResult, ProposedBy
from credence.models.reasons import REJECTING, Reason, decode_all, encode, structured
from credence.observe import metrics

if TYPE_CHECKING:
    from credence.access.principal import Principal
    from credence.db.engine import Connection, Database, Query, Row, Statement
    from credence.embed import Embedder

ACTION_OF: dict[type[Decision], str] = {
    Keep: "keep",
    Forget: "forget",
    Edit: "edit",
    Reopen: "reopen",
}


@dataclass
class BeliefHooks:
    """Extension points: work inside the creating transaction, and after its commit."""

    in_txn_pending: list[PendingHook] = field(default_factory=list)
    after_change: list[ChangeHook] = field(default_factory=list)
    after_pending: list[ChangeHook] = field(default_factory=list)

    def changed(self, agent_ids: Sequence[str]) -> None:
        """Tell every listener (the hot caches) which agents' beliefs changed."""
        for agent_id in dict.fromkeys(agent_ids):
            for hook in self.after_change:
                hook(agent_id)

    def made_pending(self, agent_id: str) -> None:
        """After the commit that made an agent's beliefs pending: tell those who act on new
        pending beliefs (the review planner), now that other connections can read them."""
        for hook in self.after_pending:
            hook(agent_id)


def belief_of(record: BeliefRecord) -> Belief:
    """The API's Belief of a stored record."""
    return Belief(
        id=record.id,
        agent_id=record.agent_id,
        role=record.role,
        content=record.content,
        status=record.status,
        confidence=record.confidence,
        op=record.op,
        target_belief_id=record.target_belief_id,
        rationale=record.rationale,
        source_episodes=record.source_episodes,
        provenance=record.provenance,
        review_reasons=[encode(reason) for reason in record.review_reasons],
        reasons=structured(record.review_reasons),
        proposed_by=msgspec.convert(record.proposed_by, ProposedBy),
        note=record.proposed_by.get("note"),
        version=record.version,
        created_at=record.created_at,
        updated_at=record.updated_at,
        decided_by=record.decided_by,
        decided_at=record.decided_at,
        forgotten_reason=deprecated_forgotten_reason(record),
        injection_count=record.injection_count,
        last_injected_at=record.last_injected_at,
        superseded_by=record.superseded_by,
        forgotten_by=record.forgotten_by,
        retired_by=record.retired_by,
    )


def deprecated_forgotten_reason(record: BeliefRecord) -> str | None:
    """The reviewer's words, or for one release the marker the machinery's columns replaced
    (``forgotten_by:<id>``, ``applied:forget:<id>``, ``superseded_by:<id>``)."""
    if record.forgotten_by is not None:
        return f"forgotten_by:{record.forgotten_by}"
    if record.retired_by is not None and record.retired_by == record.id:
        return f"applied:forget:{record.target_belief_id}"
    if record.retired_by is not None:
        return f"superseded_by:{record.retired_by}"
    return record.forgotten_reason


def belief_from_row(row: Any) -> Belief:
    """Turn a beliefs row into the API's Belief."""
    return belief_of(BeliefRecord.from_row(row))


@dataclass(frozen=True)
class GateRun:
    """The gate's verdict per proposal, with how many live beliefs it weighed them against."""

    results: list[GateResult]
    live_beliefs: int
    gated_against: int


class BeliefService:
    """Everything that changes a belief goes through here: one code path, one audit trail."""

    def __init__(
        self,
        store: Database,
        embedder: Embedder,
        clock: Clock,
        hooks: BeliefHooks,
        *,
        judge: LLMJudge | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.hooks = hooks
        self.judge = judge

    # --- reads ---------------------------------------------------------------------------

    async def get_row(self, belief_id: str) -> Any:
        """The raw row of a belief, or None."""
        return await self.store.read(lambda conn: rows_of.get(conn, belief_id), inline=True)

    async def get_record(self, belief_id: str) -> BeliefRecord | None:
        """A belief's record (JSON columns decoded), or None."""
        row = await self.get_row(belief_id)
        return None if row is None else BeliefRecord.from_row(row)

    async def list_rows(
        self,
        *,
        agent_ids: Sequence[str] | None,
        status: str | None,
        limit: int,
        cursor: str | None,
    ) -> tuple[list[Any], str | None]:
        """Beliefs newest first, optionally by agents and status; returns (rows, next cursor)."""
        found = await self.store.read(
            lambda conn: rows_of.page(
                conn, agent_ids=agent_ids, status=status, limit=limit + 1, cursor=cursor
            )
        )
        return found[:limit], next_cursor(found, limit)

    # --- proposals -----------------------------------------------------------------------

    async def gate(
        self,
        agent_id: str,
        proposals: Sequence[Proposal],
        vectors: np.ndarray | None,
        *,
        exclude_job: str | None = None,
    ) -> GateRun:
        """Run the gate on proposals against the agent's live beliefs: every path that creates
        a pending belief (proposals API, reflection jobs, MCP) goes through this one function.

        ``vectors`` are the proposals' embeddings (None: lexical rules only). Beliefs that job
        ``exclude_job`` proposed are its own results on a retry, not rivals. A duplicate of a
        forgotten belief is named ``previously_forgotten:<id>``.
        """
        snapshot = await live.agent_beliefs(self.store, agent_id, self.embedder.dim)
        if vectors is not None and vectors.shape[1] != snapshot.dim:
            vectors = None  # beliefs were embedded by another model: lexical checks only
        candidates = snapshot.relevant(proposals, vectors, exclude_job=exclude_job)
        index = gate_rules.BeliefIndex.build(candidates)
        cited = [source for p in proposals for source in p.source_episodes]
        untrusted = await self.store.read(
            lambda conn: rows_of.untrusted_episodes(conn, agent_id, cited)
        )
        results = gate_rules.gate(proposals, index, untrusted, vectors)
        if self.judge is not None:
            results = await settle_unsettled(self.judge, proposals, results, index)
        return GateRun(
            results=[
                GateResult(index=r.index, gate=r.gate, reasons=named_reasons(r.reasons, index))
                for r in results
            ],
            live_beliefs=len(snapshot.beliefs),
            gated_against=len(candidates),
        )

    async def propose(
        self,
        agent_id: str,
        proposals: Sequence[ProposalIn],
        proposer: ProposedBy,
        actor: str,
        *,
        indexes: Sequence[int] | None = None,
        imported: bool = False,
        verdicts: Sequence[GateResult] | None = None,
    ) -> list[ProposalResult]:
        """Gate proposals and turn those that pass into pending beliefs.

        Duplicates, near-duplicates and restated refusals are rejected with a reason; every
        other gate reason (contradictions with the value they change, op routing, untrusted or
        missing sources) is kept as a review reason. ``indexes`` names each proposal in batch
        reasons (a job's answer positions); by default its position in ``proposals``.
        ``imported`` marks rules read from a memory file: provenance ``imported``.
        ``verdicts`` are the gate's answers when the caller already gated these proposals (a
        reflection job's check step): the gate runs once per proposal, never again here.
        """
        if verdicts is not None and len(verdicts) != len(proposals):
            raise ValueError(f"{len(verdicts)} verdicts for {len(proposals)} proposals")
        if not proposals:
            return []
        # A reflector may echo a credential from its input: proposals are redacted like episodes.
        key = self.store.secret(REDACTION_SECRET)
        proposals = [
            msgspec.structs.replace(
                p,
                belief=no_nul(redact(p.belief, digest_key=key).text),
                rationale=no_nul(redact(p.rationale, digest_key=key).text),
                note=no_nul(redact(p.note, digest_key=key).text) if p.note else None,
            )
            for p in proposals
        ]
        proposer = await credit_starter(self.store, proposer)
        names = list(indexes) if indexes is not None else list(range(len(proposals)))
        embeddings = np.asarray(await self.embedder.embed([p.belief for p in proposals]))
        if verdicts is None:
            verdicts = await self._gate_inputs(agent_id, proposals, names, embeddings, proposer)
        now = rfc3339(self.clock())
        gated = verdicts
        refusals: dict[int, Reason] = {}

        async def work(conn: Connection) -> list[ProposalResult]:
            refusals.clear()
            await rows_of.serialise_proposals(conn, agent_id)
            results: list[ProposalResult] = []
            accepted: set[int] = set()
            for index, proposal in enumerate(proposals):
                key = normalise(proposal.belief)
                verdict = gated[index]
                reason = batch_duplicate(verdict, accepted)
                if reason is None:
                    reason = await rejection(conn, agent_id, proposal, key)
                if reason is None:
                    reason = next((r for r in verdict.reasons if r.kind in REJECTING), None)
                if reason is not None:
                    refusals[index] = reason
                    results.append(ProposalResult(index, False, None, encode(reason)))
                    continue
                # An admin may seed review reasons (their string form) ahead of the gate's.
                flags = [
                    *decode_all(proposal.review_reasons),
                    *(r for r in verdict.reasons if r.kind != "duplicate_in_batch"),
                ]
                belief = await insert_pending(
                    conn,
                    agent_id,
                    proposal,
                    key,
                    embeddings[index],
                    self.embedder.name,
                    proposer,
                    actor,
                    now,
                    flags=flags,
                    imported=imported,
                )
                for hook in self.hooks.in_txn_pending:
                    await hook(conn, belief)
                accepted.add(names[index])
                results.append(ProposalResult(index, True, belief.id, None))
            if accepted:
                await changes.bump_belief_changes(conn)
            return results

        results = await self.store.write(work)
        if any(r.accepted for r in results):
            self.hooks.changed([agent_id])
            self.hooks.made_pending(agent_id)
        for result in results:
            refused = refusals.get(result.index)
            metrics.observe_proposal(
                agent_id,
                [*gated[result.index].reasons, *([refused] if refused else [])],
                result.accepted,
            )
        return results

    async def _gate_inputs(
        self,
        agent_id: str,
        proposals: Sequence[ProposalIn],
        names: Sequence[int],
        embeddings: np.ndarray,
        proposer: ProposedBy,
    ) -> list[GateResult]:
        return (
            await self.gate(
                agent_id,
                [
                    Proposal(
                        index=name,
                        op=p.op,
                        belief=p.belief,
                        confidence=p.confidence,
                        rationale=p.rationale,
                        source_episodes=tuple(p.source_episodes),
                        target_belief_id=p.target_belief_id,
                    )
                    for name, p in zip(names, proposals, strict=True)
                ],
                embeddings,
                exclude_job=proposer.job_id,
            )
        ).results

    # --- decisions -----------------------------------------------------------------------

    async def prepare(self, decision: Decision) -> tuple[Decision, Embedded | None]:
        """The I/O a decision needs before its transaction: an Edit's text redacted and
        embedded (other decisions pass through)."""
        if not isinstance(decision, Edit):
            return decision, None
        key = self.store.secret(REDACTION_SECRET)
        content = no_nul(redact(decision.content, digest_key=key).text)
        vector = (await self.embedder.embed([content]))[0]
        embedded = Embedded(np.asarray(vector, dtype="<f4").tobytes(), self.embedder.name)
        return msgspec.structs.replace(decision, content=content), embedded

    @staticmethod
    def subject_query(conn: Connection, belief_id: str, decision: Decision) -> Query:
        """The one read a decision on ``belief_id`` needs (the belief, locked, with what the
        decision may touch), to run alone or in one trip with the caller's own reads."""
        return rows_of.subject_query(
            conn,
            belief_id,
            names=decision.retire if isinstance(decision, Keep | Edit) else (),
            with_target=isinstance(decision, Keep | Edit),
        )

    async def decide_in(
        self,
        conn: Connection,
        belief_id: str,
        decision: Decision,
        principal: Principal,
        *,
        if_match: str | None,
        embedded: Embedded | None,
        now: str,
        also: Callable[[Transition], Sequence[Statement]] | None = None,
        subject_rows: list[Row] | None = None,
    ) -> Transition | DomainError:
        """Decide inside the caller's write: read the belief once (or take ``subject_rows``,
        the rows of ``subject_query`` the caller read), apply the rules, and write the
        transition as one statement batch with the statements ``also`` makes of it (the
        answer to remember). A refusal is returned, and nothing is written."""
        if subject_rows is None:
            subject_rows = await conn.rows(*self.subject_query(conn, belief_id, decision))
        subject = await rows_of.subject_of(
            conn, subject_rows, belief_id, restoring=isinstance(decision, Reopen)
        )
        if subject is None or not principal.sees_agent(subject.belief.agent_id):
            return NotFound(f"belief {belief_id!r} not found")
        outcome = decide(
            subject, decision, now, actor=principal.actor, if_match=if_match, embedded=embedded
        )
        if isinstance(outcome, Transition):
            await rows_of.apply(conn, outcome.writes, also(outcome) if also is not None else ())
        return outcome

    def committed(self, decision: Decision, transition: Transition) -> None:
        """After a decision commits: tell the listeners and count it."""
        after = transition.state.after
        self.hooks.changed(transition.notify)
        metrics.observe_decided(ACTION_OF[type(decision)], after.agent_id, after.review_reasons)

    async def decide(
        self, belief_id: str, decision: Decision, principal: Principal, *, if_match: str | None
    ) -> Belief:
        """Apply one decision (no Idempotency-Key: the API edge adds replay); raises the
        DomainError that refuses it."""
        decision, embedded = await self.prepare(decision)
        now = rfc3339(self.clock())
        outcome = await self.store.write(
            lambda conn: self.decide_in(
                conn, belief_id, decision, principal, if_match=if_match, embedded=embedded, now=now
            ),
            inline=True,
        )
        if isinstance(outcome, DomainError):
            raise outcome
        self.committed(decision, outcome)
        return belief_of(outcome.state.after)
