"""The embedding backfill: re-embeds stored beliefs and episodes made by another model, online."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from credence.clock import Clock, rfc3339
from credence.db import reembed
from credence.embed import EmbeddingUnavailable
from credence.ids import new_id
from credence.memory.ingest.episodes import embedding_text

if TYPE_CHECKING:
    from credence.db.engine import Database
    from credence.db.reembed import StaleEpisode
    from credence.embed import Embedder

log = logging.getLogger("credence.backfill")

BATCH = 64
LEASE_S = 30.0
# Between batches the backfill yields the CPU to requests (two cores are common).
PAUSE_S = 0.05
# How often a replica that does not hold the lease looks again.
WAIT_S = 5.0
RETRY_S = 30.0


@dataclass
class Progress:
    """What this replica knows of the backfill, for the admin endpoint and the log."""

    model: str
    state: str = "starting"  # starting | running | waiting | done | failed
    beliefs_done: int = 0
    episodes_done: int = 0
    error: str | None = None


@dataclass(frozen=True)
class Status:
    """The whole installation's embeddings: how many rows the configured model made."""

    model: str
    beliefs: int
    beliefs_current: int
    episodes: int
    episodes_current: int
    state: str

    @property
    def line(self) -> str:
        """One line for the CLI and the log."""
        return (
            f"embeddings ({self.model}): beliefs {self.beliefs_current}/{self.beliefs},"
            f" episodes {self.episodes_current}/{self.episodes}; backfill {self.state}"
        )


async def status(store: Database, model: str, progress: Progress | None = None) -> Status:
    """Counts of rows made by ``model`` (one read), with this replica's backfill state."""
    found = await store.read(lambda conn: reembed.counts(conn, model))
    state = progress.state if progress is not None else "not running here"
    if found[0] == found[1] and found[2] == found[3]:
        state = "done" if progress is None or progress.state != "failed" else progress.state
    return Status(model, found[0], found[1], found[2], found[3], state)


class LeaseLost(RuntimeError):
    """Another replica took the backfill over (this one stalled past its lease)."""


class Backfill:
    """Re-embeds, in batches, every row whose ``embedding_model`` is not the embedder's.

    Replicas race for one lease; the holder works, the others wait and look again. Each batch
    is written in a transaction that checks the lease, and only rows still stale are updated,
    so every row is re-embedded exactly once however many replicas run.
    """

    def __init__(
        self,
        store: Database,
        embedder: Embedder,
        clock: Clock,
        *,
        owner: str | None = None,
        batch: int = BATCH,
        lease_s: float = LEASE_S,
        pause_s: float = PAUSE_S,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.owner = owner or new_id("bfl")
        self.batch = batch
        self.lease_s = lease_s
        self.pause_s = pause_s
        self.progress = Progress(embedder.name)

    def _times(self) -> tuple[str, str]:
        now = self.clock()
        return rfc3339(now), rfc3339(now + timedelta(seconds=self.lease_s))

    async def claim(self) -> bool:
        """Take or renew the lease."""
        now, until = self._times()
        return await self.store.write(
            lambda conn: reembed.claim_lease(conn, self.owner, now, until)
        )

    async def release(self) -> None:
        """Give the lease back."""
        now, _ = self._times()
        await self.store.write(lambda conn: reembed.release_lease(conn, self.owner, now))

    async def step(self) -> int:
        """Re-embed one batch (beliefs first); the rows written, 0 when nothing is left.

        Raises LeaseLost when another replica holds the lease.
        """
        if not await self.claim():
            raise LeaseLost(self.owner)
        model = self.embedder.name
        beliefs = await self.store.read(lambda conn: reembed.stale_beliefs(conn, model, self.batch))
        if beliefs:
            vectors = await self.embedder.embed([row["content"] for row in beliefs])
            rows = [
                (r["id"], r["content"], _blob(v)) for r, v in zip(beliefs, vectors, strict=True)
            ]
            now, _ = self._times()
            written = await self.store.write(
                lambda conn: reembed.rewrite_beliefs(conn, self.owner, now, model, rows)
            )
            if written is None:
                raise LeaseLost(self.owner)
            self.progress.beliefs_done += written
            return max(written, 1)
        episodes = await self.store.read(
            lambda conn: reembed.stale_episodes(conn, model, self.batch)
        )
        if not episodes:
            return 0
        texts = [_episode_text(row) for row in episodes]
        vectors = await self.embedder.embed(texts)
        pairs = [(row.id, _blob(v)) for row, v in zip(episodes, vectors, strict=True)]
        now, _ = self._times()
        written = await self.store.write(
            lambda conn: reembed.rewrite_episodes(conn, self.owner, now, model, pairs)
        )
        if written is None:
            raise LeaseLost(self.owner)
        self.progress.episodes_done += written
        return max(written, 1)

    async def run(self, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        """Work until nothing is stale; wait while another replica holds the lease."""
        while True:
            try:
                self.progress.state = "running"
                while await self.step():
                    await sleep(self.pause_s)
                self.progress.state = "done"
                await self.release()
                log.info(
                    "embedding backfill done (%s): %d beliefs, %d episodes re-embedded here",
                    self.embedder.name,
                    self.progress.beliefs_done,
                    self.progress.episodes_done,
                )
                return
            except LeaseLost:
                self.progress.state = "waiting"
                await sleep(WAIT_S)
            except EmbeddingUnavailable as exc:
                self.progress.state, self.progress.error = "failed", str(exc)
                log.warning("embedding backfill paused: %s; retrying in %ss", exc, RETRY_S)
                await sleep(RETRY_S)


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def _episode_text(row: StaleEpisode) -> str:
    interventions = [(i["trigger"], i["text"]) for i in row.interventions]
    return embedding_text(row.summary, interventions)


@asynccontextmanager
async def running_backfill(backfill: Backfill) -> AsyncIterator[Backfill]:
    """The backfill as a background task; cancelled, and its lease given back, on the way out."""
    task = asyncio.create_task(backfill.run(), name="credence-embedding-backfill")
    try:
        yield backfill
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError, Exception):
            await task
        with suppress(Exception):
            await backfill.release()
