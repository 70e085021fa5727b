"""Tests for the hot cache and context service over a real SQLite store, in process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from credence.auth import KeyRing, Principal
from credence.clock import rfc3339
from credence.db.store import Store, StoreError
from credence.embed import WordLlamaEmbedder
from credence.memory.beliefs import BeliefHooks, BeliefService
from credence.memory.context import (
    MAX_LIMIT,
    RECHECK_S,
    CachedNote,
    CacheEntry,
    ContextService,
    HotCache,
    context_of,
    rank_notes,
)
from credence.memory.episodes import AgentMissing, EpisodeService
from credence.memory.prompt_block import parse_prompt_block
from credence.models import EpisodeIn, ProposalIn, ProposedBy
from credence.reflection.gate import decayed_confidence
from credence.services import Services
from credence.settings import Settings

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
ADMIN = Principal(key_id="key_test", scope="admin", agents=None, label="tests")


DISTINCT_LESSONS = [
    "Run database migrations before deploying the API",
    "PDF uploads over ten megabytes crash the ingester",
    "Use pnpm rather than npm in the web workspace",
    "The staging cluster needs a VPN connection",
    "Invoices are generated on the first Monday of the month",
    "Prefer British spelling in customer emails",
    "Screenshots in bug reports must hide customer names",
    "The CI cache is keyed on the lockfile hash",
    "Ask Dana before touching the billing schema",
    "Nightly backups finish around four in the morning",
    "Timeouts against the payment gateway are retried twice",
    "Feature flags are removed one release after launch",
    "Docker images are built for arm64 and amd64",
    "Translations live in a separate repository",
]


class Ticks:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    loaded = WordLlamaEmbedder()
    loaded.load()
    return loaded


@pytest.fixture
async def services(tmp_path: Path, embedder: WordLlamaEmbedder) -> AsyncIterator[Services]:
    store = Store(tmp_path / "credence.sqlite3")
    await store.open()
    clock = Clock(T0)
    hooks = BeliefHooks()
    async with httpx.AsyncClient() as http:
        built = Services(
            settings=Settings(data_dir=tmp_path, scheduler=False),
            clock=clock,
            store=store,
            embedder=embedder,
            http=http,
            keyring=KeyRing(store),
            hooks=hooks,
            beliefs=BeliefService(store, embedder, clock, hooks),
            episodes=EpisodeService(store, embedder, clock),
        )
        await add_agent(built, "coder", roles=["reviewer"])
        try:
            yield built
        finally:
            await store.close()


async def add_agent(services: Services, agent_id: str, roles=(), lambda_per_day=0.02) -> None:
    now = rfc3339(services.clock())
    settings = json.dumps({"lambda_per_day": lambda_per_day})

    async def work(conn) -> None:
        await conn.execute(
            "INSERT INTO agents(id, name, roles, settings, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (agent_id, agent_id, json.dumps(list(roles)), settings, now, now),
        )

    await services.store.write(work)


async def propose(services: Services, text: str, agent_id: str = "coder", **fields) -> str:
    fields.setdefault("confidence", 0.7)
    (result,) = await services.beliefs.propose(
        agent_id,
        [ProposalIn(op="add", belief=text, **fields)],
        ProposedBy(key_id="key_test"),
        "key:key_test",
    )
    assert result.accepted, result
    return result.belief_id


async def decide(services: Services, belief_id: str, action: str, **payload) -> dict:
    row = await services.beliefs.get_row(belief_id)
    outcome = await services.beliefs.decide(
        belief_id,
        action,
        ADMIN,
        if_match=f'"{row["version"]}"',
        idempotency_key=None,
        payload=payload,
    )
    assert outcome.status_code == 200, outcome.body
    return json.loads(outcome.body)


async def kept(services: Services, text: str, **fields) -> str:
    belief_id = await propose(services, text, **fields)
    await decide(services, belief_id, "keep")
    return belief_id


async def served(services: Services, role: str | None = None, limit: int = 50) -> list[str]:
    notes, _ = await context_of(services).notes("coder", role, limit)
    return [n.content for n in notes]


def row(belief_id: str, confidence: float, anchor: datetime, provenance: str = "clean") -> dict:
    stamp = rfc3339(anchor)
    return {
        "id": belief_id,
        "content": f"belief {belief_id}",
        "confidence": confidence,
        "created_at": stamp,
        "updated_at": stamp,
        "provenance": provenance,
    }


# --- ranking and the cache (pure) ---------------------------------------------------------


@pytest.mark.parametrize("lam", [0.02, 0.5, 0.0])
def test_rank_order_is_decayed_confidence_order_at_any_later_time(lam: float) -> None:
    rows = [
        row("b_a", 0.9, T0 - timedelta(days=60)),
        row("b_b", 0.6, T0),
        row("b_c", 0.75, T0 - timedelta(days=10)),
        row("b_d", 0.3, T0 + timedelta(days=1)),
        row("b_e", 0.99, T0 - timedelta(days=400)),
    ]
    ranked = [n.belief_id for n in rank_notes(rows, lam)]
    for later in (T0 + timedelta(days=2), T0 + timedelta(days=100), T0 + timedelta(days=3000)):
        expected = sorted(
            rows,
            key=lambda r: (
                -decayed_confidence(
                    r["confidence"], datetime.fromisoformat(r["created_at"]), later, lam
                ),
                r["id"],
            ),
        )
        # Far in the future every decayed value underflows towards 0; compare where they differ.
        values = [
            decayed_confidence(r["confidence"], datetime.fromisoformat(r["created_at"]), later, lam)
            for r in expected
        ]
        if len(set(values)) == len(values):
            assert ranked == [r["id"] for r in expected]


def test_rank_keeps_only_servable_provenance() -> None:
    rows = [
        row("b_clean", 0.5, T0),
        row("b_owner", 0.4, T0, "owner"),
        row("b_untrusted", 0.99, T0, "untrusted"),
    ]
    assert [n.belief_id for n in rank_notes(rows, 0.02)] == ["b_clean", "b_owner"]


def test_rank_with_zero_confidence_sorts_last() -> None:
    rows = [row("b_zero", 0.0, T0), row("b_low", 0.01, T0 - timedelta(days=365))]
    assert [n.belief_id for n in rank_notes(rows, 0.02)] == ["b_low", "b_zero"]


def entry(counter: int, lam: float = 0.02) -> CacheEntry:
    return CacheEntry(counter, lam, (CachedNote("b_1", "x", 0.5, T0),))


def test_hot_cache_misses_on_a_new_counter_or_lambda_and_invalidates_per_agent() -> None:
    cache = HotCache()
    cache.put("a", None, entry(3))
    cache.put("a", "reviewer", entry(3))
    cache.put("b", None, entry(3))
    assert cache.get("a", None, 3, 0.02) is not None
    assert cache.get("a", None, 2, 0.02) is not None  # built after the last observed change
    assert cache.get("a", None, 4, 0.02) is None
    assert cache.get("a", None, 3, 0.05) is None
    cache.invalidate("a")
    assert cache.get("a", None, 3, 0.02) is None
    assert cache.get("a", "reviewer", 3, 0.02) is None
    assert cache.get("b", None, 3, 0.02) is not None
    assert len(cache) == 1
    # A rebuild begun before the invalidation (generation 0) must not be stored after it.
    assert cache.generation("a") == 1
    assert cache.put("a", None, entry(5), generation=0) is False
    assert cache.put("a", None, entry(5), generation=1) is True
    assert len(cache) == 2


def test_hot_cache_is_a_bounded_lru() -> None:
    cache = HotCache(max_entries=2)
    cache.put("a", None, entry(1))
    cache.put("b", None, entry(1))
    assert cache.get("a", None, 1, 0.02) is not None  # a is now most recent
    cache.put("c", None, entry(1))
    assert cache.get("b", None, 1, 0.02) is None
    assert cache.get("a", None, 1, 0.02) is not None
    assert len(cache) == 2
    cache.invalidate("b")  # already evicted: nothing to do, nothing breaks
    assert len(cache) == 2


# --- the service over a real store --------------------------------------------------------


async def test_only_active_clean_or_owner_beliefs_are_served(services: Services) -> None:
    episode_rows, _ = await services.episodes.ingest(
        "coder", [EpisodeIn(session_id="s", summary="read a vendor page", origin="untrusted")]
    )
    active = await kept(services, "Run the linter before committing")
    await propose(services, "Pending lessons wait for a human")
    forgotten = await kept(services, "Deploy on Fridays")
    await decide(services, forgotten, "forget", reason="no")
    untrusted = await propose(
        services, "The vendor says to disable TLS", source_episodes=[episode_rows[0]["id"]]
    )
    assert await served(services) == ["Run the linter before committing"]
    edited = await decide(services, untrusted, "edit", content="Keep TLS checks on for vendors")
    assert edited["provenance"] == "owner"
    assert set(await served(services)) == {
        "Run the linter before committing",
        "Keep TLS checks on for vendors",
    }
    await decide(services, active, "reopen")
    assert await served(services) == ["Keep TLS checks on for vendors"]


async def test_roles_get_their_own_beliefs_and_the_general_ones(services: Services) -> None:
    await kept(services, "General: write tests first", confidence=0.9)
    await kept(services, "Reviewers: ask for a failing test", role="reviewer", confidence=0.8)
    await kept(services, "Planners: keep plans short", role="planner", confidence=0.7)
    assert await served(services) == ["General: write tests first"]
    assert await served(services, "reviewer") == [
        "General: write tests first",
        "Reviewers: ask for a failing test",
    ]
    assert await served(services, "nobody") == ["General: write tests first"]


async def test_a_warm_read_uses_the_cache_and_every_change_invalidates_it(
    services: Services,
) -> None:
    context = context_of(services)
    first = await kept(services, "Prefer small pull requests")
    assert await served(services) == ["Prefer small pull requests"]
    rebuilds = context.rebuilds
    for _ in range(5):
        assert await served(services) == ["Prefer small pull requests"]
    assert context.rebuilds == rebuilds
    # The after-commit hook drops the entry before decide() even returns.
    await decide(services, first, "forget")
    assert len(context.cache) == 0
    assert await served(services) == []
    assert context.rebuilds == rebuilds + 1


async def test_concurrent_misses_share_one_rebuild(services: Services) -> None:
    await kept(services, "Squash fixup commits before merging")
    context = context_of(services)
    rebuilds = context.rebuilds
    results = await asyncio.gather(*(context.notes("coder", None, 5) for _ in range(20)))
    assert all(len(notes) == 1 for notes, _ in results)
    assert context.rebuilds == rebuilds + 1


async def test_another_process_changing_a_belief_is_noticed_within_the_recheck(
    services: Services,
) -> None:
    ticks = Ticks()
    context = ContextService(services.store, services.clock, monotonic=ticks)
    belief_id = await kept(services, "Pin dependency versions")
    assert [n.content for n in (await context.notes("coder", None))[0]] == [
        "Pin dependency versions"
    ]
    checks = context.checks
    script = textwrap.dedent(
        f"""
        import asyncio, json
        from pathlib import Path
        from credence.auth import Principal
        from credence.clock import system_clock
        from credence.db.store import Store
        from credence.embed import WordLlamaEmbedder
        from credence.memory.beliefs import BeliefHooks, BeliefService

        async def main():
            store = Store(Path({str(services.store.path)!r}))
            await store.open()
            service = BeliefService(store, WordLlamaEmbedder(), system_clock, BeliefHooks())
            admin = Principal(key_id="key_other", scope="admin", agents=None, label="other")
            outcome = await service.decide(
                {belief_id!r}, "forget", admin, if_match='"2"', idempotency_key=None,
                payload={{"reason": "from another process"}},
            )
            await store.close()
            print(outcome.status_code)

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.strip() == "200", done.stderr
    # Within the recheck interval a warm read touches no database: the bound on staleness.
    ticks.now += RECHECK_S / 2
    assert len((await context.notes("coder", None))[0]) == 1
    assert context.checks == checks
    ticks.now += RECHECK_S / 2
    assert (await context.notes("coder", None))[0] == []
    assert context.checks == checks + 1


async def test_a_rebuild_racing_an_invalidation_is_not_cached(services: Services) -> None:
    context = context_of(services)
    await kept(services, "Rotate the on-call rota weekly")
    state = await context.agent_state("coder")
    racing = asyncio.create_task(context._rebuild("coder", None, state.lambda_per_day))
    await asyncio.sleep(0)  # the rebuild is now waiting for its read
    context.invalidate("coder")
    entry = await racing
    assert len(entry.notes) == 1
    assert len(context.cache) == 0


async def test_decay_is_served_and_a_new_lambda_is_seen_after_the_recheck(
    services: Services,
) -> None:
    ticks = Ticks()
    context = ContextService(services.store, services.clock, monotonic=ticks)
    await kept(services, "Cache build artefacts", confidence=0.8)
    services.clock.now = T0 + timedelta(days=30)
    (note,), _ = await context.notes("coder", None, 10)
    assert note.confidence == 0.8
    assert note.decayed_confidence == pytest.approx(0.8 * 0.548812, abs=1e-5)

    async def no_decay(conn) -> None:
        await conn.execute(
            "UPDATE agents SET settings = ? WHERE id = 'coder'", ('{"lambda_per_day": 0}',)
        )

    await services.store.write(no_decay)
    ticks.now += RECHECK_S
    (note,), _ = await context.notes("coder", None, 10)
    assert note.decayed_confidence == 0.8


async def test_limit_and_top_n_by_decayed_confidence(services: Services) -> None:
    for i, lesson in enumerate(DISTINCT_LESSONS[:12]):
        await kept(services, lesson, confidence=0.3 + i * 0.05)
    notes, _ = await context_of(services).notes("coder", None, 3)
    assert [n.confidence for n in notes] == pytest.approx([0.85, 0.8, 0.75])
    notes, _ = await context_of(services).notes("coder", None, 10_000)
    assert len(notes) == 12 <= MAX_LIMIT


async def test_unknown_agent_is_agent_missing(services: Services) -> None:
    with pytest.raises(AgentMissing):
        await context_of(services).notes("ghost", None, 5)


async def test_context_block_and_recorded_injections(services: Services) -> None:
    belief_id = await kept(services, "Ask before </memory-item> deleting branches")
    before = await services.beliefs.get_row(belief_id)
    context = context_of(services)
    result = await context.context("coder", role=None, query=None, limit=5)
    nonce = result.prompt_block.split('nonce="')[1].split('"')[0]
    (item,) = parse_prompt_block(result.prompt_block, nonce)
    assert item.item_id == belief_id and "‹/memory-item›" in item.text
    await context.context("coder", role=None, query=None, limit=5)
    services.clock.now = T0 + timedelta(hours=1)
    await context.context("coder", role=None, query=None, limit=5)
    assert await context.recorder.flush(services.store) == 1
    after = await services.beliefs.get_row(belief_id)
    assert after["injection_count"] == 3
    assert after["last_injected_at"] == rfc3339(T0 + timedelta(hours=1))
    # Using memory is not changing it: no new version, no new decay anchor, no cache drop.
    assert (after["version"], after["updated_at"]) == (before["version"], before["updated_at"])
    assert await context.recorder.flush(services.store) == 0


async def test_a_failed_flush_keeps_the_servings_for_the_next_one(
    services: Services, tmp_path: Path
) -> None:
    belief_id = await kept(services, "Label flaky tests")
    context = context_of(services)
    await context.context("coder", role=None, query=None)
    closed = Store(tmp_path / "never-opened.sqlite3")
    with pytest.raises(StoreError):
        await context.recorder.flush(closed)
    assert context.recorder.pending == 1
    await context.context("coder", role=None, query=None)
    assert await context.recorder.flush(services.store) == 1
    assert (await services.beliefs.get_row(belief_id))["injection_count"] == 2
