"""The embedding backfill: stale rows re-embedded once, under a lease, on both engines."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from credence import cli
from credence.clock import fixed_clock
from credence.db.engine import Database
from credence.memory.read import recall
from credence.memory.semantics import backfill as bf
from credence.memory.semantics.model import MiniLMEmbedder
from credence.models import EpisodeIn, InterventionIn
from credence.services import Services
from tests.memory.engine_store import engine_services, engines, opened_store, url_for
from tests.memory.read.test_context import add_agent, kept

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BELIEFS = [f"Deploys of service {n} need a green canary for ten minutes" for n in range(7)]
EPISODES = [f"Fixed the flaky login test number {n} by pinning the clock" for n in range(5)]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    loaded = MiniLMEmbedder()
    loaded.load()
    return loaded


@pytest.fixture(params=engines())
def store_url(request: pytest.FixtureRequest) -> str | None:
    return url_for(request, request.param)


@pytest.fixture
async def services(
    store_url: str | None, tmp_path: Path, embedder: MiniLMEmbedder
) -> AsyncIterator[Services]:
    """Beliefs and episodes embedded by MiniLM, then marked as made before models were recorded."""
    async with engine_services(store_url, tmp_path, embedder, fixed_clock(T0)) as services:
        await add_agent(services, "coder")
        for text in BELIEFS:
            await kept(services, text)
        items = [
            EpisodeIn(
                session_id="s1",
                summary=s,
                interventions=[InterventionIn(trigger="steer", text="use UTC")],
            )
            for s in EPISODES
        ]
        await services.episodes.ingest("coder", items)
        await age(services.store)
        yield services


async def age(store: Database) -> None:
    """Rows as an older model left them: a 256-wide vector and no model recorded."""
    old = np.ones(256, dtype="<f4").tobytes()

    async def work(conn) -> None:
        await conn.run("UPDATE beliefs SET embedding = ?, embedding_model = NULL", (old,))
        await conn.run("UPDATE episodes SET embedding = ?, embedding_model = NULL", (old,))

    await store.write(work)


async def stored(store: Database, table: str) -> dict[str, tuple[str | None, bytes]]:
    text = "content" if table == "beliefs" else "summary"
    rows = await store.read(
        lambda conn: conn.rows(f"SELECT {text}, embedding_model, embedding FROM {table}")
    )
    return {row[0]: (row[1], bytes(row[2])) for row in rows}


async def test_stale_rows_are_re_embedded_by_the_configured_model(services: Services) -> None:
    before = await bf.status(services.store, services.embedder.name)
    assert (before.beliefs_current, before.episodes_current) == (0, 0)
    assert before.beliefs == len(BELIEFS) and before.episodes == len(EPISODES)

    job = bf.Backfill(services.store, services.embedder, services.clock, batch=3, pause_s=0)
    await job.run()

    after = await bf.status(services.store, services.embedder.name, job.progress)
    assert after.state == "done"
    assert (after.beliefs_current, after.episodes_current) == (len(BELIEFS), len(EPISODES))
    assert (job.progress.beliefs_done, job.progress.episodes_done) == (len(BELIEFS), len(EPISODES))
    assert "beliefs 7/7, episodes 5/5" in after.line
    beliefs = await stored(services.store, "beliefs")
    expected = services.embedder.embed_sync(BELIEFS)
    for text, vector in zip(BELIEFS, expected, strict=True):
        model, blob = beliefs[text]
        assert model == services.embedder.name
        np.testing.assert_allclose(np.frombuffer(blob, "<f4"), vector, atol=1e-5)
    episodes = await stored(services.store, "episodes")
    expected = services.embedder.embed_sync([f"{s}\nuse UTC" for s in EPISODES])
    for text, vector in zip(EPISODES, expected, strict=True):
        np.testing.assert_allclose(np.frombuffer(episodes[text][1], "<f4"), vector, atol=1e-5)

    again = bf.Backfill(services.store, services.embedder, services.clock)
    assert await again.step() == 0  # nothing left: a second run writes nothing


async def test_recall_follows_the_re_embedded_episodes(services: Services) -> None:
    matrix = await recall.agent_matrix(services.store, services.embedder, "coder")
    assert not matrix.columns.any()  # the old 256-wide rows carry no cosine for a 384 model
    await bf.Backfill(services.store, services.embedder, services.clock, pause_s=0).run()
    matrix = await recall.agent_matrix(services.store, services.embedder, "coder")
    assert matrix.count == len(EPISODES) and np.all(np.abs(matrix.columns).sum(axis=0) > 0)


async def test_a_lease_held_elsewhere_makes_a_replica_wait(services: Services) -> None:
    first = bf.Backfill(services.store, services.embedder, services.clock, batch=2)
    second = bf.Backfill(services.store, services.embedder, services.clock, batch=2)
    assert await first.step() > 0
    with pytest.raises(bf.LeaseLost):
        await second.step()
    # Once the holder's lease has run out, the other replica takes over and the first one's
    # writes are refused.
    later = bf.Backfill(
        services.store,
        services.embedder,
        fixed_clock(T0 + timedelta(seconds=bf.LEASE_S + 1)),
        owner=second.owner,
        batch=2,
    )
    assert await later.step() > 0
    with pytest.raises(bf.LeaseLost):
        await first.step()


async def test_two_replicas_re_embed_every_row_exactly_once(
    services: Services, store_url: str | None, tmp_path: Path
) -> None:
    # A second store on the same database: another replica's connection pool.
    async with opened_store(store_url, tmp_path) as other:
        replicas = [
            bf.Backfill(store, services.embedder, services.clock, batch=2, lease_s=0.5, pause_s=0)
            for store in (services.store, other)
        ]
        waits: list[float] = []

        async def short_sleep(seconds: float) -> None:
            waits.append(seconds)
            await asyncio.sleep(min(seconds, 0.01))

        # The real clock here, so the loser's lease check sees time pass.
        for replica in replicas:
            replica.clock = lambda: datetime.now(UTC)
        await asyncio.gather(*(r.run(sleep=short_sleep) for r in replicas))
    done = [(r.progress.beliefs_done, r.progress.episodes_done) for r in replicas]
    assert sum(b for b, _ in done) == len(BELIEFS)
    assert sum(e for _, e in done) == len(EPISODES)
    assert all(r.progress.state == "done" for r in replicas)
    final = await bf.status(services.store, services.embedder.name)
    assert (final.beliefs_current, final.episodes_current) == (len(BELIEFS), len(EPISODES))


async def test_the_cli_reports_and_runs_the_backfill(
    tmp_path: Path, embedder: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    async with engine_services(None, tmp_path, embedder, fixed_clock(T0)) as services:
        await add_agent(services, "coder")
        await kept(services, BELIEFS[0])
        await age(services.store)

    def line(*extra: str) -> str:
        assert cli.main(["embeddings", "--data", str(tmp_path), *extra]) == 0
        return capsys.readouterr().out.strip()

    assert await asyncio.to_thread(line) == (
        f"embeddings ({embedder.name}): beliefs 0/1, episodes 0/0; backfill not running here"
    )
    assert await asyncio.to_thread(line, "--run") == (
        f"embeddings ({embedder.name}): beliefs 1/1, episodes 0/0; backfill done"
    )
