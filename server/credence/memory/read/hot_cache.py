"""The context read's hot cache: entries per (agent, role), bounded LRU, invalidated per agent."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, Protocol, TypeVar

MAX_CACHE_ENTRIES = 4096


class Fresh(Protocol):
    """What the cache needs of an entry: the change counter and the λ it was built with."""

    @property
    def counter(self) -> int: ...

    @property
    def lambda_per_day(self) -> float: ...


E = TypeVar("E", bound=Fresh)


class HotCache(Generic[E]):
    """Servable beliefs per (agent, role), bounded LRU, dropped per agent on every change.

    Each agent has a generation that every invalidation bumps; a rebuild that started before an
    invalidation carries the old generation and is not stored, so a read racing a decision can
    never put pre-decision memory back into the cache.
    """

    def __init__(self, max_entries: int = MAX_CACHE_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str | None], E] = OrderedDict()
        self._roles: dict[str, set[str | None]] = {}
        self._generations: dict[str, int] = {}
        self.hits = 0
        self.misses = 0

    def generation(self, agent_id: str) -> int:
        """How many times ``agent_id`` has been invalidated in this process."""
        return self._generations.get(agent_id, 0)

    def get(self, agent_id: str, role: str | None, counter: int, lambda_per_day: float) -> E | None:
        """The entry if it is at least as fresh as ``counter`` and built with the same λ."""
        key = (agent_id, role)
        entry = self._entries.get(key)
        if entry is None or entry.counter < counter or entry.lambda_per_day != lambda_per_day:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry

    def put(self, agent_id: str, role: str | None, entry: E, generation: int | None = None) -> bool:
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
