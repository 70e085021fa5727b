"""The labelled retrieval set through the real context service and embedder, per engine."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from harness import retrieval_set
from harness.retrieval_set import AGENTS, RetrievalSet

from credence.memory.read.context import memory_context
from credence.memory.semantics.model import MiniLMEmbedder
from credence.services import Services
from tests.memory.engine_store import engine_services, engines, url_for

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
RECALL_FLOOR = 0.9
CONTENT_SHARE_FLOOR = 0.7
DATA = retrieval_set.build()


@pytest.fixture(params=engines())
def store_url(request: pytest.FixtureRequest) -> str | None:
    """None (SQLite), then a migrated PostgreSQL database."""
    return url_for(request, request.param)


@pytest.fixture
async def services(
    store_url: str | None, tmp_path: Path, embedder: MiniLMEmbedder
) -> AsyncIterator[Services]:
    async with engine_services(store_url, tmp_path, embedder, lambda: NOW) as built:
        await retrieval_set.seed(built.store, embedder, NOW, DATA)
        yield built


def test_the_set_is_large_labelled_and_hard_for_confidence_alone() -> None:
    assert len(DATA.beliefs) >= 1000 and len(DATA.queries) >= 100
    assert {b.agent_id for b in DATA.beliefs} == set(AGENTS)
    assert {b.role for b in DATA.beliefs} >= {
        None,
        *(r for roles in AGENTS.values() for r in roles),
    }
    by_id = {b.belief_id: b for b in DATA.beliefs}
    assert len(by_id) == len(DATA.beliefs)
    assert len({q.needed for q in DATA.queries}) == len(DATA.queries)
    for query in DATA.queries:
        needed = by_id[query.needed]
        assert needed.agent_id == query.agent_id and needed.role in (None, query.role)
        assert needed.content.lower() not in query.text.lower()
        more_confident = [
            b
            for b in DATA.beliefs
            if b.agent_id == query.agent_id and b.confidence > needed.confidence
        ]
        assert len(more_confident) >= 200
    assert retrieval_set.build() == DATA  # deterministic


async def served_ids(services: Services, data: RetrievalSet, *, with_query: bool) -> list[list]:
    served = []
    for query in data.queries:
        context = await memory_context(
            services.context,
            query.agent_id,
            role=query.role,
            query=query.text if with_query else None,
            limit=10,
        )
        served.append([note.belief_id for note in context.memory_notes])
    return served


async def test_recall_at_10_of_the_needed_belief(services: Services) -> None:
    with_query = await served_ids(services, DATA, with_query=True)
    recall = retrieval_set.recall_at(with_query, DATA)
    assert recall >= RECALL_FLOOR, f"recall@10 {recall:.3f}"
    # Confidence alone (the seed's ranking) finds almost none of them.
    assert retrieval_set.recall_at(await served_ids(services, DATA, with_query=False), DATA) < 0.1
    # Only the asking agent's beliefs, of its role or every role, are ever served.
    by_id = {b.belief_id: b for b in DATA.beliefs}
    for query, ids in zip(DATA.queries, with_query, strict=True):
        assert len(ids) == 10
        for belief_id in ids:
            belief = by_id[belief_id]
            assert belief.agent_id == query.agent_id and belief.role in (None, query.role)


async def test_most_of_the_block_is_memory_at_default_limits(services: Services) -> None:
    tokenizer = retrieval_set.bundled_tokenizer()
    shares, full = [], []
    for query in DATA.queries:
        context = await memory_context(
            services.context, query.agent_id, role=query.role, query=query.text
        )
        assert len(context.memory_notes) == 10
        # Episodes only when related to the query: the relevance floor never pads the block.
        assert len(context.recent_relevant_episodes) <= 10
        content, total = retrieval_set.block_tokens(context.prompt_block, tokenizer)
        shares.append(content / total)
        if len(context.recent_relevant_episodes) == 10:
            full.append(content / total)
    assert full, "no query found ten related episodes"
    assert sum(full) / len(full) >= CONTENT_SHARE_FLOOR, f"mean share {sum(full) / len(full):.3f}"
    # A block with fewer episodes is shorter; its fixed preamble weighs more, by design.
    assert min(full) >= CONTENT_SHARE_FLOOR - 0.05, f"smallest share {min(full):.3f}"
    assert min(shares) >= 0.3, f"smallest share {min(shares):.3f}"
