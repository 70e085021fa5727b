"""Evidence recall@k of recall search on a labelled conversation set, signal by signal.

Turns are stored as one agent's episodes through the real ingest path in a real store, and
questions go through ``recall.search``: full-text alone, cosine alone, and the fusion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from credence.clock import system_clock
from credence.db.engine import Database
from credence.embed import Embedder
from credence.memory.ingest.episodes import EpisodeService
from credence.memory.read import recall
from credence.models import EpisodeIn

AGENT = "chat"
MODES: dict[str, tuple[float, float] | None] = {
    "keyword": (1.0, 0.0),
    "dense": (0.0, 1.0),
    "fused": None,
    "fused_equal": (1.0, 1.0),
}


@dataclass(frozen=True)
class Labelled:
    """A question, the turn ids that answer it and its kind."""

    text: str
    evidence: tuple[str, ...]
    kind: str


async def seed(
    store: Database, embedder: Embedder, turns: Sequence[tuple[str, str]]
) -> dict[str, str]:
    """Store (turn id, text) as episodes of AGENT; returns episode id -> turn id."""

    async def agent(conn) -> None:
        await conn.run(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (AGENT, AGENT, "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z"),
        )

    await store.write(agent)
    service = EpisodeService(store, embedder, system_clock)
    by_episode = {}
    for start in range(0, len(turns), 200):
        chunk = turns[start : start + 200]
        rows, _ = await service.ingest(
            AGENT, [EpisodeIn(session_id="chat", summary=text) for _, text in chunk]
        )
        by_episode |= {row.id: turn_id for row, (turn_id, _) in zip(rows, chunk, strict=True)}
    return by_episode


async def evidence_recall(
    store: Database,
    embedder: Embedder,
    by_episode: dict[str, str],
    questions: Sequence[Labelled],
    mode: str,
    k: int = 10,
) -> dict[str, float]:
    """Share of evidence turns among the top ``k``, overall and per question kind."""
    found: dict[str, list[int]] = {}
    for question in questions:
        hits = await recall.search(store, embedder, AGENT, [question.text], k, weights=MODES[mode])
        ids = {by_episode[hit.episode.id] for hit in hits}
        got = sum(turn in ids for turn in question.evidence)
        for key in ("all", question.kind):
            tally = found.setdefault(key, [0, 0])
            tally[0] += got
            tally[1] += len(question.evidence)
    return {key: hit / total for key, (hit, total) in found.items()}
