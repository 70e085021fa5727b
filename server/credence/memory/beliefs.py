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
from credence.db.paging import newest_first, next_cursor
from credence.db.store import one, rows
from credence.ids import new_id
from credence.memory import audit, live
from credence.memory import gate as gate_rules
from credence.memory.gate import GateResult, Proposal
from credence.memory.redact import REDACTION_SECRET, redact
from credence.memory.text import normalise
from credence.models import Belief, ProposalIn, ProposalResult, ProposedBy

if TYPE_CHECKING:
    import aiosqlite

    from credence.auth import Principal
    from credence.db.engine import Database
    from credence.embed import Embedder

DECISIONS = ("keep", "forget", "edit", "reopen")
RETIRED = ("forgotten", "superseded")
# A proposal matching a belief the reviewer already retired is named as that past decision.
_PAST_DECISION = {"forgotten": "previously_forgotten", "superseded": "previously_superseded"}
# Ops whose kept belief restates its target with a new confidence: the target is retired with it.
# A `supersede` target is retired only when the reviewer names it in `retire`.
RESTATING_OPS = ("strengthen", "weaken")

PendingHook = Callable[["aiosqlite.Connection", dict[str, Any]], Awaitable[None]]
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


@dataclass(frozen=True)
class Outcome:
    """An HTTP-shaped result computed inside a transaction (so it can be stored for replay)."""

    status_code: int
    body: bytes
    headers: dict[str, str]


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


def _problem(status_code: int, detail: str, headers: dict[str, str] | None = None, **extra: Any):
    body: dict[str, Any] = {"status_code": status_code, "detail": detail}
    if extra:
        body["extra"] = extra
    return Outcome(status_code, msgspec.json.encode(body), headers or {})


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


async def bump_change_counter(conn: aiosqlite.Connection) -> None:
    """Count a belief change so other processes' caches notice it."""
    await conn.execute("UPDATE store_state SET value = value + 1 WHERE name = 'belief_changes'")


async def change_counter(store: Database) -> int:
    """The store-wide belief change counter."""
    row = await store.fetchone("SELECT value FROM store_state WHERE name = 'belief_changes'")
    return int(row["value"])


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
        return await self.store.fetchone("SELECT * FROM beliefs WHERE id = ?", (belief_id,))

    async def list_rows(
        self,
        *,
        agent_ids: Sequence[str] | None,
        status: str | None,
        limit: int,
        cursor: str | None,
    ) -> tuple[list[Any], str | None]:
        """Beliefs newest first, optionally by agents and status; returns (rows, next cursor)."""
        where, params = newest_first(agent_ids=agent_ids, status=status, cursor=cursor)
        rows = await self.store.fetchall(
            f"SELECT * FROM beliefs {where} ORDER BY id DESC LIMIT ?", (*params, limit + 1)
        )
        return rows[:limit], next_cursor(rows, limit)

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
        untrusted = await self._untrusted_sources(agent_id, proposals)
        results = gate_rules.gate(proposals, index, untrusted, vectors)
        return GateRun(
            results=[
                GateResult(index=r.index, gate=r.gate, reasons=_named(r.reasons, index))
                for r in results
            ],
            live_beliefs=len(snapshot.beliefs),
            gated_against=len(candidates),
        )

    async def _untrusted_sources(self, agent_id: str, proposals: Sequence[Proposal]) -> set[str]:
        cited = sorted({source for p in proposals for source in p.source_episodes})
        found: set[str] = set()
        for start in range(0, len(cited), 500):
            chunk = cited[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = await self.store.fetchall(
                f"SELECT id FROM episodes WHERE agent_id = ? AND id IN ({marks})"
                " AND origin != 'clean'",
                (agent_id, *chunk),
            )
            found.update(row["id"] for row in rows)
        return found

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
                belief=redact(p.belief, digest_key=key).text,
                rationale=redact(p.rationale, digest_key=key).text,
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

        async def work(conn: aiosqlite.Connection) -> list[ProposalResult]:
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
                await bump_change_counter(conn)
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
            payload = {**payload, "content": redact(payload["content"], digest_key=key).text}
            new_embedding = (await self.embedder.embed([payload["content"]]))[0]
        now = rfc3339(self.clock())
        touched: list[str] = []

        # A request without If-Match is answered 428 whatever its Idempotency-Key: replaying
        # the answer to another request that had one would hide what is missing.
        remembered = idempotency_key is not None and if_match is not None

        async def work(conn: aiosqlite.Connection) -> Outcome:
            if remembered:
                seen = await one(
                    conn,
                    "SELECT fingerprint, status_code, body, headers FROM idempotency"
                    " WHERE key_id = ? AND idem_key = ?",
                    (principal.key_id, idempotency_key),
                )
                if seen is not None:
                    if seen["fingerprint"] != fingerprint:
                        return _problem(
                            422, "this Idempotency-Key was already used with a different request"
                        )
                    return Outcome(seen["status_code"], seen["body"], json.loads(seen["headers"]))
            outcome = await self._apply(
                conn, belief_id, action, principal, if_match, payload, new_embedding, now, touched
            )
            if remembered:
                await conn.execute(
                    "INSERT INTO idempotency(key_id, idem_key, fingerprint, status_code, body,"
                    " headers, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        principal.key_id,
                        idempotency_key,
                        fingerprint,
                        outcome.status_code,
                        outcome.body,
                        json.dumps(outcome.headers),
                        now,
                    ),
                )
            return outcome

        outcome = await self.store.write(work)
        if touched:
            self.hooks.changed(touched)
        return outcome

    async def _apply(
        self,
        conn: aiosqlite.Connection,
        belief_id: str,
        action: str,
        principal: Principal,
        if_match: str | None,
        payload: dict[str, Any],
        new_embedding: np.ndarray | None,
        now: str,
        touched: list[str],
    ) -> Outcome:
        row = await _fetch(conn, belief_id)
        if row is None or not principal.sees_agent(row["agent_id"]):
            return _problem(404, f"belief {belief_id!r} not found")
        current = etag(row["version"])
        if if_match is None:
            return _problem(
                428, "If-Match with the belief's ETag is required", current_etag=current
            )
        if parse_if_match(if_match) != row["version"]:
            return _problem(
                412,
                "the belief changed since you loaded it; reload and decide again",
                {"ETag": current},
                current_etag=current,
            )
        status = row["status"]
        actor = principal.actor
        if action == "keep":
            if status != "pending":
                return _problem(409, f"only a pending belief can be kept; this one is {status}")
            if row["provenance"] == "untrusted":
                return _problem(
                    409,
                    "this belief came from third-party content and cannot be kept as is;"
                    " edit it into your own words to activate it",
                )
            retiring = await _retirable(conn, row, payload.get("retire", ()))
            if isinstance(retiring, Outcome):
                return retiring
            if row["op"] == "forget":
                await _forget_target(conn, row, actor, now, f"forgotten_by:{row['id']}")
                await _transition(
                    conn,
                    row,
                    "forgotten",
                    "kept",
                    actor,
                    now,
                    forgotten_reason=f"applied:forget:{row['target_belief_id']}",
                )
            else:
                retiring = await _with_restated(conn, row, retiring)
                await _transition(conn, row, "active", "kept", actor, now)
                await _retire(conn, retiring, row["id"], actor, now)
        elif action == "forget":
            if status == "forgotten":
                return _problem(409, "this belief is already forgotten")
            reason = (payload.get("reason") or "").strip() or None
            await _transition(
                conn, row, "forgotten", "forgotten", actor, now, forgotten_reason=reason
            )
        elif action == "edit":
            retiring = await _retirable(conn, row, payload.get("retire", ()))
            if isinstance(retiring, Outcome):
                return retiring
            if status == "pending":
                retiring = await _with_restated(conn, row, retiring)
            await _transition(
                conn,
                row,
                "active",
                "edited",
                actor,
                now,
                content=payload["content"],
                embedding=new_embedding,
            )
            await _retire(conn, retiring, row["id"], actor, now)
        else:  # reopen
            if status == "pending":
                return _problem(409, "this belief is already pending")
            await _transition(conn, row, "pending", "reopened", actor, now)
            await _restore_targets(conn, row, actor, now)
        await bump_change_counter(conn)
        touched.append(row["agent_id"])
        return _ok(await _fetch(conn, belief_id))


# --- transaction helpers ------------------------------------------------------------------


async def _fetch(conn: aiosqlite.Connection, belief_id: str) -> Any:
    return await one(conn, "SELECT * FROM beliefs WHERE id = ?", (belief_id,))


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


async def _rejection(
    conn: aiosqlite.Connection, agent_id: str, proposal: ProposalIn, key: str
) -> str | None:
    """Why this proposal cannot become pending whatever the gate says, or None.

    The exact-text check runs again here, inside the writing transaction, so two concurrent
    submissions of one lesson cannot both land.
    """
    for episode_id in proposal.source_episodes:
        known = await one(
            conn, "SELECT 1 FROM episodes WHERE id = ? AND agent_id = ?", (episode_id, agent_id)
        )
        if known is None:
            return f"unknown_source_episode:{episode_id}"
    target = proposal.target_belief_id
    if proposal.op == "add" and target is not None:
        return "target_not_allowed:add"
    if proposal.op != "add":
        if target is None:
            return f"missing_target:{proposal.op}"
        target_row = await one(
            conn, "SELECT status FROM beliefs WHERE id = ? AND agent_id = ?", (target, agent_id)
        )
        if target_row is None:
            return f"unknown_target:{target}"
    same_key = await rows(
        conn,
        "SELECT id, status FROM beliefs WHERE agent_id = ? AND content_key = ? ORDER BY"
        " CASE status WHEN 'forgotten' THEN 0 WHEN 'superseded' THEN 2 ELSE 1 END, id",
        (agent_id, key),
    )
    exact = [r for r in same_key if r["id"] != target]
    if exact:
        first = exact[0]
        return f"{_PAST_DECISION.get(first['status'], 'duplicate_of')}:{first['id']}"
    return None


async def _insert_pending(
    conn: aiosqlite.Connection,
    agent_id: str,
    proposal: ProposalIn,
    key: str,
    embedding: np.ndarray,
    proposer: ProposedBy,
    actor: str,
    now: str,
) -> dict[str, Any]:
    untrusted = False
    if proposal.source_episodes:
        marks = ",".join("?" * len(proposal.source_episodes))
        untrusted = (
            await one(
                conn,
                f"SELECT 1 FROM episodes WHERE id IN ({marks}) AND origin = 'untrusted' LIMIT 1",
                tuple(proposal.source_episodes),
            )
            is not None
        )
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
    await conn.execute(
        "INSERT INTO beliefs(id, agent_id, role, content, content_key, status, confidence, op,"
        " target_belief_id, rationale, source_episodes, provenance, review_reasons, proposed_by,"
        " version, created_at, updated_at, embedding) VALUES (:id, :agent_id, :role, :content,"
        " :content_key, :status, :confidence, :op, :target_belief_id, :rationale,"
        " :source_episodes, :provenance, :review_reasons, :proposed_by, 1, :created_at,"
        " :updated_at, :embedding)",
        row,
    )
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


async def _transition(
    conn: aiosqlite.Connection,
    row: Any,
    new_status: str,
    action: str,
    actor: str,
    now: str,
    *,
    forgotten_reason: str | None = None,
    content: str | None = None,
    embedding: np.ndarray | None = None,
    detail: str = "",
    superseded_by: str | None = None,
) -> None:
    """Move one belief to ``new_status`` (bumping its version) and audit the change."""
    version = row["version"] + 1
    new_content = content if content is not None else row["content"]
    decided = action != "reopened"
    await conn.execute(
        "UPDATE beliefs SET status = ?, version = ?, updated_at = ?, decided_by = ?,"
        " decided_at = ?, forgotten_reason = ?, content = ?, content_key = ?,"
        " provenance = ?, embedding = COALESCE(?, embedding), superseded_by = ?,"
        " proposed_content = CASE WHEN ? THEN COALESCE(proposed_content, content)"
        " ELSE proposed_content END WHERE id = ?",
        (
            new_status,
            version,
            now,
            actor if decided else None,
            now if decided else None,
            forgotten_reason if new_status == "forgotten" else None,
            new_content,
            normalise(new_content),
            "owner" if content is not None else row["provenance"],
            np.asarray(embedding, dtype="<f4").tobytes() if embedding is not None else None,
            superseded_by if new_status == "superseded" else None,
            content is not None,
            row["id"],
        ),
    )
    await audit.append(
        conn,
        belief_id=row["id"],
        agent_id=row["agent_id"],
        action=action,
        actor=actor,
        at=now,
        before_status=row["status"],
        after_status=new_status,
        before_content=row["content"],
        after_content=new_content,
        version=version,
        detail=detail or (forgotten_reason or ""),
    )


async def _forget_target(
    conn: aiosqlite.Connection, row: Any, actor: str, now: str, reason: str
) -> None:
    """Forget the belief a kept `forget` proposal points at."""
    target_id = row["target_belief_id"]
    if target_id is None:
        return
    target = await _fetch(conn, target_id)
    if target is None or target["status"] in RETIRED:
        return
    await _transition(conn, target, "forgotten", "superseded", actor, now, forgotten_reason=reason)


async def _with_restated(conn: aiosqlite.Connection, row: Any, retiring: list[Any]) -> list[Any]:
    """``retiring`` plus the target a strengthen / weaken proposal restates, if still live."""
    target_id = row["target_belief_id"]
    if row["op"] not in RESTATING_OPS or target_id is None:
        return retiring
    if any(r["id"] == target_id for r in retiring):
        return retiring
    target = await _fetch(conn, target_id)
    if target is None or target["status"] in RETIRED:
        return retiring
    return [*retiring, target]


async def _retirable(
    conn: aiosqlite.Connection, row: Any, retire: Sequence[str]
) -> list[Any] | Outcome:
    """The rows ``retire`` names, or the 422 / 409 problem that refuses the whole decision.

    Only what the belief itself says it replaces may be retired: an id its review reasons flag
    as ``contradicts:<id>``, or its target when its op is ``supersede``.
    """
    if not retire:
        return []
    if row["op"] == "forget":
        return _problem(422, "a forget proposal retires only its target; retire does not apply")
    reasons = json.loads(row["review_reasons"])
    allowed = {r.removeprefix("contradicts:") for r in reasons if r.startswith("contradicts:")}
    if row["op"] == "supersede" and row["target_belief_id"] is not None:
        allowed.add(row["target_belief_id"])
    unflagged = [belief_id for belief_id in retire if belief_id not in allowed]
    if unflagged:
        return _problem(
            422,
            "retire may name only beliefs this one contradicts or supersedes",
            not_retirable=unflagged,
        )
    marks = ",".join("?" * len(retire))
    found = await rows(
        conn,
        f"SELECT * FROM beliefs WHERE agent_id = ? AND id IN ({marks})",
        (row["agent_id"], *retire),
    )
    by_id = {r["id"]: r for r in found}
    missing = [belief_id for belief_id in retire if belief_id not in by_id]
    if missing:
        return _problem(422, "retire names beliefs that do not exist", not_retirable=missing)
    inactive = [belief_id for belief_id in retire if by_id[belief_id]["status"] != "active"]
    if inactive:
        return _problem(
            409,
            "only an active belief can be retired",
            not_active={belief_id: by_id[belief_id]["status"] for belief_id in inactive},
        )
    return [by_id[belief_id] for belief_id in retire]


async def _retire(
    conn: aiosqlite.Connection, targets: Sequence[Any], by: str, actor: str, now: str
) -> None:
    """Mark each target superseded by belief ``by`` (audited as ``superseded``)."""
    for target in targets:
        await _transition(
            conn,
            target,
            "superseded",
            "superseded",
            actor,
            now,
            detail=f"superseded_by:{by}",
            superseded_by=by,
        )


async def _restore_targets(conn: aiosqlite.Connection, row: Any, actor: str, now: str) -> None:
    """Undoing a decision brings back whatever that decision retired."""
    retired = await rows(
        conn,
        "SELECT * FROM beliefs WHERE agent_id = ? AND (superseded_by = ? OR"
        " (status = 'forgotten' AND forgotten_reason IN (?, ?))) ORDER BY id",
        (row["agent_id"], row["id"], f"superseded_by:{row['id']}", f"forgotten_by:{row['id']}"),
    )
    for target in retired:
        restored = "pending" if target["provenance"] == "untrusted" else "active"
        await _transition(conn, target, restored, "restored", actor, now)
