"""Recall search: full-text rank and cosine fused by RRF, filters, the matrix cache, per engine."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from credence.clock import parse_rfc3339, system_clock
from credence.db.engine import Database as Store
from credence.embed import OpenAIEmbedder
from credence.memory.ingest.episodes import EpisodeService
from credence.memory.read import recall
from credence.memory.semantics.model import MiniLMEmbedder
from credence.models import EpisodeIn, InterventionIn
from tests.memory.engine_store import engines, opened_store, url_for

EMBEDDER = MiniLMEmbedder()


@pytest.fixture(params=engines())
def store_url(request: pytest.FixtureRequest) -> str | None:
    """None (SQLite), then a migrated PostgreSQL database."""
    return url_for(request, request.param)


@pytest.fixture
async def store(store_url: str | None, tmp_path: Path) -> AsyncIterator[Store]:
    """A migrated store of each engine with agents 'ada' and 'bob'."""
    async with opened_store(store_url, tmp_path) as store:
        await add_agents(store, "ada", "bob")
        yield store


async def add_agents(store: Store, *agent_ids: str) -> None:
    """Agent rows straight into the table."""

    async def agents(conn):
        await conn.run_many(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
            [
                (a, a, "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z")
                for a in agent_ids
            ],
        )

    await store.write(agents)


async def ingest(store: Store, agent_id: str, *episodes: EpisodeIn) -> list[str]:
    """Store episodes through the real ingest path and return their ids."""
    rows, _ = await EpisodeService(store, EMBEDDER, system_clock).ingest(agent_id, episodes)
    return [row.id for row in rows]


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
    assert hits[0].episode.id == ids[0]
    assert hits[0].text_rank == 1 and hits[0].vector_rank is not None
    text_weight, vector_weight = recall.fusion_weights("the PDF ingester crashed")
    k = recall.RRF_K
    expected = text_weight / (k + 1) + vector_weight / (k + hits[0].vector_rank)
    assert hits[0].score == pytest.approx(expected)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(hits) == 3


def test_names_dates_and_numbers_weigh_the_text_ranking_more() -> None:
    paraphrase, _ = recall.fusion_weights("which pet did they bring home from the shelter")
    named, _ = recall.fusion_weights("what did Priya say on March 3 about build 42")
    assert paraphrase == pytest.approx(recall.TEXT_WEIGHT)
    assert named > paraphrase
    assert recall.fusion_weights("") == (recall.TEXT_WEIGHT, 1.0)


async def test_explicit_weights_give_one_ranking_alone(store: Store) -> None:
    await ingest(store, "ada", *(episode(text) for text in CORPUS))
    only_text = await recall.search(store, EMBEDDER, "ada", ["PDF ingester"], 5, weights=(1, 0))
    assert all(h.text_rank is not None for h in only_text if h.score > 0)
    assert [h.score for h in only_text] == sorted((h.score for h in only_text), reverse=True)


async def test_threaded_scoring_ranks_the_same(store: Store, monkeypatch) -> None:
    await ingest(store, "ada", *(episode(text) for text in CORPUS))
    queries = ["the PDF ingester crashed", "weather"]
    inline = await recall.search(store, EMBEDDER, "ada", queries, 5)
    monkeypatch.setattr(recall, "_THREADED_SCORING", 0)  # score on a worker thread
    threaded = await recall.search(store, EMBEDDER, "ada", queries, 5)
    assert [(h.episode.id, h.score) for h in threaded] == [(h.episode.id, h.score) for h in inline]


async def test_interventions_are_searched_too(store: Store) -> None:
    ids = await ingest(
        store,
        "ada",
        episode("Set up the project."),
        episode("Set up the other project.", said="please use pnpm, never npm"),
    )
    hits = await recall.search(store, EMBEDDER, "ada", ["pnpm"], 1)
    assert [h.episode.id for h in hits] == [ids[1]]


async def test_several_queries_fuse_into_one_ranking(store: Store) -> None:
    ids = await ingest(store, "ada", *(episode(text) for text in CORPUS))
    hits = await recall.search(store, EMBEDDER, "ada", ["finance spreadsheet", "Lisbon"], 2)
    assert {h.episode.id for h in hits} == {ids[1], ids[3]}


async def test_only_this_agents_episodes_are_found(store: Store) -> None:
    await ingest(store, "bob", *(episode(f"PDF ingester run {n}") for n in range(300)))
    (mine,) = await ingest(store, "ada", episode("The PDF ingester crashed once."))
    hits = await recall.search(store, EMBEDDER, "ada", ["pdf ingester"], 10)
    # bob's 300 matches crowd the index's top-N, so this exercises the in-SQL fallback.
    assert [h.episode.id for h in hits] == [mine]


async def test_crowded_index_without_the_rowid_list(store: Store, monkeypatch) -> None:
    monkeypatch.setattr(recall, "_ROWID_LIST_MAX", 0)  # force the join over episode rows
    await ingest(store, "bob", *(episode(f"PDF ingester run {n}") for n in range(300)))
    (mine,) = await ingest(store, "ada", episode("The PDF ingester crashed once."))
    hits = await recall.search(store, EMBEDDER, "ada", ["pdf ingester"], 10)
    assert [h.episode.id for h in hits] == [mine]


async def test_filters_since_reflected_and_untrusted(store: Store) -> None:
    old, new, foreign = await ingest(
        store,
        "ada",
        episode("PDF upload failed", finished_at="2026-01-01T00:00:00Z"),
        episode("PDF upload failed again", finished_at="2026-02-01T00:00:00Z"),
        episode("PDF upload from a web page", origin="untrusted"),
    )
    found = await recall.search(store, EMBEDDER, "ada", ["pdf upload"], 10)
    assert {h.episode.id for h in found} == {old, new, foreign}
    since = await recall.search(
        store, EMBEDDER, "ada", ["pdf upload"], 10, since="2026-01-15T00:00:00.000000Z"
    )
    assert old not in {h.episode.id for h in since}
    clean = await recall.search(store, EMBEDDER, "ada", ["pdf upload"], 10, include_untrusted=False)
    assert {h.episode.id for h in clean} == {old, new}

    async def watermark(conn):
        await conn.run(
            "UPDATE episodes SET reflected_at = '2026-03-01T00:00:00.000000Z' WHERE id = ?", (old,)
        )

    await store.write(watermark)
    open_ = await recall.search(store, EMBEDDER, "ada", ["pdf upload"], 10, reflected=False)
    assert {h.episode.id for h in open_} == {new, foreign}
    done = await recall.search(store, EMBEDDER, "ada", ["pdf upload"], 10, reflected=True)
    assert [h.episode.id for h in done] == [old]


async def test_cache_grows_with_new_episodes(store: Store) -> None:
    await ingest(store, "ada", episode("Wrote a poem about the sea."))
    assert (await recall.agent_matrix(store, EMBEDDER, "ada")).count == 1
    (later,) = await ingest(store, "ada", episode("Converted miles to kilometres for the user."))
    cached = await recall.agent_matrix(store, EMBEDDER, "ada")
    assert cached.count == 2
    hits = await recall.search(store, EMBEDDER, "ada", ["kilometres"], 1)
    assert hits[0].episode.id == later


async def test_a_known_episode_state_spares_the_read_until_it_moves(store: Store) -> None:
    await ingest(store, "ada", episode("Wrote a poem about the sea."))
    assert (await recall.agent_matrix(store, EMBEDDER, "ada", state=1)).count == 1
    await ingest(store, "ada", episode("Converted miles to kilometres for the user."))
    # The caller's state has not moved: the cached matrix answers without reading.
    assert (await recall.agent_matrix(store, EMBEDDER, "ada", state=1)).count == 1
    assert (await recall.agent_matrix(store, EMBEDDER, "ada", state=2)).count == 2


async def test_the_context_episode_search_ranks_by_cosine_above_the_floor(store: Store) -> None:
    kept, _ = await ingest(
        store,
        "ada",
        episode("Split the large PDF upload into chunks so the ingester stops crashing."),
        episode("Wrote a poem about the sea."),
    )
    search = recall.recall_episode_search(store, EMBEDDER)
    query = "the ingester fails on big PDF files"
    vectors = await EMBEDDER.embed([query])
    found = await search("ada", query, 10, False, vectors, None)
    assert [e.episode_id for e in found] == [kept]
    assert found[0].score >= recall.EPISODE_FLOOR
    assert await search("ada", query, 10, False, None, None) == []  # no vector: no episodes


async def test_deleting_an_episode_rebuilds_the_cache(store: Store) -> None:
    first, second = await ingest(store, "ada", episode("PDF one"), episode("PDF two"))
    await recall.search(store, EMBEDDER, "ada", ["pdf"], 5)

    async def delete(conn):
        await conn.run("DELETE FROM episodes WHERE id = ?", (first,))

    await store.write(delete)
    hits = await recall.search(store, EMBEDDER, "ada", ["pdf"], 5)
    assert [h.episode.id for h in hits] == [second]
    assert (await recall.agent_matrix(store, EMBEDDER, "ada")).count == 1


HOSTILE = (
    '"unbalanced',
    "NEAR(a b",
    "pdf*",
    "a AND OR NOT",
    "-",
    "col:pdf",
    "^pdf",
    "'; DROP TABLE episodes; --",
    "pdf' OR '1'='1",
    "pdf & !crash | (ingester <-> <2> x)",
    "pdf:* ingester:A",
    "\\x00 pdf \x00 ingester",
    "or or or",
    "%s %(name)s ? :name $1 pdf",
    "\\ \\\\ ' \" `pdf`",
    "パーサー クラッシュ pdf",
)


@pytest.mark.parametrize("query", HOSTILE)
async def test_fts_syntax_in_queries_is_inert(store: Store, query: str) -> None:
    await ingest(store, "ada", episode("The PDF ingester crashed."))
    hits = await recall.search(store, EMBEDDER, "ada", [query], 5)
    assert all(h.score > 0 for h in hits)
    assert (await store.fetchone("SELECT COUNT(*) FROM episodes"))[0] == 1


def test_fts_expression_quotes_terms_and_skips_stop_words() -> None:
    assert recall.fts_expression('the "PDF" ingester') == '"pdf" OR "ingester"'
    assert recall.fts_expression("the") == '"the"'
    assert recall.fts_expression("!!! ...") is None


async def test_no_query_returns_newest(store: Store) -> None:
    ids = await ingest(store, "ada", *(episode(text) for text in CORPUS))
    hits = await recall.search(store, EMBEDDER, "ada", ["   "], 2)
    assert [h.episode.id for h in hits] == [ids[4], ids[3]]
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


# --- several replicas on one PostgreSQL ------------------------------------------------------


async def test_another_replica_sees_new_reflected_and_deleted_episodes_at_once(
    pg_migrated_url: str, tmp_path: Path
) -> None:
    async with (
        opened_store(pg_migrated_url, tmp_path / "a") as writer,
        opened_store(pg_migrated_url, tmp_path / "b") as reader,
    ):
        await add_agents(writer, "ada")
        first, second = await ingest(writer, "ada", episode("PDF one"), episode("PDF two"))
        hits = await recall.search(reader, EMBEDDER, "ada", ["pdf"], 5)
        assert {h.episode.id for h in hits} == {first, second}
        (third,) = await ingest(writer, "ada", episode("The PDF ingester crashed again"))
        assert third in {
            h.episode.id for h in await recall.search(reader, EMBEDDER, "ada", ["pdf"], 5)
        }

        async def reflect(conn):
            await conn.run(
                "UPDATE episodes SET reflected_at = '2026-03-01T00:00:00.000000Z' WHERE id = ?",
                (first,),
            )

        await writer.write(reflect)
        done = await recall.search(reader, EMBEDDER, "ada", ["pdf"], 5, reflected=True)
        assert [h.episode.id for h in done] == [first]

        async def delete(conn):
            await conn.run("DELETE FROM episodes WHERE id = ?", (second,))

        await writer.write(delete)
        left = await recall.search(reader, EMBEDDER, "ada", ["pdf"], 5)
        assert {h.episode.id for h in left} == {first, third}
        assert (await recall.agent_matrix(reader, EMBEDDER, "ada")).count == 2


async def test_concurrent_ingests_on_two_replicas_all_reach_the_cache(
    pg_migrated_url: str, tmp_path: Path
) -> None:
    # Identity seqs may commit out of order across transactions; the per-agent ingest lock
    # keeps one agent's in order, so a cache that only appends above its highest seq misses none.
    async with (
        opened_store(pg_migrated_url, tmp_path / "a") as one,
        opened_store(pg_migrated_url, tmp_path / "b") as two,
    ):
        await add_agents(one, "ada")
        await ingest(one, "ada", episode("seed"))
        seen = [await recall.agent_matrix(two, EMBEDDER, "ada")]

        async def ingest_some(store: Store, n: int) -> None:
            for m in range(5):
                await ingest(store, "ada", *(episode(f"run {n} {m} {k}") for k in range(3)))
                seen.append(await recall.agent_matrix(two, EMBEDDER, "ada"))

        await asyncio.gather(*(ingest_some(store, n) for n, store in enumerate([one, two] * 3)))
        cached = await recall.agent_matrix(two, EMBEDDER, "ada")
        total = (await two.fetchone("SELECT COUNT(*) FROM episodes WHERE agent_id = 'ada'"))[0]
        assert cached.count == total == 1 + 6 * 5 * 3
        assert len(set(cached.seqs.tolist())) == cached.count


async def test_nul_in_episode_text_is_refused_before_anything_is_stored(store: Store) -> None:
    from credence.memory.ingest.episodes import EpisodeRejected

    with pytest.raises(EpisodeRejected, match="NUL"):
        await ingest(store, "ada", episode("fine"), episode("bad \x00 text"))
    with pytest.raises(EpisodeRejected, match="NUL"):
        await ingest(store, "ada", episode("fine", said="steer \x00 me"))
    assert (await store.fetchone("SELECT COUNT(*) FROM episodes"))[0] == 0


async def test_a_broken_full_text_index_means_recall_unavailable(store: Store) -> None:
    await ingest(store, "ada", episode("The PDF ingester crashed."))

    async def break_index(conn):
        if conn.dialect == "sqlite":
            await conn.run("DROP TRIGGER episodes_fts_delete")
            await conn.run("DROP TABLE episodes_fts")
        else:
            await conn.run("DROP INDEX episodes_search")
            await conn.run("ALTER TABLE episodes DROP COLUMN search_vector")

    await store.write(break_index)
    with pytest.raises(recall.RecallUnavailable, match="full-text search failed"):
        await recall.search(store, EMBEDDER, "ada", ["pdf"], 5)


async def test_ingest_for_an_unknown_agent_stores_nothing(store: Store) -> None:
    from credence.memory.ingest.episodes import AgentMissing

    with pytest.raises(AgentMissing):
        await ingest(store, "nobody", episode("lost"))
    assert (await store.fetchone("SELECT COUNT(*) FROM episodes"))[0] == 0
