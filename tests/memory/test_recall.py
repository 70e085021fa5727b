"""Recall search: BM25 and cosine fused by RRF, filters, the matrix cache and its invalidation."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from credence.clock import parse_rfc3339, system_clock
from credence.db.store import Store
from credence.embed import OpenAIEmbedder, WordLlamaEmbedder
from credence.memory import recall
from credence.memory.episodes import EpisodeService
from credence.models import EpisodeIn, InterventionIn

EMBEDDER = WordLlamaEmbedder()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A migrated store with agents 'ada' and 'bob'."""
    store = Store(tmp_path / "credence.sqlite3")
    await store.open()

    async def agents(conn):
        for agent_id in ("ada", "bob"):
            await conn.execute(
                "INSERT INTO agents(id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (agent_id, agent_id, "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z"),
            )

    await store.write(agents)
    yield store
    await store.close()


async def ingest(store: Store, agent_id: str, *episodes: EpisodeIn) -> list[str]:
    """Store episodes through the real ingest path and return their ids."""
    rows, _ = await EpisodeService(store, EMBEDDER, system_clock).ingest(agent_id, episodes)
    return [row["id"] for row in rows]


def episode(summary: str, *, said: str = "", finished_at: str | None = None, origin="clean"):
    """An EpisodeIn with an optional steer intervention."""
    interventions = [InterventionIn("steer", said)] if said else []
    return EpisodeIn(
        session_id="s1",
        summary=summary,
        interventions=interventions,
        finished_at=parse_rfc3339(finished_at) if finished_at else None,
        origin=origin,
    )


CORPUS = (
    "Uploaded a 40MB PDF to the ingester; it ran out of memory and crashed.",
    "Wrote the weekly finance report and exported it to a spreadsheet.",
    "Deployed the staging branch and rolled back a failed database migration.",
    "Answered a question about the weather in Lisbon in Celsius.",
    "Installed dependencies with npm; the user asked for pnpm instead.",
)


async def test_best_match_comes_first_with_both_rankings(store: Store) -> None:
    ids = await ingest(store, "ada", *(episode(text) for text in CORPUS))
    hits = await recall.search(store, EMBEDDER, "ada", ["the PDF ingester crashed"], 3)
    assert hits[0].episode["id"] == ids[0]
    assert hits[0].text_rank == 1 and hits[0].vector_rank is not None
    assert hits[0].score == pytest.approx(1 / 61 + 1 / (60 + hits[0].vector_rank))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(hits) == 3


async def test_threaded_scoring_ranks_the_same(store: Store, monkeypatch) -> None:
    await ingest(store, "ada", *(episode(text) for text in CORPUS))
    queries = ["the PDF ingester crashed", "weather"]
    inline = await recall.search(store, EMBEDDER, "ada", queries, 5)
    monkeypatch.setattr(recall, "_THREADED_SCORING", 0)  # score on a worker thread
    threaded = await recall.search(store, EMBEDDER, "ada", queries, 5)
    assert [(h.episode["id"], h.score) for h in threaded] == [
        (h.episode["id"], h.score) for h in inline
    ]


async def test_interventions_are_searched_too(store: Store) -> None:
    ids = await ingest(
        store,
        "ada",
        episode("Set up the project."),
        episode("Set up the other project.", said="please use pnpm, never npm"),
    )
    hits = await recall.search(store, EMBEDDER, "ada", ["pnpm"], 1)
    assert [h.episode["id"] for h in hits] == [ids[1]]


async def test_several_queries_fuse_into_one_ranking(store: Store) -> None:
    ids = await ingest(store, "ada", *(episode(text) for text in CORPUS))
    hits = await recall.search(store, EMBEDDER, "ada", ["finance spreadsheet", "Lisbon"], 2)
    assert {h.episode["id"] for h in hits} == {ids[1], ids[3]}


async def test_only_this_agents_episodes_are_found(store: Store) -> None:
    await ingest(store, "bob", *(episode(f"PDF ingester run {n}") for n in range(300)))
    (mine,) = await ingest(store, "ada", episode("The PDF ingester crashed once."))
    hits = await recall.search(store, EMBEDDER, "ada", ["pdf ingester"], 10)
    # bob's 300 matches crowd the index's top-N, so this exercises the in-SQL fallback.
    assert [h.episode["id"] for h in hits] == [mine]


async def test_crowded_index_without_the_rowid_list(store: Store, monkeypatch) -> None:
    monkeypatch.setattr(recall, "_ROWID_LIST_MAX", 0)  # force the join over episode rows
    await ingest(store, "bob", *(episode(f"PDF ingester run {n}") for n in range(300)))
    (mine,) = await ingest(store, "ada", episode("The PDF ingester crashed once."))
    hits = await recall.search(store, EMBEDDER, "ada", ["pdf ingester"], 10)
    assert [h.episode["id"] for h in hits] == [mine]


async def test_filters_since_reflected_and_untrusted(store: Store) -> None:
    old, new, foreign = await ingest(
        store,
        "ada",
        episode("PDF upload failed", finished_at="2026-01-01T00:00:00Z"),
        episode("PDF upload failed again", finished_at="2026-02-01T00:00:00Z"),
        episode("PDF upload from a web page", origin="untrusted"),
    )
    found = await recall.search(store, EMBEDDER, "ada", ["pdf upload"], 10)
    assert {h.episode["id"] for h in found} == {old, new, foreign}
    since = await recall.search(
        store, EMBEDDER, "ada", ["pdf upload"], 10, since="2026-01-15T00:00:00.000000Z"
    )
    assert old not in {h.episode["id"] for h in since}
    clean = await recall.search(store, EMBEDDER, "ada", ["pdf upload"], 10, include_untrusted=False)
    assert {h.episode["id"] for h in clean} == {old, new}

    async def watermark(conn):
        await conn.execute(
            "UPDATE episodes SET reflected_at = '2026-03-01T00:00:00.000000Z' WHERE id = ?", (old,)
        )

    await store.write(watermark)
    open_ = await recall.search(store, EMBEDDER, "ada", ["pdf upload"], 10, reflected=False)
    assert {h.episode["id"] for h in open_} == {new, foreign}
    done = await recall.search(store, EMBEDDER, "ada", ["pdf upload"], 10, reflected=True)
    assert [h.episode["id"] for h in done] == [old]


async def test_cache_grows_with_new_episodes(store: Store) -> None:
    await ingest(store, "ada", episode("Wrote a poem about the sea."))
    assert (await recall.agent_matrix(store, EMBEDDER, "ada")).count == 1
    (later,) = await ingest(store, "ada", episode("Converted miles to kilometres for the user."))
    cached = await recall.agent_matrix(store, EMBEDDER, "ada")
    assert cached.count == 2
    hits = await recall.search(store, EMBEDDER, "ada", ["kilometres"], 1)
    assert hits[0].episode["id"] == later


async def test_deleting_an_episode_rebuilds_the_cache(store: Store) -> None:
    first, second = await ingest(store, "ada", episode("PDF one"), episode("PDF two"))
    await recall.search(store, EMBEDDER, "ada", ["pdf"], 5)

    async def delete(conn):
        await conn.execute("DELETE FROM episodes WHERE id = ?", (first,))

    await store.write(delete)
    hits = await recall.search(store, EMBEDDER, "ada", ["pdf"], 5)
    assert [h.episode["id"] for h in hits] == [second]
    assert (await recall.agent_matrix(store, EMBEDDER, "ada")).count == 1


@pytest.mark.parametrize(
    "query", ['"unbalanced', "NEAR(a b", "pdf*", "a AND OR NOT", "-", "col:pdf", "^pdf"]
)
async def test_fts_syntax_in_queries_is_inert(store: Store, query: str) -> None:
    await ingest(store, "ada", episode("The PDF ingester crashed."))
    hits = await recall.search(store, EMBEDDER, "ada", [query], 5)
    assert all(h.score > 0 for h in hits)


def test_fts_expression_quotes_terms_and_skips_stop_words() -> None:
    assert recall.fts_expression('the "PDF" ingester') == '"pdf" OR "ingester"'
    assert recall.fts_expression("the") == '"the"'
    assert recall.fts_expression("!!! ...") is None


async def test_no_query_returns_newest(store: Store) -> None:
    ids = await ingest(store, "ada", *(episode(text) for text in CORPUS))
    hits = await recall.search(store, EMBEDDER, "ada", ["   "], 2)
    assert [h.episode["id"] for h in hits] == [ids[4], ids[3]]
    assert all(h.score == 0.0 for h in hits)


async def test_k_is_bounded(store: Store) -> None:
    with pytest.raises(ValueError):
        await recall.search(store, EMBEDDER, "ada", ["x"], 0)
    with pytest.raises(ValueError):
        await recall.search(store, EMBEDDER, "ada", ["x"], 201)


async def test_unknown_agent_finds_nothing(store: Store) -> None:
    assert await recall.search(store, EMBEDDER, "nobody", ["pdf"], 5) == []


async def test_embedder_down_means_recall_unavailable(store: Store) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", dim=256, timeout=2.0)
    with pytest.raises(recall.RecallUnavailable, match="embedder unavailable"):
        await recall.search(store, down, "ada", ["pdf"], 5)
