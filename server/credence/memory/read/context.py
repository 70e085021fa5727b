"""The read path: active beliefs from a hot cache per (agent, role) plus recall, as a prompt."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np

from credence.clock import Clock, parse_rfc3339
from credence.db import recall as db_recall
from credence.embed import EmbeddingUnavailable
from credence.memory.ingest.episodes import AgentMissing
from credence.memory.read.hot_cache import MAX_CACHE_ENTRIES, HotCache
from credence.memory.read.injection import InjectionRecorder, flush_forever, stop_flushing
from credence.memory.read.prompt_block import (
    BlockEpisode,
    BlockNote,
    Section,
    assemble,
    episodes_section,
    new_nonce,
    notes_section,
)
from credence.memory.read.recall import EpisodeSearch, recall_episode_search
from credence.memory.semantics.gate import decayed_confidence
from credence.memory.semantics.ranking import (
    DEFAULT_WEIGHTS,
    Choice,
    DenseIndex,
    KeywordIndex,
    QueryVectors,
    Weights,
    choose,
    decayed,
    signals_needed,
)
from credence.models import MemoryContext, MemoryNote, NoteWhy, RelevantEpisode
from credence.observe import metrics, tracing

if TYPE_CHECKING:
    from credence.db.engine import Database
    from credence.embed import Embedder

log = logging.getLogger("credence.context")

MAX_LIMIT = 50
DEFAULT_LIMIT = 10
# Queries whose ranking one (agent, role) entry keeps: agents repeat their task queries.
ANSWERS_PER_ENTRY = 256
# How stale a change made by another process may be seen (this process's own are seen at once).
RECHECK_S = 0.25
DEFAULT_LAMBDA = 0.02
# Provenances a served belief may have. The schema already refuses an active untrusted belief;
# the read path checks again so that no future migration or bug can put one in a prompt.
SERVABLE_PROVENANCE = ("clean", "owner", "unsourced", "imported")


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


@dataclass(slots=True)
class Answered:
    """A query's chosen notes on one cache entry, and what they rendered to in one second."""

    choices: list[Choice]
    served: Served | None = None


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
    # (query, limit) -> its answer, least recently asked first; dropped with the entry.
    answers: OrderedDict[tuple[str, int], Answered] = field(
        default_factory=OrderedDict, compare=False
    )

    def positions(self) -> dict[str, int]:
        """Belief id -> its place in ``notes`` (0 is the most confident)."""
        found = self.derived.get("positions")
        if found is None:
            found = {note.belief_id: i for i, note in enumerate(self.notes)}
            self.derived["positions"] = found
        return found

    def keywords(self) -> KeywordIndex:
        """BM25 over the notes' text, built on the first query of this entry."""
        found = self.derived.get("keywords")
        if found is None:
            found = KeywordIndex([note.content for note in self.notes])
            self.derived["keywords"] = found
        return found

    def dense(self, dim: int) -> DenseIndex | None:
        """Cosine over the notes' embeddings, once ``keep_columns`` stored them."""
        found = self.derived.get(("dense", dim))
        if found is None:
            columns = self.columns(dim)
            if columns is None:
                return None
            found = DenseIndex(columns)
            self.derived[("dense", dim)] = found
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


def _lambda_of(settings: Any) -> float:
    if not isinstance(settings, dict):
        return DEFAULT_LAMBDA
    value = settings.get("lambda_per_day", DEFAULT_LAMBDA)
    return float(value) if isinstance(value, int | float) else DEFAULT_LAMBDA


@dataclass(frozen=True, slots=True)
class AgentState:
    """The agent's decay rate, the last change counter and episode state, when last read."""

    lambda_per_day: float
    counter: int
    checked_at: float
    episodes: int = 0


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
        cache: HotCache[CacheEntry] | None = None,
        recheck_s: float = RECHECK_S,
        monotonic: Callable[[], float] = time.monotonic,
        embedder: Embedder | None = None,
        weights: Weights = DEFAULT_WEIGHTS,
    ) -> None:
        self.store = store
        self.clock = clock
        self.recorder = recorder or InjectionRecorder()
        self.episode_search = episode_search
        self.embedder = embedder
        self.query_vectors = QueryVectors()
        self._recalled: OrderedDict[tuple[str, str, int, bool], Any] = OrderedDict()
        self.weights = weights
        self.cache: HotCache[CacheEntry] = cache or HotCache()
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
            lambda conn: db_recall.agent_settings_and_changes(conn, agent_id), inline=True
        )
        if row is None:
            self._agents.pop(agent_id, None)
            raise AgentMissing(agent_id)
        state = AgentState(_lambda_of(row[0]), row[1], now, row[2])
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
        served = _rendered(second, notes)
        entry.served[limit] = served
        return served

    async def _embedded(self, query: str) -> np.ndarray | None:
        """The query's (1, dim) embedding, cached by text; None when the embedder is down."""
        if self.embedder is None:
            return None
        cached = self.query_vectors.get(self.embedder.name, query)
        if cached is not None:
            return cached
        try:
            vectors = np.asarray(await self.embedder.embed([query]), dtype=np.float32)
        except EmbeddingUnavailable as exc:
            log.warning("embedder unavailable; ranking notes by text alone: %s", exc)
            return None
        if vectors.ndim != 2 or vectors.shape[0] != 1:
            return None
        self.query_vectors.put(self.embedder.name, query, vectors)
        return vectors

    async def dense_index(
        self, agent_id: str, entry: CacheEntry, vectors: np.ndarray | None
    ) -> DenseIndex | None:
        """The entry's cosine index for the query's dimension, read once per entry (a change
        drops the entry, and the next query reads the notes' embeddings again)."""
        if vectors is None or not entry.notes:
            return None
        dim = int(vectors.shape[1])
        index = entry.dense(dim)
        if index is None:
            rows = await self.store.read(lambda conn: db_recall.active_embeddings(conn, agent_id))
            entry.keep_columns(rows, dim)
            index = entry.dense(dim)
        return index

    def chosen_for_query(
        self,
        entry: CacheEntry,
        query: str,
        index: DenseIndex | None,
        vectors: np.ndarray | None,
        limit: int,
        now: datetime,
    ) -> list[Choice]:
        """The notes a query chooses, best first, with why (see ``ranking.choose``).

        All in memory: cosine over the notes' matrix, and BM25 over their text or decayed
        confidence only when their weight is not 0 (BM25 always when the embedder is down).
        """
        if not entry.notes or limit < 1:
            return []
        dense = centred = None
        if index is not None and vectors is not None:
            dense, centred = index.scores(vectors[0])
        need_keyword, need_confidence = signals_needed(self.weights, dense is not None)
        keyword = entry.keywords().scores(query) if need_keyword else None
        confidence = self._confidence(entry, now) if need_confidence else None
        return choose(dense, keyword, confidence, limit, self.weights, centred)

    @staticmethod
    def _confidence(entry: CacheEntry, now: datetime) -> np.ndarray:
        """Every note's decayed confidence at ``now`` (only when its weight is not 0)."""
        kept = entry.derived.get("decay")
        if kept is None:
            kept = (
                np.array([n.confidence for n in entry.notes]),
                np.array([n.anchor.timestamp() for n in entry.notes]),
            )
            entry.derived["decay"] = kept
        return decayed(kept[0], kept[1], now.timestamp(), entry.lambda_per_day)

    def _for_query(
        self,
        entry: CacheEntry,
        query: str,
        index: DenseIndex | None,
        vectors: np.ndarray | None,
        limit: int,
        now: datetime,
    ) -> Served:
        """The notes a query chose, then the most confident others up to ``limit``.

        A ranking by cosine alone depends only on the entry's notes and the query, so it is
        kept on the entry (which a belief change replaces) and a repeated query skips it; the
        notes' decayed confidences are rendered once a second, as ``_served`` does. With the
        embedder down (keywords rank) or a confidence weight (decay ranks), nothing is kept.
        """
        limit = max(0, min(limit, MAX_LIMIT))
        key = (query, limit)
        second = math.floor(now.timestamp())
        answered = entry.answers.get(key)
        if answered is not None:
            entry.answers.move_to_end(key)
            if answered.served is not None and answered.served.second == second:
                return answered.served
        else:
            answered = Answered(self.chosen_for_query(entry, query, index, vectors, limit, now))
            if index is not None and not self.weights.confidence:
                entry.answers[key] = answered
                while len(entry.answers) > ANSWERS_PER_ENTRY:
                    entry.answers.popitem(last=False)
        chosen = answered.choices
        taken = {choice.position for choice in chosen}
        rest = (p for p in range(len(entry.notes)) if p not in taken)
        lam = entry.lambda_per_day
        notes = [_memory_note(entry.notes[c.position], now, lam, choice=c) for c in chosen] + [
            _memory_note(entry.notes[p], now, lam) for p in islice(rest, limit - len(chosen))
        ]
        answered.served = _rendered(second, notes)
        return answered.served

    async def _episodes(
        self, agent_id: str, query: str, limit: int, untrusted: bool, vectors: np.ndarray | None
    ) -> tuple[list[RelevantEpisode], Section]:
        """Recall's episodes for a query and their block section, reused while the agent's
        episodes stay as they were.

        Agents repeat queries. The episode state is re-read with the agent (at most every
        ``recheck_s``), so new episodes show up within that bound, as changed notes do.
        """
        assert self.episode_search is not None
        key = (agent_id, query, limit, untrusted)
        found = self._recalled.get(key)
        state = self._agents.get(agent_id)
        current = state.episodes if state is not None else None
        if found is not None and current is not None and found[0] == current:
            return found[1], found[2]
        episodes = await self.episode_search(agent_id, query, limit, untrusted, vectors, current)
        section = episodes_section([_block_episode(e) for e in episodes])
        self._recalled[key] = (current, episodes, section)
        self._recalled.move_to_end(key)
        while len(self._recalled) > MAX_CACHE_ENTRIES:
            self._recalled.popitem(last=False)
        return episodes, section

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
        recalled = episodes_section([])
        now = self.clock()
        query = query.strip() if query else None
        if query:
            vectors = await self._embedded(query)
            # Awaits only what is not in memory yet: the notes' embeddings once per entry, the
            # episodes of a query not seen since the agent's episodes last changed.
            index = await self.dense_index(agent_id, entry, vectors)
            served = self._for_query(entry, query, index, vectors, limit, now)
            if self.episode_search is not None:
                episodes, recalled = await self._episodes(
                    agent_id, query, limit, include_untrusted, vectors
                )
        else:
            served = self._served(entry, limit, now)
        notes, section, ids = served.notes, served.section, served.ids
        if ids:
            self.recorder.record(ids, now)
        block = assemble(section, recalled, new_nonce())
        return MemoryContext(
            memory_notes=notes, recent_relevant_episodes=episodes, prompt_block=block
        )


def _rendered(second: int, notes: list[MemoryNote]) -> Served:
    """What ``notes`` serve during ``second``: the notes, their block section and their ids."""
    section = notes_section([BlockNote(n.content, n.for_query) for n in notes])
    return Served(second, notes, section, tuple(n.belief_id for n in notes))


def _block_episode(episode: RelevantEpisode) -> BlockEpisode:
    """The episode's line: its summary, then what the user said to correct it."""
    if not episode.corrections:
        return BlockEpisode(episode.summary)
    said = " / ".join(episode.corrections)
    return BlockEpisode(f"{episode.summary} — user said: {said}")


def _why(choice: Choice, decayed_now: float) -> NoteWhy:
    confidence = choice.confidence if choice.confidence is not None else round(decayed_now, 4)
    return NoteWhy(
        score=choice.score, dense=choice.dense, keyword=choice.keyword, confidence=confidence
    )


def _memory_note(
    note: CachedNote, now: datetime, lambda_per_day: float, *, choice: Choice | None = None
) -> MemoryNote:
    decayed_now = decayed_confidence(note.confidence, note.anchor, now, lambda_per_day)
    return MemoryNote(
        belief_id=note.belief_id,
        content=note.content,
        confidence=note.confidence,
        decayed_confidence=round(decayed_now, 6),
        for_query=choice is not None,
        why=None if choice is None else _why(choice, decayed_now),
    )


def new_context_service(store: Database, embedder: Embedder, clock: Clock) -> ContextService:
    """The process's ContextService, with recall's episode search and the query embedder."""
    return ContextService(
        store,
        clock,
        episode_search=recall_episode_search(store, embedder),
        embedder=embedder,
    )


async def memory_context(
    service: ContextService,
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
    started = time.perf_counter()
    with tracing.memory_span("search_memory", agent_id, query=query) as span:
        result = await service.context(
            agent_id, role=role, query=query, limit=limit, include_untrusted=include_untrusted
        )
        span.set_attribute("gen_ai.memory.record.count", len(result.memory_notes))
    metrics.observe_context(query is not None, time.perf_counter() - started)
    return result


@asynccontextmanager
async def flushing_injections(
    service: ContextService, interval_s: float = 0.5
) -> AsyncIterator[ContextService]:
    """The service's injection flusher as a background task, flushed and stopped on the way out."""
    task = asyncio.create_task(
        flush_forever(service.recorder, service.store, interval_s), name="credence-injections"
    )
    try:
        yield service
    finally:
        await stop_flushing(task, service.recorder, service.store)
