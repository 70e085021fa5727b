"""The live-belief cache: refreshed by version, and gating its subset equals gating everything."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from credence.clock import rfc3339
from credence.db import make_store
from credence.db.engine import Database
from credence.memory.semantics import gate, live
from credence.memory.semantics.gate import BeliefIndex, Proposal
from credence.memory.semantics.model import MiniLMEmbedder

EMBEDDER = MiniLMEmbedder()
SUBJECTS = (
    "deploy to production on fridays",
    "use tabs for indentation",
    "run the full test suite before pushing",
    "split large pdf uploads into chunks",
    "answer in metric units",
    "squash commits when merging",
    "email the team after each release",
    "retry failed webhooks with backoff",
    "keep request logs for 14 days",
    "keep request logs for 90 days",
    "write commit messages in english",
    "write commit messages in french",
    "use yarn for the frontend",
    "use bun for the frontend",
)
FORMS = ("{s}.", "Never {s}.", "Always {s}.", "Do not {s}.", "Please {s} carefully.", "{s}!")
NOW = "2030-01-01T00:00:00.000000Z"


@pytest.fixture
async def store(tmp_path: Path, database_url: str | None) -> AsyncIterator[Database]:
    """A migrated store with one agent."""
    store = make_store(database_url, tmp_path / "credence.sqlite3")
    await store.open()

    async def agent(conn):
        await conn.run(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('ada', 'Ada', ?, ?)",
            (NOW, NOW),
        )

    await store.write(agent)
    yield store
    await store.close()


def _texts(rng: random.Random, count: int) -> list[str]:
    return [rng.choice(FORMS).format(s=rng.choice(SUBJECTS)).capitalize() for _ in range(count)]


async def _insert(store: Database, rows: list[tuple[str, str, str, bytes, str | None]]) -> None:
    async def work(conn):
        await conn.run_many(
            "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
            " provenance, created_at, updated_at, embedding, proposed_by) VALUES (?, 'ada', ?, ?,"
            " ?, 0.6, 'add', 'clean', ?, ?, ?, ?)",
            [
                (
                    belief_id,
                    content,
                    content.lower(),
                    status,
                    NOW,
                    NOW,
                    blob,
                    f'{{"job_id": "{job}"}}' if job else "{}",
                )
                for belief_id, content, status, blob, job in rows
            ],
        )

    await store.write(work)


async def test_subset_verdicts_equal_full_index_verdicts(store: Database) -> None:
    rng = random.Random(7)
    texts = _texts(rng, 120)
    vectors = EMBEDDER.embed_sync(texts)
    statuses = ("active", "pending", "forgotten")
    rows = [
        (f"b_{n:026d}", text, statuses[n % 3], vectors[n].astype("<f4").tobytes(), None)
        for n, text in enumerate(texts)
    ]
    await _insert(store, rows)
    snapshot = await live.agent_beliefs(store, "ada", EMBEDDER.dim)
    everything = BeliefIndex.build(snapshot.live())
    kinds: set[str] = set()
    sizes = []
    for batch in range(25):
        proposed = _texts(rng, 10)
        proposals = [
            Proposal(
                index=i,
                op="weaken" if i % 4 == 3 else "add",
                belief=text,
                confidence=0.5,
                rationale="",
                source_episodes=("ep_x",),
                target_belief_id=f"b_{rng.randrange(120):026d}" if i % 4 == 3 else None,
            )
            for i, text in enumerate(proposed)
        ]
        embedded = EMBEDDER.embed_sync(proposed)
        subset = snapshot.relevant(proposals, embedded)
        sizes.append(len(subset))
        expected = gate.gate(proposals, everything, set(), embedded)
        actual = gate.gate(proposals, BeliefIndex.build(subset), set(), embedded)
        assert actual == expected, batch
        kinds |= {reason.kind for r in expected for reason in r.reasons}
    assert {
        "duplicate_of",
        "near_duplicate_of",
        "contradicts",
        "changes",
        "op",
        "duplicate_in_batch",
    } <= kinds
    assert min(sizes) < len(texts)


async def test_refresh_reads_only_changed_beliefs(store: Database) -> None:
    blob = np.zeros(EMBEDDER.dim, dtype="<f4").tobytes()
    await _insert(store, [("b_a", "Use tabs.", "active", blob, None)])
    first = await live.agent_beliefs(store, "ada", EMBEDDER.dim)
    assert [b.content for b in first.live()] == ["Use tabs."]

    async def edit(conn):
        await conn.run(
            "UPDATE beliefs SET content = 'Use spaces.', status = 'pending', version = 2,"
            " updated_at = ? WHERE id = 'b_a'",
            (rfc3339(datetime(2030, 2, 1, tzinfo=UTC)),),
        )

    await store.write(edit)
    await _insert(store, [("b_b", "Never push on main.", "active", blob, "job_1")])
    again = await live.agent_beliefs(store, "ada", EMBEDDER.dim)
    assert again is first
    assert [(b.id, b.content, b.status) for b in again.live()] == [
        ("b_a", "Use spaces.", "pending"),
        ("b_b", "Never push on main.", "active"),
    ]
    assert [b.id for b in again.live(exclude_job="job_1")] == ["b_a"]
    assert again.by_key == {"use tabs": set(), "use spaces": {"b_a"}, "never push on main": {"b_b"}}
    assert again.cursor == (await store.fetchone("SELECT MAX(seq) FROM belief_change_log"))[0]

    async def injected(conn):  # a read-path counter: not a change the gate cares about
        await conn.run("UPDATE beliefs SET injection_count = injection_count + 1")

    before = again.cursor
    await store.write(injected)
    assert (await live.agent_beliefs(store, "ada", EMBEDDER.dim)).cursor == before
    await _insert(store, [("b_c", "Squash when merging.", "pending", blob, None)])
    assert await live.prune_log(store, keep=0) == 4
    behind = await live.agent_beliefs(store, "ada", EMBEDDER.dim)  # rescans versions
    assert [b.id for b in behind.live()] == ["b_a", "b_b", "b_c"]
    proposal = Proposal(0, "add", "Use spaces for indentation.", 0.5, "", ("ep",))
    assert [b.id for b in again.relevant([proposal], None)] == ["b_a"]
    assert again.relevant([proposal], None, exclude_job="job_1")[0].id == "b_a"
