"""The read path: active beliefs from a hot cache per (agent, role) plus recall, as a prompt."""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from credence.clock import Clock, parse_rfc3339, rfc3339
from credence.memory.episodes import AgentMissing
from credence.memory.injection import InjectionRecorder, flush_forever, stop_flushing
from credence.memory.prompt_block import BlockEpisode, BlockNote, build_prompt_block, new_nonce
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
DEFAULT_LAMBDA = 0.02
# Provenances a served belief may have. The schema already refuses an active untrusted belief;
# the read path checks again so that no future migration or bug can put one in a prompt.
SERVABLE_PROVENANCE = ("clean", "owner")

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
    " WHERE agent_id = ? AND status = 'active' AND provenance IN ('clean', 'owner')"
    " AND (role IS NULL OR role = ?)"
)
_ACTIVE_GENERAL = (
    "SELECT id, content, confidence, created_at, updated_at, provenance FROM beliefs"
    " WHERE agent_id = ? AND status = 'active' AND provenance IN ('clean', 'owner')"
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
class CacheEntry:
    """The servable beliefs of one (agent, role), best first, as of one change counter."""

    counter: int
    lambda_per_day: float
    notes: tuple[CachedNote, ...]


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
    """Servable beliefs per (agent, role), bounded LRU, dropped per agent on every change."""

    def __init__(self, max_entries: int = MAX_CACHE_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str | None], CacheEntry] = OrderedDict()
        self._roles: dict[str, set[str | None]] = {}
        self.hits = 0
        self.misses = 0

    def get(
        self, agent_id: str, role: str | None, counter: int, lambda_per_day: float
    ) -> CacheEntry | None:
        """The entry if it is as fresh as ``counter`` and built with the same λ."""
        key = (agent_id, role)
        entry = self._entries.get(key)
        if entry is None or entry.counter != counter or entry.lambda_per_day != lambda_per_day:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry

    def put(self, agent_id: str, role: str | None, entry: CacheEntry) -> None:
        """Store an entry, evicting the least recently used beyond the bound."""
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

    def invalidate(self, agent_id: str) -> None:
        """Drop every entry of one agent (the after-commit hook of every belief change)."""
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


class ContextService:
    """Builds an agent's memory context; one per process, shared by every request."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        recorder: InjectionRecorder | None = None,
        episode_search: EpisodeSearch | None = None,
        cache: HotCache | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.recorder = recorder or InjectionRecorder()
        self.episode_search = episode_search
        self.cache = cache or HotCache()
        self._lambda_by_settings: dict[str, float] = {}
        self._building: dict[tuple[str, str | None], asyncio.Future[CacheEntry]] = {}
        self.rebuilds = 0

    def invalidate(self, agent_id: str) -> None:
        """Forget the cached beliefs of ``agent_id`` (registered as a BeliefHooks.after_change)."""
        self.cache.invalidate(agent_id)

    async def notes(
        self, agent_id: str, role: str | None, limit: int = DEFAULT_LIMIT
    ) -> tuple[list[MemoryNote], datetime]:
        """The top ``limit`` servable beliefs for (agent, role) and the moment they were read.

        Raises AgentMissing when the agent does not exist.
        """
        row = await self.store.fetchone(_AGENT_AND_COUNTER, (agent_id,))
        if row is None:
            raise AgentMissing(agent_id)
        settings = row["settings"]
        lam = self._lambda_by_settings.get(settings)
        if lam is None:
            if len(self._lambda_by_settings) > MAX_CACHE_ENTRIES:
                self._lambda_by_settings.clear()
            lam = self._lambda_by_settings[settings] = _lambda_of(settings)
        now = self.clock()
        entry = self.cache.get(agent_id, role, int(row["changes"]), lam)
        if entry is None:
            entry = await self._rebuild(agent_id, role, lam)
        served = entry.notes[: max(0, min(limit, MAX_LIMIT))]
        return [
            MemoryNote(
                belief_id=note.belief_id,
                content=note.content,
                confidence=note.confidence,
                decayed_confidence=round(
                    decayed_confidence(note.confidence, note.anchor, now, lam), 6
                ),
            )
            for note in served
        ], now

    async def _rebuild(self, agent_id: str, role: str | None, lam: float) -> CacheEntry:
        """One indexed query for the (agent, role); concurrent misses share one rebuild."""
        key = (agent_id, role)
        building = self._building.get(key)
        if building is not None:
            return await asyncio.shield(building)
        future: asyncio.Future[CacheEntry] = asyncio.get_running_loop().create_future()
        self._building[key] = future

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
            self.cache.put(agent_id, role, entry)
            future.set_result(entry)
            return entry
        except BaseException as exc:
            future.set_exception(exc)
            # Nobody else may be waiting; retrieve the exception so asyncio does not warn.
            future.exception()
            raise
        finally:
            self._building.pop(key, None)

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
        notes, now = await self.notes(agent_id, role, limit)
        episodes: list[RelevantEpisode] = []
        if query and query.strip() and self.episode_search is not None:
            episodes = await self.episode_search(agent_id, query, limit, include_untrusted)
        if notes:
            self.recorder.record([note.belief_id for note in notes], rfc3339(now))
        block = build_prompt_block(
            [BlockNote(n.belief_id, n.content, n.decayed_confidence) for n in notes],
            [BlockEpisode(e.episode_id, e.summary, e.finished_at) for e in episodes],
            new_nonce(),
        )
        return MemoryContext(
            memory_notes=notes, recent_relevant_episodes=episodes, prompt_block=block
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
