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
from credence.memory import audit
from credence.memory.redact import redact
from credence.models import Belief, ProposalIn, ProposalResult, ProposedBy
from credence.reflection.text import is_negative, normalise

if TYPE_CHECKING:
    import aiosqlite

    from credence.auth import Principal
    from credence.db.store import Store
    from credence.embed import Embedder

NEAR_DUPLICATE_COSINE = 0.92
DECISIONS = ("keep", "forget", "edit", "reopen")

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


async def change_counter(store: Store) -> int:
    """The store-wide belief change counter."""
    row = await store.fetchone("SELECT value FROM store_state WHERE name = 'belief_changes'")
    return int(row["value"])


class AgentVectors(msgspec.Struct):
    """An agent's belief embeddings with what near-duplicate checks need to know of each."""

    counter: int
    ids: list[str]
    statuses: list[str]
    versions: list[int]
    negative: list[bool]
    matrix: np.ndarray


class BeliefService:
    """Everything that changes a belief goes through here: one code path, one audit trail."""

    def __init__(self, store: Store, embedder: Embedder, clock: Clock, hooks: BeliefHooks) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.hooks = hooks
        self._vectors: dict[str, AgentVectors] = {}

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

    async def vectors(self, agent_id: str) -> AgentVectors:
        """The agent's belief embeddings; after a change only changed or new rows are re-read."""
        counter = await change_counter(self.store)
        cached = self._vectors.get(agent_id)
        if cached is not None and cached.counter == counter:
            return cached
        heads = await self.store.fetchall(
            "SELECT id, status, version FROM beliefs"
            " WHERE agent_id = ? AND embedding IS NOT NULL ORDER BY id",
            (agent_id,),
        )
        position = (
            {belief_id: i for i, belief_id in enumerate(cached.ids)} if cached is not None else {}
        )
        stale = [
            h["id"]
            for h in heads
            if h["id"] not in position or cached.versions[position[h["id"]]] != h["version"]
        ]
        fresh: dict[str, tuple[bool, np.ndarray]] = {}
        for start in range(0, len(stale), 500):
            chunk = stale[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = await self.store.fetchall(
                f"SELECT id, content, embedding FROM beliefs WHERE id IN ({marks})", tuple(chunk)
            )
            for row in rows:
                vector = np.frombuffer(row["embedding"], dtype="<f4")
                fresh[row["id"]] = (is_negative(row["content"]), vector)
        dim = self.embedder.dim
        matrix = np.zeros((len(heads), dim), dtype=np.float32)
        negative = []
        for i, head in enumerate(heads):
            if head["id"] in fresh:
                flag, matrix[i] = fresh[head["id"]]
            else:
                old = position[head["id"]]
                flag, matrix[i] = cached.negative[old], cached.matrix[old]
            negative.append(flag)
        vectors = AgentVectors(
            counter,
            [h["id"] for h in heads],
            [h["status"] for h in heads],
            [h["version"] for h in heads],
            negative,
            matrix,
        )
        self._vectors[agent_id] = vectors
        return vectors

    # --- proposals -----------------------------------------------------------------------

    async def propose(
        self,
        agent_id: str,
        proposals: Sequence[ProposalIn],
        proposer: ProposedBy,
        actor: str,
    ) -> list[ProposalResult]:
        """Turn proposals into pending beliefs, rejecting duplicates and refused lessons."""
        if not proposals:
            return []
        # A reflector may echo a credential from its input: proposals are redacted like episodes.
        proposals = [
            msgspec.structs.replace(
                p, belief=redact(p.belief).text, rationale=redact(p.rationale).text
            )
            for p in proposals
        ]
        embeddings = await self.embedder.embed([p.belief for p in proposals])
        known = await self.vectors(agent_id)
        polarity = [is_negative(p.belief) for p in proposals]
        near = _nearest(embeddings, polarity, known)
        now = rfc3339(self.clock())

        async def work(conn: aiosqlite.Connection) -> list[ProposalResult]:
            results: list[ProposalResult] = []
            accepted: list[tuple[int, str, np.ndarray]] = []
            for index, proposal in enumerate(proposals):
                key = normalise(proposal.belief)
                reason = None
                for earlier_index, earlier_key, earlier_vec in accepted:
                    same = earlier_key == key
                    close = float(earlier_vec @ embeddings[index]) >= NEAR_DUPLICATE_COSINE
                    if same or (close and polarity[earlier_index] == polarity[index]):
                        reason = f"duplicate_in_batch:{earlier_index}"
                        break
                if reason is None:
                    reason = await _rejection(conn, agent_id, proposal, near[index])
                if reason is not None:
                    results.append(ProposalResult(index, False, None, reason))
                    continue
                row = await _insert_pending(
                    conn, agent_id, proposal, key, embeddings[index], proposer, actor, now
                )
                for hook in self.hooks.in_txn_pending:
                    await hook(conn, row)
                accepted.append((index, key, embeddings[index]))
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
            payload = {**payload, "content": redact(payload["content"]).text}
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
                if row["op"] != "add":
                    await _forget_target(conn, row, actor, now, f"superseded_by:{row['id']}")
                await _transition(conn, row, "active", "kept", actor, now)
        elif action == "forget":
            if status == "forgotten":
                return _problem(409, "this belief is already forgotten")
            reason = (payload.get("reason") or "").strip() or None
            await _transition(
                conn, row, "forgotten", "forgotten", actor, now, forgotten_reason=reason
            )
        elif action == "edit":
            if status == "pending" and row["op"] in ("supersede", "strengthen", "weaken"):
                await _forget_target(conn, row, actor, now, f"superseded_by:{row['id']}")
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


def _nearest(
    embeddings: np.ndarray, polarity: list[bool], known: AgentVectors
) -> list[list[tuple[str, str, float]]]:
    """For each proposal, the known beliefs at or above the near-duplicate cosine, best first.

    "Always X" and "Never X" embed almost alike; a pair of opposite polarity is a contradiction
    for the gate and the reviewer to see, never a duplicate to drop silently.
    """
    if known.matrix.shape[0] == 0:
        return [[] for _ in range(embeddings.shape[0])]
    scores = embeddings @ known.matrix.T
    found = []
    for row, negative in zip(scores, polarity, strict=True):
        hits = [
            i for i in np.nonzero(row >= NEAR_DUPLICATE_COSINE)[0] if known.negative[i] == negative
        ]
        ordered = sorted(hits, key=lambda i: -row[i])
        found.append([(known.ids[i], known.statuses[i], float(row[i])) for i in ordered])
    return found


async def _rejection(
    conn: aiosqlite.Connection,
    agent_id: str,
    proposal: ProposalIn,
    near: list[tuple[str, str, float]],
) -> str | None:
    """Why this proposal cannot become pending, or None when it can."""
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
        " CASE status WHEN 'forgotten' THEN 0 ELSE 1 END, id",
        (agent_id, normalise(proposal.belief)),
    )
    exact = [r for r in same_key if r["id"] != target]
    if exact:
        first = exact[0]
        prefix = "previously_forgotten" if first["status"] == "forgotten" else "duplicate_of"
        return f"{prefix}:{first['id']}"
    near = [n for n in near if n[0] != target]
    forgotten = [n for n in near if n[1] == "forgotten"]
    if forgotten:
        return f"previously_forgotten:{forgotten[0][0]}"
    if near:
        return f"near_duplicate_of:{near[0][0]}"
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
    row = {
        "id": new_id("b"),
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
        "provenance": "untrusted" if untrusted else "clean",
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
        belief_id=row["id"],
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
) -> None:
    """Move one belief to ``new_status`` (bumping its version) and audit the change."""
    version = row["version"] + 1
    new_content = content if content is not None else row["content"]
    decided = action != "reopened"
    await conn.execute(
        "UPDATE beliefs SET status = ?, version = ?, updated_at = ?, decided_by = ?,"
        " decided_at = ?, forgotten_reason = ?, content = ?, content_key = ?,"
        " provenance = ?, embedding = COALESCE(?, embedding) WHERE id = ?",
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
    """Retire the belief a supersede / strengthen / weaken / forget proposal points at."""
    target_id = row["target_belief_id"]
    if target_id is None:
        return
    target = await _fetch(conn, target_id)
    if target is None or target["status"] == "forgotten":
        return
    await _transition(conn, target, "forgotten", "superseded", actor, now, forgotten_reason=reason)


async def _restore_targets(conn: aiosqlite.Connection, row: Any, actor: str, now: str) -> None:
    """Undoing a decision brings back whatever that decision retired."""
    retired = await rows(
        conn,
        "SELECT * FROM beliefs WHERE agent_id = ? AND status = 'forgotten'"
        " AND forgotten_reason IN (?, ?)",
        (row["agent_id"], f"superseded_by:{row['id']}", f"forgotten_by:{row['id']}"),
    )
    for target in retired:
        restored = "pending" if target["provenance"] == "untrusted" else "active"
        await _transition(conn, target, restored, "restored", actor, now)
