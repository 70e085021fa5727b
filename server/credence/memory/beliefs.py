"""The belief lifecycle: proposals become pending; Keep, Forget, Edit and Reopen decide them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from credence.clock import Clock, rfc3339
from credence.db import beliefs as rows_of
from credence.db import changes
from credence.db.paging import next_cursor
from credence.ids import new_id
from credence.memory import audit, live
from credence.memory import gate as gate_rules
from credence.memory.gate import GateResult, Proposal
from credence.memory.redact import REDACTION_SECRET, redact
from credence.memory.text import normalise
from credence.memory.transitions import (
    Outcome,
    forget_target,
    problem,
    restore_targets,
    retirable,
    retire,
    transition,
    with_restated,
)
from credence.models import Belief, ProposalIn, ProposalResult, ProposedBy

if TYPE_CHECKING:
    from credence.auth import Principal
    from credence.db.engine import Connection, Database
    from credence.embed import Embedder

DECISIONS = ("keep", "forget", "edit", "reopen")
# A proposal matching a belief the reviewer already retired is named as that past decision.
_PAST_DECISION = {"forgotten": "previously_forgotten", "superseded": "previously_superseded"}

PendingHook = Callable[["Connection", dict[str, Any]], Awaitable[None]]
ChangeHook = Callable[[str], None]


@dataclass
class BeliefHooks:
    """Extension points: work inside the creating transaction, and after every commit."""

    in_txn_pending: list[PendingHook] = field(default_factory=list)
    after_change: list[ChangeHook] = field(default_factory=list)

    def changed(self, agent_ids: Sequence[str]) -> None:
        """Tell every listener (hot cache, push worker) which agents' beliefs changed."""
        for agent_id in dict.fromkeys(agent_ids):
            for hook in self.after_change:
                hook(agent_id)


class _Raced(Exception):
    """Another request stored its answer under this Idempotency-Key while this one ran."""


def etag(version: int) -> str:
    """The strong ETag of a belief version."""
    return f'"{version}"'


def belief_from_row(row: Any) -> Belief:
    """Turn a beliefs row into the API's Belief."""
    return Belief(
        id=row["id"],
        agent_id=row["agent_id"],
        role=row["role"],
        content=row["content"],
        status=row["status"],
        confidence=row["confidence"],
        op=row["op"],
        target_belief_id=row["target_belief_id"],
        rationale=row["rationale"],
        source_episodes=json.loads(row["source_episodes"]),
        provenance=row["provenance"],
        review_reasons=json.loads(row["review_reasons"]),
        proposed_by=msgspec.convert(json.loads(row["proposed_by"]), ProposedBy),
        version=row["version"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        decided_by=row["decided_by"],
        decided_at=row["decided_at"],
        forgotten_reason=row["forgotten_reason"],
        injection_count=row["injection_count"],
        last_injected_at=row["last_injected_at"],
        superseded_by=row["superseded_by"],
    )


def _ok(row: Any) -> Outcome:
    belief = belief_from_row(row)
    return Outcome(200, msgspec.json.encode(belief), {"ETag": etag(belief.version)})


def parse_if_match(value: str | None) -> int | None:
    """The version an If-Match header names, or None when it names none we accept."""
    if value is None:
        return None
    value = value.strip()
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        value = value[1:-1]
    if not value.isdigit() or len(value) > 15:
        return None
    return int(value)


async def change_counter(store: Database) -> int:
    """The store-wide belief change counter."""
    return await store.read(changes.belief_changes)


@dataclass(frozen=True)
class GateRun:
    """The gate's verdict per proposal, with how many live beliefs it weighed them against."""

    results: list[GateResult]
    live_beliefs: int
    gated_against: int


# Reasons that reject a proposal rather than flag it for review.
_DUPLICATE = (
    "duplicate_of:",
    "previously_forgotten:",
    "previously_superseded:",
    "near_duplicate_of:",
)


class BeliefService:
    """Everything that changes a belief goes through here: one code path, one audit trail."""

    def __init__(
        self, store: Database, embedder: Embedder, clock: Clock, hooks: BeliefHooks
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.hooks = hooks

    # --- reads ---------------------------------------------------------------------------

    async def get_row(self, belief_id: str) -> Any:
        """The raw row of a belief, or None."""
        return await self.store.read(lambda conn: rows_of.get(conn, belief_id))

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
        return GateRun(
            results=[
                GateResult(index=r.index, gate=r.gate, reasons=_named(r.reasons, index))
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
    ) -> list[ProposalResult]:
        """Gate proposals and turn those that pass into pending beliefs.

        Duplicates, near-duplicates and restated refusals are rejected with a reason; every
        other gate reason (contradictions with the value they change, op routing, untrusted or
        missing sources) is kept as a review reason. ``indexes`` names each proposal in batch
        reasons (a job's answer positions); by default its position in ``proposals``.
        """
        if not proposals:
            return []
        # A reflector may echo a credential from its input: proposals are redacted like episodes.
        key = self.store.secret(REDACTION_SECRET)
        proposals = [
            msgspec.structs.replace(
                p,
                belief=_no_nul(redact(p.belief, digest_key=key).text),
                rationale=_no_nul(redact(p.rationale, digest_key=key).text),
            )
            for p in proposals
        ]
        names = list(indexes) if indexes is not None else list(range(len(proposals)))
        embeddings = np.asarray(await self.embedder.embed([p.belief for p in proposals]))
        verdicts = (
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
        now = rfc3339(self.clock())

        async def work(conn: Connection) -> list[ProposalResult]:
            await rows_of.serialise_proposals(conn, agent_id)
            results: list[ProposalResult] = []
            accepted: set[int] = set()
            for index, proposal in enumerate(proposals):
                key = normalise(proposal.belief)
                verdict = verdicts[index]
                reason = _batch_duplicate(verdict, accepted)
                if reason is None:
                    reason = await _rejection(conn, agent_id, proposal, key)
                if reason is None:
                    reason = next((r for r in verdict.reasons if r.startswith(_DUPLICATE)), None)
                if reason is not None:
                    results.append(ProposalResult(index, False, None, reason))
                    continue
                flags = [r for r in verdict.reasons if not r.startswith("duplicate_in_batch:")]
                row = await _insert_pending(
                    conn,
                    agent_id,
                    msgspec.structs.replace(
                        proposal, review_reasons=[*proposal.review_reasons, *flags]
                    ),
                    key,
                    embeddings[index],
                    proposer,
                    actor,
                    now,
                )
                for hook in self.hooks.in_txn_pending:
                    await hook(conn, row)
                accepted.add(names[index])
                results.append(ProposalResult(index, True, row["id"], None))
            if accepted:
                await changes.bump_belief_changes(conn)
            return results

        results = await self.store.write(work)
        if any(r.accepted for r in results):
            self.hooks.changed([agent_id])
        return results

    # --- decisions -----------------------------------------------------------------------

    async def decide(
        self,
        belief_id: str,
        action: str,
        principal: Principal,
        *,
        if_match: str | None,
        idempotency_key: str | None,
        payload: dict[str, Any],
    ) -> Outcome:
        """Apply Keep / Forget / Edit / Reopen with If-Match and Idempotency-Key semantics."""
        assert action in DECISIONS
        fingerprint = hashlib.sha256(
            json.dumps([belief_id, action, payload], sort_keys=True).encode()
        ).hexdigest()
        new_embedding = None
        if action == "edit":
            key = self.store.secret(REDACTION_SECRET)
            content = _no_nul(redact(payload["content"], digest_key=key).text)
            payload = {**payload, "content": content}
            new_embedding = (await self.embedder.embed([payload["content"]]))[0]
        now = rfc3339(self.clock())
        touched: list[str] = []

        # A request without If-Match is answered 428 whatever its Idempotency-Key: replaying
        # the answer to another request that had one would hide what is missing.
        remembered = idempotency_key is not None and if_match is not None

        async def replay(conn: Connection) -> Outcome | None:
            assert idempotency_key is not None
            seen = await rows_of.remembered_decision(conn, principal.key_id, idempotency_key)
            if seen is None:
                return None
            if seen["fingerprint"] != fingerprint:
                return problem(
                    422, "this Idempotency-Key was already used with a different request"
                )
            return Outcome(seen["status_code"], bytes(seen["body"]), json.loads(seen["headers"]))

        async def work(conn: Connection) -> Outcome:
            if remembered and (seen := await replay(conn)) is not None:
                return seen
            outcome = await self._apply(
                conn, belief_id, action, principal, if_match, payload, new_embedding, now, touched
            )
            if remembered:
                assert idempotency_key is not None
                stored = await rows_of.remember_decision(
                    conn,
                    principal.key_id,
                    idempotency_key,
                    fingerprint=fingerprint,
                    status_code=outcome.status_code,
                    body=outcome.body,
                    headers=json.dumps(outcome.headers),
                    now=now,
                )
                if not stored:
                    raise _Raced  # roll this decision back: the twin's stored answer stands
            return outcome

        try:
            outcome = await self.store.write(work)
        except _Raced:
            # A request with the same Idempotency-Key (on another replica) committed first.
            touched.clear()
            replayed = await self.store.read(replay)
            assert replayed is not None
            outcome = replayed
        if touched:
            self.hooks.changed(touched)
        return outcome

    async def _apply(
        self,
        conn: Connection,
        belief_id: str,
        action: str,
        principal: Principal,
        if_match: str | None,
        payload: dict[str, Any],
        new_embedding: np.ndarray | None,
        now: str,
        touched: list[str],
    ) -> Outcome:
        row = await rows_of.get(conn, belief_id, lock=True)
        if row is None or not principal.sees_agent(row["agent_id"]):
            return problem(404, f"belief {belief_id!r} not found")
        current = etag(row["version"])
        if if_match is None:
            return problem(428, "If-Match with the belief's ETag is required", current_etag=current)
        if parse_if_match(if_match) != row["version"]:
            return problem(
                412,
                "the belief changed since you loaded it; reload and decide again",
                {"ETag": current},
                current_etag=current,
            )
        status = row["status"]
        actor = principal.actor
        if action == "keep":
            if status != "pending":
                return problem(409, f"only a pending belief can be kept; this one is {status}")
            if row["provenance"] == "untrusted":
                return problem(
                    409,
                    "this belief came from third-party content and cannot be kept as is;"
                    " edit it into your own words to activate it",
                )
            retiring = await retirable(conn, row, payload.get("retire", ()))
            if isinstance(retiring, Outcome):
                return retiring
            if row["op"] == "forget":
                await forget_target(conn, row, actor, now, f"forgotten_by:{row['id']}")
                await transition(
                    conn,
                    row,
                    "forgotten",
                    "kept",
                    actor,
                    now,
                    forgotten_reason=f"applied:forget:{row['target_belief_id']}",
                )
            else:
                retiring = await with_restated(conn, row, retiring)
                await transition(conn, row, "active", "kept", actor, now)
                await retire(conn, retiring, row["id"], actor, now)
        elif action == "forget":
            if status == "forgotten":
                return problem(409, "this belief is already forgotten")
            reason = (payload.get("reason") or "").strip() or None
            await transition(
                conn, row, "forgotten", "forgotten", actor, now, forgotten_reason=reason
            )
        elif action == "edit":
            retiring = await retirable(conn, row, payload.get("retire", ()))
            if isinstance(retiring, Outcome):
                return retiring
            if status == "pending":
                retiring = await with_restated(conn, row, retiring)
            await transition(
                conn,
                row,
                "active",
                "edited",
                actor,
                now,
                content=payload["content"],
                embedding=new_embedding,
            )
            await retire(conn, retiring, row["id"], actor, now)
        else:  # reopen
            if status == "pending":
                return problem(409, "this belief is already pending")
            await transition(conn, row, "pending", "reopened", actor, now)
            await restore_targets(conn, row, actor, now)
        await changes.bump_belief_changes(conn)
        touched.append(row["agent_id"])
        return _ok(await rows_of.get(conn, belief_id))


# --- transaction helpers ------------------------------------------------------------------


def _no_nul(text: str) -> str:
    """PostgreSQL text cannot hold NUL; a reflector's output may (the API refuses it already)."""
    return text.replace("\x00", "")


def _named(reasons: tuple[str, ...], index: gate_rules.BeliefIndex) -> tuple[str, ...]:
    """Gate reasons, naming a duplicate of a retired belief as that past decision."""
    named = []
    for reason in reasons:
        kind, _, belief_id = reason.partition(":")
        past = _PAST_DECISION.get(index.status_of(belief_id) or "")
        if kind in ("duplicate_of", "near_duplicate_of") and past:
            reason = f"{past}:{belief_id}"
        named.append(reason)
    return tuple(named)


def _batch_duplicate(verdict: GateResult, accepted: set[int]) -> str | None:
    """The gate's ``duplicate_in_batch`` reason when the proposal it restates was accepted.

    If that one was refused for its own reasons (an unknown source, say), this one still gets
    its chance.
    """
    for reason in verdict.reasons:
        if reason.startswith("duplicate_in_batch:") and int(reason.partition(":")[2]) in accepted:
            return reason
    return None


async def _rejection(conn: Connection, agent_id: str, proposal: ProposalIn, key: str) -> str | None:
    """Why this proposal cannot become pending whatever the gate says, or None.

    The exact-text check runs again here, inside the writing transaction, so two concurrent
    submissions of one lesson cannot both land.
    """
    known = await rows_of.agent_episodes(conn, agent_id, proposal.source_episodes)
    for episode_id in proposal.source_episodes:
        if episode_id not in known:
            return f"unknown_source_episode:{episode_id}"
    target = proposal.target_belief_id
    if proposal.op == "add" and target is not None:
        return "target_not_allowed:add"
    if proposal.op != "add":
        if target is None:
            return f"missing_target:{proposal.op}"
        if await rows_of.target_status(conn, agent_id, target) is None:
            return f"unknown_target:{target}"
    exact = [
        (i, status) for i, status in await rows_of.with_key(conn, agent_id, key) if i != target
    ]
    if exact:
        first_id, first_status = exact[0]
        return f"{_PAST_DECISION.get(first_status, 'duplicate_of')}:{first_id}"
    return None


async def _insert_pending(
    conn: Connection,
    agent_id: str,
    proposal: ProposalIn,
    key: str,
    embedding: np.ndarray,
    proposer: ProposedBy,
    actor: str,
    now: str,
) -> dict[str, Any]:
    untrusted = await rows_of.any_untrusted_episode(conn, proposal.source_episodes)
    reasons = list(proposal.review_reasons)
    if proposal.op != "add":
        reasons.append(f"op:{proposal.op}")
    if untrusted:
        reasons.append("untrusted_source")
    if not proposal.source_episodes:
        reasons.append(gate_rules.UNSOURCED)
    belief_id = new_id("b")
    row = {
        "id": belief_id,
        "agent_id": agent_id,
        "role": proposal.role,
        "content": proposal.belief,
        "content_key": key,
        "status": "pending",
        "confidence": proposal.confidence,
        "op": proposal.op,
        "target_belief_id": proposal.target_belief_id,
        "rationale": proposal.rationale,
        "source_episodes": json.dumps(list(dict.fromkeys(proposal.source_episodes))),
        "provenance": (
            "untrusted" if untrusted else "clean" if proposal.source_episodes else "unsourced"
        ),
        "review_reasons": json.dumps(list(dict.fromkeys(reasons))),
        "proposed_by": msgspec.json.encode(proposer).decode(),
        "created_at": now,
        "updated_at": now,
        "embedding": np.asarray(embedding, dtype="<f4").tobytes(),
    }
    await rows_of.insert_pending(conn, row)
    await audit.append(
        conn,
        belief_id=belief_id,
        agent_id=agent_id,
        action="proposed",
        actor=actor,
        at=now,
        before_status=None,
        after_status="pending",
        before_content=None,
        after_content=proposal.belief,
        version=1,
        detail=proposal.op,
    )
    return row
