"""The read path: active beliefs from a hot cache per (agent, role) plus recall, as a prompt."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np

from credence.clock import Clock, parse_rfc3339
from credence.db import recall as db_recall
from credence.embed import EmbeddingUnavailable
from credence.memory import recall
from credence.memory.episodes import AgentMissing
from credence.memory.gate import decayed_confidence
from credence.memory.injection import InjectionRecorder, flush_forever, stop_flushing
from credence.memory.prompt_block import (
    BlockEpisode,
    BlockNote,
    Section,
    assemble,
    episodes_section,
    new_nonce,
    notes_section,
)
from credence.memory.recall import EpisodeSearch, recall_episode_search
from credence.models import MemoryContext, MemoryNote, RelevantEpisode

if TYPE_CHECKING:
    from credence.db.engine import Database
    from credence.embed import Embedder
    from credence.services import Services

log = logging.getLogger("credence.context")

MAX_LIMIT = 50
DEFAULT_LIMIT = 10
MAX_CACHE_ENTRIES = 4096
# How stale a change made by another process may be seen (this process's own are seen at once).
RECHECK_S = 0.25
DEFAULT_LAMBDA = 0.02
# Provenances a served belief may have. The schema already refuses an active untrusted belief;
# the read path checks again so that no future migration or bug can put one in a prompt.
SERVABLE_PROVENANCE = ("clean", "owner", "unsourced")


@dataclass(frozen=True, slots=True)
class CachedNote:
    """An active belief as the cache keeps it."""

    belief_id: str
    content: str
    confidence: float
    anchor: datetime


@dataclass(frozen=True, slots=True)
class Served:
    """What one (agent, role, limit) serves during one second: notes and their rendered section.

    Decay moves a confidence by about λ·c per day, far below the 6 decimals served within a
    second, so everything but the nonce is rendered once per second and reused.
    """

    second: int
    notes: list[MemoryNote]
    section: Section
    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """The servable beliefs of one (agent, role), best first, as of one change counter.

    What a query needs besides (each note's position, the embeddings as one matrix) is built
    on the first query and kept until the entry is dropped, so the no-query path holds no
    embeddings.
    """

    counter: int
    lambda_per_day: float
    notes: tuple[CachedNote, ...]
    served: dict[int, Served] = field(default_factory=dict, compare=False)
    derived: dict[Any, Any] = field(default_factory=dict, compare=False)

    def positions(self) -> dict[str, int]:
        """Belief id -> its place in ``notes`` (0 is the most confident)."""
        found = self.derived.get("positions")
        if found is None:
            found = {note.belief_id: i for i, note in enumerate(self.notes)}
            self.derived["positions"] = found
        return found

    def columns(self, dim: int) -> np.ndarray | None:
        """The notes' embeddings as a (dim, notes) matrix, once ``keep_columns`` stored it."""
        return self.derived.get(("columns", dim))

    def keep_columns(self, rows: list[Any], dim: int) -> np.ndarray:
        """Build the (dim, notes) matrix from (id, embedding) rows; zero where none fits."""
        positions = self.positions()
        width = dim * 4
        found = [(positions[r[0]], r[1]) for r in rows if r[0] in positions and len(r[1]) == width]
        columns = np.zeros((dim, len(self.notes)), dtype=np.float32)
        if found:
            joined = np.frombuffer(b"".join(blob for _, blob in found), dtype="<f4")
            columns[:, [p for p, _ in found]] = joined.reshape(len(found), dim).T
        self.derived[("columns", dim)] = columns
        return columns


def rank_notes(rows: list[Any], lambda_per_day: float) -> tuple[CachedNote, ...]:
    """Servable beliefs ordered by decayed confidence, best first (ties by id).

    The order is computed on log(confidence) + λ·anchor (in days since the epoch), which differs
    from the log of the decayed confidence only by λ·now, a term every belief shares: the order
    holds at any later moment, so the cache never needs re-sorting, and very old beliefs keep
    their order instead of all underflowing to zero.
    """
    keyed = []
    lam = max(lambda_per_day, 0.0)
    for row in rows:
        if row["provenance"] not in SERVABLE_PROVENANCE:
            continue
        anchor = max(parse_rfc3339(row["created_at"]), parse_rfc3339(row["updated_at"]))
        confidence = float(row["confidence"])
        log_confidence = math.log(confidence) if confidence > 0 else -math.inf
        key = log_confidence + lam * anchor.timestamp() / 86400.0
        keyed.append((-key, row["id"], CachedNote(row["id"], row["content"], confidence, anchor)))
    keyed.sort(key=lambda item: (item[0], item[1]))
    return tuple(note for _, _, note in keyed)


class HotCache:
    """Servable beliefs per (agent, role), bounded LRU, dropped per agent on every change.

    Each agent has a generation that every invalidation bumps; a rebuild that started before an
    invalidation carries the old generation and is not stored, so a read racing a decision can
    never put pre-decision memory back into the cache.
    """

    def __init__(self, max_entries: int = MAX_CACHE_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str | None], CacheEntry] = OrderedDict()
        self._roles: dict[str, set[str | None]] = {}
        self._generations: dict[str, int] = {}
        self.hits = 0
        self.misses = 0

    def generation(self, agent_id: str) -> int:
        """How many times ``agent_id`` has been invalidated in this process."""
        return self._generations.get(agent_id, 0)

    def get(
        self, agent_id: str, role: str | None, counter: int, lambda_per_day: float
    ) -> CacheEntry | None:
        """The entry if it is at least as fresh as ``counter`` and built with the same λ."""
        key = (agent_id, role)
        entry = self._entries.get(key)
        if entry is None or entry.counter < counter or entry.lambda_per_day != lambda_per_day:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry

    def put(
        self, agent_id: str, role: str | None, entry: CacheEntry, generation: int | None = None
    ) -> bool:
        """Store an entry unless the agent was invalidated since ``generation``; evict LRU."""
        if generation is not None and generation != self.generation(agent_id):
            return False
        key = (agent_id, role)
        self._entries[key] = entry
        self._entries.move_to_end(key)
        self._roles.setdefault(agent_id, set()).add(role)
        while len(self._entries) > self.max_entries:
            (old_agent, old_role), _ = self._entries.popitem(last=False)
            roles = self._roles.get(old_agent)
            if roles is not None:
                roles.discard(old_role)
                if not roles:
                    del self._roles[old_agent]
        return True

    def invalidate(self, agent_id: str) -> None:
        """Drop every entry of one agent (the after-commit hook of every belief change)."""
        self._generations[agent_id] = self.generation(agent_id) + 1
        for role in self._roles.pop(agent_id, ()):
            self._entries.pop((agent_id, role), None)

    def __len__(self) -> int:
        return len(self._entries)


def _lambda_of(settings_json: str) -> float:
    try:
        value = json.loads(settings_json).get("lambda_per_day", DEFAULT_LAMBDA)
    except (ValueError, AttributeError):
        return DEFAULT_LAMBDA
    return float(value) if isinstance(value, int | float) else DEFAULT_LAMBDA


@dataclass(frozen=True, slots=True)
class AgentState:
    """What the read path knows about an agent: its decay rate and the last change counter."""

    lambda_per_day: float
    counter: int
    checked_at: float


class ContextService:
    """Builds an agent's memory context; one per process, shared by every request.

    Changes made through this process invalidate the cache at once (the after-commit hook).
    Changes made by another process (on the same data dir, or another replica on the same
    PostgreSQL) are noticed through the store's change counter, read with the agent row at most
    once per ``recheck_s`` per agent, so a warm read touches no database at all.
    """

    def __init__(
        self,
        store: Database,
        clock: Clock,
        recorder: InjectionRecorder | None = None,
        episode_search: EpisodeSearch | None = None,
        cache: HotCache | None = None,
        recheck_s: float = RECHECK_S,
        monotonic: Callable[[], float] = time.monotonic,
        embedder: Embedder | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.recorder = recorder or InjectionRecorder()
        self.episode_search = episode_search
        self.embedder = embedder
        self.cache = cache or HotCache()
        self.recheck_s = recheck_s
        self._monotonic = monotonic
        self._agents: dict[str, AgentState] = {}
        self._building: dict[tuple[str, str | None], tuple[asyncio.Future[CacheEntry], int]] = {}
        self.rebuilds = 0
        self.checks = 0

    def invalidate(self, agent_id: str) -> None:
        """Forget the cached beliefs of ``agent_id`` (registered as a BeliefHooks.after_change)."""
        self.cache.invalidate(agent_id)
        self._agents.pop(agent_id, None)

    async def agent_state(self, agent_id: str) -> AgentState:
        """The agent's decay rate and change counter, re-read at most every ``recheck_s``.

        Raises AgentMissing when the agent does not exist.
        """
        state = self._agents.get(agent_id)
        now = self._monotonic()
        if state is not None and now - state.checked_at < self.recheck_s:
            return state
        self.checks += 1
        # The agent row and the store-wide change counter in one indexed read: freshness is
        # checked (another process may have changed a belief) without a second round trip.
        row = await self.store.read(
            lambda conn: db_recall.agent_settings_and_changes(conn, agent_id)
        )
        if row is None:
            self._agents.pop(agent_id, None)
            raise AgentMissing(agent_id)
        state = AgentState(_lambda_of(row[0]), row[1], now)
        if len(self._agents) >= MAX_CACHE_ENTRIES:
            self._agents.clear()
        self._agents[agent_id] = state
        return state

    async def notes(
        self, agent_id: str, role: str | None, limit: int = DEFAULT_LIMIT
    ) -> tuple[list[MemoryNote], datetime]:
        """The top ``limit`` servable beliefs for (agent, role) and the moment they were read.

        Raises AgentMissing when the agent does not exist.
        """
        state = await self.agent_state(agent_id)
        entry = self.cache.get(agent_id, role, state.counter, state.lambda_per_day)
        if entry is None:
            entry = await self._rebuild(agent_id, role, state.lambda_per_day)
        now = self.clock()
        return list(self._served(entry, limit, now).notes), now

    def _served(self, entry: CacheEntry, limit: int, now: datetime) -> Served:
        limit = max(0, min(limit, MAX_LIMIT))
        second = math.floor(now.timestamp())
        served = entry.served.get(limit)
        if served is not None and served.second == second:
            return served
        notes = [_memory_note(note, now, entry.lambda_per_day) for note in entry.notes[:limit]]
        section = notes_section([BlockNote(n.content) for n in notes])
        served = Served(second, notes, section, tuple(n.belief_id for n in notes))
        entry.served[limit] = served
        return served

    async def _embedded(self, query: str) -> np.ndarray | None:
        """The query's embedding as a (1, dim) matrix, or None when the embedder is down."""
        if self.embedder is None:
            return None
        try:
            vectors = np.asarray(await self.embedder.embed([query]), dtype=np.float32)
        except EmbeddingUnavailable as exc:
            log.warning("embedder unavailable; ranking notes by text alone: %s", exc)
            return None
        return vectors if vectors.ndim == 2 and vectors.shape[0] == 1 else None

    async def chosen_for_query(
        self,
        agent_id: str,
        entry: CacheEntry,
        query: str,
        vectors: np.ndarray | None,
        limit: int,
        now: datetime,
    ) -> list[int]:
        """Positions (in ``entry.notes``) of the notes a query chooses, best first.

        Candidates come from the query's terms (FTS5 BM25 over belief text) and from embedding
        cosine, each ranking ``depth`` deep like recall's; ``relevance_order`` fuses them with
        each note's decayed confidence.
        """
        if not entry.notes or limit < 1:
            return []
        depth = min(recall.MAX_DEPTH, max(recall.MIN_DEPTH, 2 * limit))
        try:
            by_text = await recall.belief_text_ranking(
                self.store, agent_id, query, entry.positions(), depth
            )
        except recall.RecallUnavailable as exc:
            log.warning("belief text index unavailable for %s: %s", agent_id, exc)
            by_text = []
        by_vector: list[tuple[int, float]] = []
        if vectors is not None:
            dim = int(vectors.shape[1])
            columns = entry.columns(dim)
            if columns is None:
                # Read once per entry; a change drops the entry, and the next query reads again.
                rows = await self.store.read(
                    lambda conn: db_recall.active_embeddings(conn, agent_id)
                )
                columns = entry.keep_columns(rows, dim)
            everyone = np.ones(columns.shape[1], dtype=bool)
            rankings = recall.vector_rankings(columns, everyone, vectors, depth)
            by_vector = rankings[0] if rankings else []
        lam = entry.lambda_per_day
        candidates = {position for position, _ in by_text} | {p for p, _ in by_vector}
        confidence = {
            p: decayed_confidence(entry.notes[p].confidence, entry.notes[p].anchor, now, lam)
            for p in candidates
        }
        return relevance_order(by_text, by_vector, confidence, limit)

    async def _for_query(
        self,
        agent_id: str,
        entry: CacheEntry,
        query: str,
        vectors: np.ndarray | None,
        limit: int,
        now: datetime,
    ) -> list[MemoryNote]:
        """The notes a query chose, then the most confident others up to ``limit``."""
        limit = max(0, min(limit, MAX_LIMIT))
        chosen = await self.chosen_for_query(agent_id, entry, query, vectors, limit, now)
        taken = set(chosen)
        rest = (p for p in range(len(entry.notes)) if p not in taken)
        lam = entry.lambda_per_day
        return [_memory_note(entry.notes[p], now, lam, for_query=True) for p in chosen] + [
            _memory_note(entry.notes[p], now, lam) for p in islice(rest, limit - len(chosen))
        ]

    async def _rebuild(self, agent_id: str, role: str | None, lam: float) -> CacheEntry:
        """One indexed query for the (agent, role); concurrent misses share one rebuild."""
        key = (agent_id, role)
        generation = self.cache.generation(agent_id)
        building = self._building.get(key)
        # Join a rebuild in flight only if no change has invalidated the agent since it began.
        if building is not None and building[1] == generation:
            return await asyncio.shield(building[0])
        future: asyncio.Future[CacheEntry] = asyncio.get_running_loop().create_future()
        self._building[key] = (future, generation)

        self.rebuilds += 1
        try:
            # Counter first: rows read after it are at least that fresh, so a change that lands
            # in between only causes one extra rebuild, never a stale entry.
            counter, rows = await self.store.read(
                lambda conn: db_recall.counter_and_servable_beliefs(conn, agent_id, role)
            )
            entry = CacheEntry(counter, lam, rank_notes(rows, lam))
            self.cache.put(agent_id, role, entry, generation)
            future.set_result(entry)
            return entry
        except BaseException as exc:
            future.set_exception(exc)
            # Nobody else may be waiting; retrieve the exception so asyncio does not warn.
            future.exception()
            raise
        finally:
            if self._building.get(key, (None,))[0] is future:
                del self._building[key]

    async def context(
        self,
        agent_id: str,
        *,
        role: str | None,
        query: str | None,
        limit: int = DEFAULT_LIMIT,
        include_untrusted: bool = False,
    ) -> MemoryContext:
        """Notes, relevant episodes and the prompt block; records which beliefs were served.

        Without a query the notes are the most confident (decayed), read from the hot cache
        with no database work; with one, the notes the query chooses come first (marked
        ``for_query``), then the most confident others, and recall finds the episodes.
        """
        state = await self.agent_state(agent_id)
        entry = self.cache.get(agent_id, role, state.counter, state.lambda_per_day)
        if entry is None:
            entry = await self._rebuild(agent_id, role, state.lambda_per_day)
        episodes: list[RelevantEpisode] = []
        now = self.clock()
        query = query.strip() if query else None
        if query:
            vectors = await self._embedded(query)
            chosen = self._for_query(agent_id, entry, query, vectors, limit, now)
            if self.episode_search is None:
                notes = await chosen
            else:
                # Each side's Python work overlaps the other's wait for the database thread.
                notes, episodes = await asyncio.gather(
                    chosen, self.episode_search(agent_id, query, limit, include_untrusted, vectors)
                )
            section = notes_section([BlockNote(n.content, n.for_query) for n in notes])
            ids: tuple[str, ...] = tuple(n.belief_id for n in notes)
        else:
            served = self._served(entry, limit, now)
            notes, section, ids = served.notes, served.section, served.ids
        if ids:
            self.recorder.record(ids, now)
        block = assemble(
            section, episodes_section([BlockEpisode(e.summary) for e in episodes]), new_nonce()
        )
        return MemoryContext(
            memory_notes=notes, recent_relevant_episodes=episodes, prompt_block=block
        )


def relevance_order(
    by_text: Sequence[tuple[int, float]],
    by_vector: Sequence[tuple[int, float]],
    confidence: Mapping[int, float],
    limit: int,
) -> list[int]:
    """The ``limit`` best candidates by relevance to a query, weighted by confidence.

    Each ranking's scores (BM25, cosine) are rescaled to 0..1 between its weakest and its best
    candidate, and a note's relevance is the mean of its two rescaled scores (0 where a
    ranking did not list it). The final score is relevance × (1 + confidence) / 2: confidence
    can at most halve it, so a note that answers the query outranks a confident note that
    merely shares a word, while among equally relevant notes the more confident comes first.
    Ties go to the smaller position (the more confident note); a note with no relevance at
    all (the weakest of one ranking, absent from the other) is not chosen.
    """
    relevance: dict[int, float] = {}
    for ranking in (by_text, by_vector):
        if not ranking:
            continue
        scores = [score for _, score in ranking]
        best, weakest = max(scores), min(scores)
        span = best - weakest
        for position, score in ranking:
            scaled = (score - weakest) / span if span > 0 else 1.0
            relevance[position] = relevance.get(position, 0.0) + scaled / 2
    final = {
        position: value * (1.0 + confidence.get(position, 0.0)) / 2
        for position, value in relevance.items()
        if value > 0
    }
    return sorted(final, key=lambda position: (-final[position], position))[: max(limit, 0)]


def _memory_note(
    note: CachedNote, now: datetime, lambda_per_day: float, *, for_query: bool = False
) -> MemoryNote:
    return MemoryNote(
        belief_id=note.belief_id,
        content=note.content,
        confidence=note.confidence,
        decayed_confidence=round(
            decayed_confidence(note.confidence, note.anchor, now, lambda_per_day), 6
        ),
        for_query=for_query,
    )


def context_of(services: Services) -> ContextService:
    """The process's ContextService, created (and hooked to belief changes) on first use."""
    existing = services.context
    if existing is not None:
        return existing
    service = ContextService(
        services.store,
        services.clock,
        episode_search=recall_episode_search(services.store, services.embedder),
        embedder=services.embedder,
    )
    services.hooks.after_change.append(service.invalidate)
    services.context = service
    return service


async def memory_context(
    services: Services,
    agent_id: str,
    *,
    role: str | None = None,
    query: str | None = None,
    limit: int = DEFAULT_LIMIT,
    include_untrusted: bool = False,
) -> MemoryContext:
    """An agent's memory context: what the REST endpoint and the MCP tool both serve.

    Raises AgentMissing when the agent does not exist.
    """
    return await context_of(services).context(
        agent_id, role=role, query=query, limit=limit, include_untrusted=include_untrusted
    )


def context_component(interval_s: float = 0.5) -> Callable[[Services], Any]:
    """A Component: the context service plus its injection flusher, stopped before the store."""

    @asynccontextmanager
    async def component(services: Services) -> AsyncIterator[ContextService]:
        service = context_of(services)
        task = asyncio.create_task(
            flush_forever(service.recorder, services.store, interval_s), name="credence-injections"
        )
        try:
            yield service
        finally:
            await stop_flushing(task, service.recorder, services.store)

    return component
