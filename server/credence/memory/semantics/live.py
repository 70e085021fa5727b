"""An agent's live beliefs as the gate sees them, cached per process and refreshed by version.

Building the gate's index over every live belief costs far more than gating (analysing 10,000
texts), and most beliefs do not change between runs. This cache keeps each belief's parsed
form, text analysis and embedding, re-reading only beliefs whose version moved, and hands the
gate just the beliefs that could produce a reason for a given batch of proposals: those with a
proposal's duplicate key, those whose content tokens overlap a proposal's at the contradiction
Jaccard threshold, those whose canonical tokens could make a paraphrase or value change of a
proposal, those cosine-close to a proposal, and proposals' targets. No gate rule can
fire without one of those, so the verdicts equal those of an index over all live beliefs.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from credence.clock import parse_rfc3339
from credence.db import beliefs as rows_of
from credence.db import changes
from credence.memory.semantics.gate import (
    COSINE_THRESHOLD,
    JACCARD_THRESHOLD,
    LiveBelief,
    Proposal,
    structural_candidates,
)
from credence.memory.semantics.statements import statement
from credence.memory.semantics.tokens import analyse

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database

_CHUNK = 500
LOG_KEEP = 100_000
_EPSILON = 1e-6


class AgentBeliefs:
    """The cached beliefs of one agent, every status (the gate indexes the live ones)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.versions: dict[str, int] = {}
        self.beliefs: dict[str, LiveBelief] = {}
        self.jobs: dict[str, str | None] = {}
        self.keys: dict[str, str] = {}
        self.tokens: dict[str, frozenset[str]] = {}
        self.by_key: dict[str, set[str]] = {}
        self.by_token: dict[str, set[int]] = {}
        self.canonical: dict[str, frozenset[str]] = {}
        self.by_canonical: dict[str, set[int]] = {}
        self.rows: dict[str, int] = {}
        self.row_ids: list[str] = []
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._sizes = np.zeros(0, dtype=np.int32)
        self._canonical_sizes = np.zeros(0, dtype=np.int32)
        self._arrays: dict[str, np.ndarray] = {}
        self._canonical_arrays: dict[str, np.ndarray] = {}
        self._live: list[LiveBelief] | None = None
        self.cursor: int | None = None  # the belief_change_log seq this cache has seen

    @property
    def matrix(self) -> np.ndarray:
        """Embeddings, one row per belief in ``row_ids`` order (zero rows when missing)."""
        return self._matrix[: len(self.row_ids)]

    def _drop_text(self, belief_id: str) -> None:
        key = self.keys.pop(belief_id, None)
        if key is not None:
            self.by_key.get(key, set()).discard(belief_id)
        row = self.rows.get(belief_id)
        for token in self.tokens.pop(belief_id, frozenset()):
            self.by_token.get(token, set()).discard(row)
            self._arrays.pop(token, None)
        for token in self.canonical.pop(belief_id, frozenset()):
            self.by_canonical.get(token, set()).discard(row)
            self._canonical_arrays.pop(token, None)
        if row is not None:
            self._sizes[row] = 0
            self._canonical_sizes[row] = 0

    def _row_of(self, belief_id: str) -> int:
        row = self.rows.get(belief_id)
        if row is None:
            row = len(self.row_ids)
            if row >= self._matrix.shape[0]:
                capacity = max(64, row * 3 // 2)
                grown = np.zeros((capacity, self.dim), dtype=np.float32)
                grown[:row] = self._matrix[:row]
                self._matrix = grown
                sizes = np.zeros(capacity, dtype=np.int32)
                sizes[:row] = self._sizes[:row]
                self._sizes = sizes
                canonical_sizes = np.zeros(capacity, dtype=np.int32)
                canonical_sizes[:row] = self._canonical_sizes[:row]
                self._canonical_sizes = canonical_sizes
            self.rows[belief_id] = row
            self.row_ids.append(belief_id)
        return row

    def put(self, data: Any) -> None:
        """Database one freshly read beliefs row (with its proposing job as ``job``)."""
        belief_id = data["id"]
        blob = data["embedding"]
        vector = (
            np.frombuffer(blob, dtype="<f4")
            if blob is not None and len(blob) == self.dim * 4
            else None
        )
        belief = LiveBelief(
            id=belief_id,
            content=data["content"],
            status=data["status"],
            confidence=data["confidence"],
            created_at=parse_rfc3339(data["created_at"]),
            updated_at=parse_rfc3339(data["updated_at"]),
            embedding=vector,
        )
        previous = self.beliefs.get(belief_id)
        row = self._row_of(belief_id)
        if previous is None or previous.content != belief.content:
            self._drop_text(belief_id)
            key, tokens, _ = analyse(belief.content)
            self.keys[belief_id] = key
            self.tokens[belief_id] = tokens
            self.by_key.setdefault(key, set()).add(belief_id)
            for token in tokens:
                self.by_token.setdefault(token, set()).add(row)
                self._arrays.pop(token, None)
            self._sizes[row] = len(tokens)
            canonical = statement(belief.content).content
            self.canonical[belief_id] = canonical
            for token in canonical:
                self.by_canonical.setdefault(token, set()).add(row)
                self._canonical_arrays.pop(token, None)
            self._canonical_sizes[row] = len(canonical)
        self.beliefs[belief_id] = belief
        self._live = None
        self.versions[belief_id] = data["version"]
        self.jobs[belief_id] = data["job"]
        self._matrix[row] = vector if vector is not None else 0.0

    def forget_missing(self, present: set[str]) -> None:
        """Drop beliefs that no longer exist (the store never deletes them; this is defence)."""
        for belief_id in [b for b in self.beliefs if b not in present]:
            self._drop_text(belief_id)
            self.beliefs.pop(belief_id)
            self._live = None
            self.versions.pop(belief_id, None)
            self.jobs.pop(belief_id, None)
            self._matrix[self.rows[belief_id]] = 0.0  # the row stays, matching nothing

    def live(self, *, exclude_job: str | None = None) -> list[LiveBelief]:
        """Every cached belief (by id), leaving out those one job proposed."""
        if self._live is None:
            self._live = [self.beliefs[belief_id] for belief_id in sorted(self.beliefs)]
        if exclude_job is None:
            return list(self._live)
        return [b for b in self._live if self.jobs.get(b.id) != exclude_job]

    def _posting(
        self,
        token: str,
        by_token: dict[str, set[int]] | None = None,
        arrays: dict[str, np.ndarray] | None = None,
    ) -> np.ndarray | None:
        by_token = self.by_token if by_token is None else by_token
        arrays = self._arrays if arrays is None else arrays
        array = arrays.get(token)
        if array is None:
            posting = by_token.get(token)
            if not posting:
                return None
            array = np.fromiter(posting, dtype=np.int64, count=len(posting))
            arrays[token] = array
        return array

    def _structural(self, proposal: Proposal, count: int) -> np.ndarray:
        """Rows whose canonical tokens could make a paraphrase or value change of ``proposal``."""
        canonical = statement(proposal.belief).content
        shared = np.zeros(count, dtype=np.int32)
        for token in canonical:
            posting = self._posting(token, self.by_canonical, self._canonical_arrays)
            if posting is not None:
                shared[posting] += 1
        return np.flatnonzero(
            structural_candidates(shared, len(canonical), self._canonical_sizes[:count])
        )

    def relevant(
        self,
        proposals: Sequence[Proposal],
        vectors: np.ndarray | None,
        *,
        exclude_job: str | None = None,
        jaccard_threshold: float = JACCARD_THRESHOLD,
        cosine_threshold: float = COSINE_THRESHOLD,
    ) -> list[LiveBelief]:
        """The beliefs that could give any of ``proposals`` a gate reason (see module doc)."""
        chosen: set[str] = set()
        count = len(self.row_ids)
        sizes = self._sizes[:count]
        for proposal in proposals:
            key, tokens, _ = analyse(proposal.belief)
            chosen |= self.by_key.get(key, set())
            if proposal.target_belief_id is not None:
                chosen.add(proposal.target_belief_id)
            if count:
                chosen.update(self.row_ids[row] for row in self._structural(proposal, count))
            if not tokens or not count:
                continue
            shared = np.zeros(count, dtype=np.int32)
            for token in tokens:
                posting = self._posting(token)
                if posting is not None:
                    shared[posting] += 1
            hit = np.flatnonzero(shared)
            overlap = shared[hit] / (len(tokens) + sizes[hit] - shared[hit])
            chosen.update(self.row_ids[row] for row in hit[overlap >= jaccard_threshold - _EPSILON])
        if vectors is not None and count and vectors.shape[1] == self.dim:
            close = np.flatnonzero(
                (self.matrix @ vectors.T >= cosine_threshold - _EPSILON).any(axis=1)
            )
            chosen.update(self.row_ids[row] for row in close)
        return [
            self.beliefs[belief_id]
            for belief_id in sorted(chosen)
            if belief_id in self.beliefs
            and (exclude_job is None or self.jobs.get(belief_id) != exclude_job)
        ]


# store -> {(agent id, embedding dim): AgentBeliefs}
_CACHE: weakref.WeakKeyDictionary[Any, dict[tuple[str, int], AgentBeliefs]] = (
    weakref.WeakKeyDictionary()
)


async def agent_beliefs(store: Database, agent_id: str, dim: int) -> AgentBeliefs:
    """The agent's live beliefs, brought up to date: only changed beliefs are re-read.

    Every call reads the change log, so changes committed by other processes (replicas on one
    PostgreSQL, or CLI commands) are seen on the next gate run. The log names the beliefs
    changed since this cache last looked; a cache that is new, or that fell behind the log's
    pruning, compares every belief's version instead.
    """
    per_store = _CACHE.setdefault(store, {})
    cached = per_store.get((agent_id, dim))
    if cached is None:
        cached = AgentBeliefs(dim)
        per_store[(agent_id, dim)] = cached

    async def work(conn: Connection) -> None:
        await _refresh(conn, cached, agent_id)

    await store.read(work)
    return cached


async def _refresh(conn: Connection, cached: AgentBeliefs, agent_id: str) -> None:
    first, last = await changes.log_bounds(conn)
    window = changes.reread_window(conn)
    if cached.cursor is not None and first is not None and cached.cursor >= first - 1:
        # PostgreSQL may commit a log entry below the cursor after the cursor was read: the
        # window below it is read again, and a belief there is re-read only if its version moved.
        logged = await changes.changed_beliefs(conn, agent_id, cached.cursor - window, last)
        stale = [
            belief_id
            for belief_id, seq, version in logged
            if seq > cached.cursor or cached.versions.get(belief_id) != version
        ]
    else:
        current = await rows_of.versions(conn, agent_id)
        stale = [b for b, version in current.items() if cached.versions.get(b) != version]
        if len(cached.beliefs) > len(current):
            cached.forget_missing(set(current))
    for row in await rows_of.gate_rows(conn, stale):
        cached.put(row)
    cached.cursor = last if first is not None else None


async def prune_log(store: Database, keep: int = LOG_KEEP) -> int:
    """Delete all but the newest ``keep`` change-log entries; returns how many went."""
    return await store.write(lambda conn: changes.prune_log(conn, keep))


def forget_cache(store: Database | None = None) -> None:
    """Drop cached beliefs (of one store, or all)."""
    if store is None:
        _CACHE.clear()
    else:
        _CACHE.pop(store, None)


def by_status(beliefs: Iterable[LiveBelief], status: str) -> list[LiveBelief]:
    """The beliefs with one status, in the given order."""
    return [belief for belief in beliefs if belief.status == status]
