"""The read path: active beliefs from a hot cache per (agent, role) plus recall, as a prompt."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from credence.clock import Clock, parse_rfc3339
from credence.memory.episodes import AgentMissing
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
from credence.models import MemoryContext, MemoryNote, RelevantEpisode
from credence.reflection.gate import decayed_confidence

if TYPE_CHECKING:
    import aiosqlite

    from credence.db.store import Store
    from credence.services import Services

log = logging.getLogger("credence.context")

EXTRAS_KEY = "context"
MAX_LIMIT = 50
DEFAULT_LIMIT = 10
MAX_CACHE_ENTRIES = 4096
# How stale a change made by another process may be seen (this process's own are seen at once).
RECHECK_S = 0.25
DEFAULT_LAMBDA = 0.02
# Provenances a served belief may have. The schema already refuses an active untrusted belief;
# the read path checks again so that no future migration or bug can put one in a prompt.
SERVABLE_PROVENANCE = ("clean", "owner", "unsourced")

# The agent row and the store-wide change counter in one indexed read: every context read checks
# freshness (another process may have changed a belief) without a second round trip.
_AGENT_AND_COUNTER = (
    "SELECT a.settings AS settings,"
    " (SELECT value FROM store_state WHERE name = 'belief_changes') AS changes"
    " FROM agents a WHERE a.id = ?"
)
_COUNTER = "SELECT value FROM store_state WHERE name = 'belief_changes'"
_ACTIVE_FOR_ROLE = (
    "SELECT id, content, confidence, created_at, updated_at, provenance FROM beliefs"
    " WHERE agent_id = ? AND status = 'active' AND provenance IN ('clean', 'owner', 'unsourced')"
    " AND (role IS NULL OR role = ?)"
)
_ACTIVE_GENERAL = (
    "SELECT id, content, confidence, created_at, updated_at, provenance FROM beliefs"
    " WHERE agent_id = ? AND status = 'active' AND provenance IN ('clean', 'owner', 'unsourced')"
    " AND role IS NULL"
)

EpisodeSearch = Callable[[str, str, int, bool], Awaitable[list[RelevantEpisode]]]


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
    """The servable beliefs of one (agent, role), best first, as of one change counter."""

    counter: int
    lambda_per_day: float
    notes: tuple[CachedNote, ...]
    served: dict[int, Served] = field(default_factory=dict, compare=False)


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
    Changes made by another process on the same data dir are noticed through the store's
    change counter, read with the agent row at most once per ``recheck_s`` per agent, so a warm
    read touches no database at all.
    """

    def __init__(
        self,
        store: Store,
        clock: Clock,
        recorder: InjectionRecorder | None = None,
        episode_search: EpisodeSearch | None = None,
        cache: HotCache | None = None,
        recheck_s: float = RECHECK_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.clock = clock
        self.recorder = recorder or InjectionRecorder()
        self.episode_search = episode_search
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
        row = await self.store.fetchone(_AGENT_AND_COUNTER, (agent_id,))
        if row is None:
            self._agents.pop(agent_id, None)
            raise AgentMissing(agent_id)
        state = AgentState(_lambda_of(row["settings"]), int(row["changes"]), now)
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
        lam = entry.lambda_per_day
        notes = [
            MemoryNote(
                belief_id=note.belief_id,
                content=note.content,
                confidence=note.confidence,
                decayed_confidence=round(
                    decayed_confidence(note.confidence, note.anchor, now, lam), 6
                ),
            )
            for note in entry.notes[:limit]
        ]
        section = notes_section(
            [BlockNote(n.belief_id, n.content, n.decayed_confidence) for n in notes]
        )
        served = Served(second, notes, section, tuple(n.belief_id for n in notes))
        entry.served[limit] = served
        return served

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

        async def read(conn: aiosqlite.Connection) -> tuple[int, list[Any]]:
            # Counter first: rows read after it are at least that fresh, so a change that lands
            # in between only causes one extra rebuild, never a stale entry.
            async with conn.execute(_COUNTER) as cur:
                counter = int((await cur.fetchone())["value"])
            if role is None:
                async with conn.execute(_ACTIVE_GENERAL, (agent_id,)) as cur:
                    rows = list(await cur.fetchall())
            else:
                async with conn.execute(_ACTIVE_FOR_ROLE, (agent_id, role)) as cur:
                    rows = list(await cur.fetchall())
            return counter, rows

        self.rebuilds += 1
        try:
            counter, rows = await self.store.read(read)
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
        """Notes, relevant episodes and the prompt block; records which beliefs were served."""
        state = await self.agent_state(agent_id)
        entry = self.cache.get(agent_id, role, state.counter, state.lambda_per_day)
        if entry is None:
            entry = await self._rebuild(agent_id, role, state.lambda_per_day)
        now = self.clock()
        served = self._served(entry, limit, now)
        episodes: list[RelevantEpisode] = []
        if query and query.strip() and self.episode_search is not None:
            episodes = await self.episode_search(agent_id, query, limit, include_untrusted)
        if served.ids:
            self.recorder.record(served.ids, now)
        block = assemble(
            served.section,
            episodes_section(
                [BlockEpisode(e.episode_id, e.summary, e.finished_at) for e in episodes]
            ),
            new_nonce(),
        )
        return MemoryContext(
            memory_notes=served.notes, recent_relevant_episodes=episodes, prompt_block=block
        )


def recall_episode_search(services: Services) -> EpisodeSearch | None:
    """Episode search backed by recall: FTS5 BM25 fused with embedding cosine.

    When recall cannot run (the embedder is down), the context still serves its reviewed notes
    and no episodes, and says so in the log: the notes matter more than the specifics.
    """
    try:
        from credence.memory import recall
    except ImportError:  # recall search ships separately; without it, notes only
        return None

    async def search(
        agent_id: str, query: str, limit: int, include_untrusted: bool
    ) -> list[RelevantEpisode]:
        try:
            hits = await recall.search(
                services.store,
                services.embedder,
                agent_id,
                [query],
                min(limit, recall.MAX_K),
                include_untrusted=include_untrusted,
            )
        except recall.RecallUnavailable as exc:
            log.warning("recall unavailable for %s; serving notes only: %s", agent_id, exc)
            return []
        return [
            RelevantEpisode(
                episode_id=hit.episode["id"],
                summary=hit.episode["summary"],
                finished_at=hit.episode["finished_at"],
                score=round(hit.score, 6),
            )
            for hit in hits
            # Defence in depth: recall filters untrusted episodes, and so does this.
            if include_untrusted or hit.episode["origin"] == "clean"
        ]

    return search


def context_of(services: Services) -> ContextService:
    """The process's ContextService, created (and hooked to belief changes) on first use."""
    existing = services.extras.get(EXTRAS_KEY)
    if existing is not None:
        return existing
    service = ContextService(
        services.store, services.clock, episode_search=recall_episode_search(services)
    )
    services.hooks.after_change.append(service.invalidate)
    services.extras[EXTRAS_KEY] = service
    return service


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
