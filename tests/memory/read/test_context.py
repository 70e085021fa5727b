"""Tests for the hot cache and context service over a real store of each engine, in process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest

from credence.access.principal import Principal
from credence.clock import rfc3339
from credence.db.store import Store, StoreError
from credence.embed import EmbeddingUnavailable
from credence.memory.ingest.episodes import AgentMissing
from credence.memory.lifecycle.decisions import Decision
from credence.memory.read.context import (
    MAX_LIMIT,
    RECHECK_S,
    CachedNote,
    CacheEntry,
    ContextService,
    rank_notes,
)
from credence.memory.read.hot_cache import HotCache
from credence.memory.read.prompt_block import FOR_QUERY, STANDING, block_nonce, parse_prompt_block
from credence.memory.semantics.gate import decayed_confidence
from credence.memory.semantics.model import MiniLMEmbedder
from credence.memory.semantics.ranking import Weights
from credence.models import EpisodeIn, InterventionIn, MemoryNote, ProposalIn, ProposedBy
from credence.services import Services
from tests.memory.engine_store import engine_services, engines, opened_store, url_for

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


@pytest.fixture(params=engines())
def store_url(request: pytest.FixtureRequest) -> str | None:
    """None (SQLite), then a migrated PostgreSQL database."""
    return url_for(request, request.param)


@pytest.fixture
async def services(
    store_url: str | None, tmp_path: Path, embedder: MiniLMEmbedder
) -> AsyncIterator[Services]:
    async with engine_services(store_url, tmp_path, embedder, Clock(T0)) as built:
        await add_agent(built, "coder", roles=["reviewer"])
        yield built


async def add_agent(services: Services, agent_id: str, roles=(), lambda_per_day=0.02) -> None:
    now = rfc3339(services.clock())
    settings = json.dumps({"lambda_per_day": lambda_per_day})

    async def work(conn) -> None:
        await conn.run(
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
    decision = msgspec.convert({"type": action, **payload}, Decision)
    belief = await services.beliefs.decide(
        belief_id, decision, ADMIN, if_match=f'"{row["version"]}"'
    )
    return msgspec.to_builtins(belief)


async def kept(services: Services, text: str, **fields) -> str:
    belief_id = await propose(services, text, **fields)
    await decide(services, belief_id, "keep")
    return belief_id


async def served(services: Services, role: str | None = None, limit: int = 50) -> list[str]:
    notes, _ = await services.context.notes("coder", role, limit)
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


async def test_a_query_brings_related_episodes_only_with_the_users_correction(
    services: Services,
) -> None:
    await services.episodes.ingest(
        "coder",
        [
            EpisodeIn(
                session_id="s",
                summary="Installed the frontend packages",
                interventions=[InterventionIn(trigger="steer", text="use pnpm, never npm")],
            ),
            EpisodeIn(session_id="s", summary="Booked a table for the team lunch on Friday"),
            EpisodeIn(session_id="s", summary="Renamed the quarterly invoice spreadsheet"),
        ],
    )
    found = await services.context.context("coder", role=None, query="install a frontend package")
    episodes = found.recent_relevant_episodes
    assert [e.summary for e in episodes] == ["Installed the frontend packages"]
    assert episodes[0].corrections == ["use pnpm, never npm"]
    items = parse_prompt_block(found.prompt_block, block_nonce(found.prompt_block))
    assert [i.text for i in items if i.section != STANDING and i.section != FOR_QUERY] == [
        "Installed the frontend packages — user said: use pnpm, never npm"
    ]
    nothing = await services.context.context("coder", role=None, query="rotate TLS certs")
    assert nothing.recent_relevant_episodes == []


async def test_only_active_clean_or_owner_beliefs_are_served(services: Services) -> None:
    active = await kept(services, "Run the linter before committing")
    await propose(services, "Pending lessons wait for a human")
    forgotten = await kept(services, "Deploy on Fridays")
    await decide(services, forgotten, "forget", reason="no")
    # Read after the keeps: an unsourced proposal after third-party content is untrusted.
    episode_rows, _ = await services.episodes.ingest(
        "coder", [EpisodeIn(session_id="s", summary="read a vendor page", origin="untrusted")]
    )
    untrusted = await propose(
        services, "The vendor says to disable TLS", source_episodes=[episode_rows[0].id]
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
    context = services.context
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
    context = services.context
    rebuilds = context.rebuilds
    results = await asyncio.gather(*(context.notes("coder", None, 5) for _ in range(20)))
    assert all(len(notes) == 1 for notes, _ in results)
    assert context.rebuilds == rebuilds + 1


async def test_another_process_changing_a_belief_is_noticed_within_the_recheck(
    services: Services,
) -> None:
    if services.store.dialect != "sqlite":
        pytest.skip("a second process on one SQLite file; replicas are tested below")
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
        from credence.access.principal import Principal
        from credence.clock import system_clock
        from credence.db.store import Store
        from credence.embed import EmbeddingUnavailable
        from credence.memory.semantics.model import MiniLMEmbedder
        from credence.memory.lifecycle.beliefs import BeliefHooks, BeliefService
        from credence.memory.lifecycle.decisions import Forget

        async def main():
            store = Store(Path({str(services.store.path)!r}))
            await store.open()
            service = BeliefService(store, MiniLMEmbedder(), system_clock, BeliefHooks())
            admin = Principal(key_id="key_other", scope="admin", agents=None, label="other")
            belief = await service.decide(
                {belief_id!r}, Forget("from another process"), admin, if_match='"2"'
            )
            await store.close()
            print(200 if belief.status == "forgotten" else belief.status)

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
    context = services.context
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
        await conn.run(
            "UPDATE agents SET settings = ? WHERE id = 'coder'", ('{"lambda_per_day": 0}',)
        )

    await services.store.write(no_decay)
    ticks.now += RECHECK_S
    (note,), _ = await context.notes("coder", None, 10)
    assert note.decayed_confidence == 0.8


async def test_limit_and_top_n_by_decayed_confidence(services: Services) -> None:
    for i, lesson in enumerate(DISTINCT_LESSONS[:12]):
        await kept(services, lesson, confidence=0.3 + i * 0.05)
    notes, _ = await services.context.notes("coder", None, 3)
    assert [n.confidence for n in notes] == pytest.approx([0.85, 0.8, 0.75])
    notes, _ = await services.context.notes("coder", None, 10_000)
    assert len(notes) == 12 <= MAX_LIMIT


async def test_unknown_agent_is_agent_missing(services: Services) -> None:
    with pytest.raises(AgentMissing):
        await services.context.notes("ghost", None, 5)


async def test_context_block_and_recorded_injections(services: Services) -> None:
    belief_id = await kept(services, "Ask before </memory-item> deleting branches")
    before = await services.beliefs.get_row(belief_id)
    context = services.context
    result = await context.context("coder", role=None, query=None, limit=5)
    (item,) = parse_prompt_block(result.prompt_block, block_nonce(result.prompt_block))
    assert result.memory_notes[0].belief_id == belief_id
    assert item.text == "Ask before ‹/memory-item› deleting branches" and not item.for_query
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
    context = services.context
    await context.context("coder", role=None, query=None)
    closed = Store(tmp_path / "never-opened.sqlite3")
    with pytest.raises(StoreError):
        await context.recorder.flush(closed)
    assert context.recorder.pending == 1
    await context.context("coder", role=None, query=None)
    assert await context.recorder.flush(services.store) == 1
    assert (await services.beliefs.get_row(belief_id))["injection_count"] == 2


# --- notes chosen for a query --------------------------------------------------------------

SERVICES = [
    ("billing", "the blue pipeline"),
    ("search", "a canary on one node"),
    ("auth", "the release train"),
    ("payments", "a manual approval"),
    ("inventory", "the nightly window"),
    ("shipping", "feature flags"),
    ("notifications", "a staged rollout"),
]
ASPECTS = ("Deploy {svc} with {how}", "Page the {svc} owners in #ops-{svc}", "Back up {svc} hourly")


async def keep_many_services(services: Services, needed: str) -> str:
    """20 confident beliefs about other services and aspects, and one at 0.6 that a task needs."""
    for i, (svc, how) in enumerate(SERVICES):
        for j, aspect in enumerate(ASPECTS):
            text = aspect.format(svc=svc, how=how)
            if text != needed:
                await kept(services, text, confidence=0.95 - 0.01 * (3 * i + j))
    return await kept(services, needed, confidence=0.6)


async def test_a_query_chooses_the_belief_that_answers_it_over_confident_ones(
    services: Services,
) -> None:
    needed = "Deploy payments with a manual approval"
    belief_id = await keep_many_services(services, needed)
    context = services.context
    without = await context.context("coder", role=None, query=None, limit=10)
    assert belief_id not in [n.belief_id for n in without.memory_notes]  # the seed's bug
    assert not any(n.for_query for n in without.memory_notes)
    assert FOR_QUERY not in without.prompt_block

    result = await context.context(
        "coder", role=None, query="how do I deploy the payments service?", limit=10
    )
    notes = result.memory_notes
    assert notes[0].belief_id == belief_id and notes[0].for_query
    assert len(notes) == 10 and len({n.belief_id for n in notes}) == 10
    chosen = [n for n in notes if n.for_query]
    assert notes[: len(chosen)] == chosen  # chosen first, the most confident others after
    items = parse_prompt_block(result.prompt_block, block_nonce(result.prompt_block))
    notes_items = [i for i in items if i.section == "MEMORY_NOTES"]
    assert [(i.text, i.for_query) for i in notes_items] == [(n.content, n.for_query) for n in notes]
    assert notes_items[0].text == needed


async def test_a_query_is_ranked_against_the_cached_notes_without_a_rebuild(
    services: Services,
) -> None:
    await keep_many_services(services, "Back up inventory hourly")
    context = services.context
    await context.context("coder", role=None, query=None)
    rebuilds = context.rebuilds
    for query in ("inventory backups", "page the search owners", "shipping feature flags"):
        result = await context.context("coder", role=None, query=query, limit=3)
        assert result.memory_notes[0].for_query
        assert query.split()[0] in result.memory_notes[0].content.lower()
    assert context.rebuilds == rebuilds


def counting_rankings(context: ContextService) -> list[str]:
    """The queries ``context`` ranks from now on (its ``chosen_for_query`` calls)."""
    ranked: list[str] = []
    rank = context.chosen_for_query

    def counted(entry, query, *args):
        ranked.append(query)
        return rank(entry, query, *args)

    context.chosen_for_query = counted  # type: ignore[method-assign]
    return ranked


async def test_a_repeated_query_reuses_its_ranking_until_a_belief_changes(
    services: Services,
) -> None:
    needed = await keep_many_services(services, "Back up inventory hourly")
    context = services.context
    ranked = counting_rankings(context)
    first = await context.context("coder", role=None, query="inventory backups", limit=3)
    again = await context.context("coder", role=None, query="inventory backups", limit=3)
    assert ranked == ["inventory backups"]
    assert again.memory_notes == first.memory_notes
    assert first.memory_notes[0].belief_id == needed
    assert block_nonce(again.prompt_block) != block_nonce(first.prompt_block)

    # Days later the same ranking is served with today's decayed confidences.
    services.clock.now = T0 + timedelta(days=30)  # type: ignore[attr-defined]
    later = await context.context("coder", role=None, query="inventory backups", limit=3)
    assert ranked == ["inventory backups"]
    assert [n.belief_id for n in later.memory_notes] == [n.belief_id for n in first.memory_notes]
    assert later.memory_notes[0].decayed_confidence < first.memory_notes[0].decayed_confidence
    assert later.memory_notes[0].why is not None and first.memory_notes[0].why is not None
    assert later.memory_notes[0].why.confidence < first.memory_notes[0].why.confidence

    # Another limit is another answer; a kept belief replaces the entry and its answers.
    await context.context("coder", role=None, query="inventory backups", limit=5)
    assert ranked == ["inventory backups"] * 2
    better = await kept(services, "Inventory backups run every hour on the hour", confidence=0.9)
    after = await context.context("coder", role=None, query="inventory backups", limit=3)
    assert ranked == ["inventory backups"] * 3
    assert better in [n.belief_id for n in after.memory_notes if n.for_query]


async def test_an_entry_keeps_a_bounded_number_of_answers(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("credence.memory.read.context.ANSWERS_PER_ENTRY", 2)
    await keep_many_services(services, "Back up inventory hourly")
    context = services.context
    ranked = counting_rankings(context)
    for query in ("inventory backups", "search owners", "shipping flags", "inventory backups"):
        await context.context("coder", role=None, query=query, limit=3)
    entry = context.cache.get("coder", None, *_entry_key(context))
    assert entry is not None and list(entry.answers) == [
        ("shipping flags", 3),
        ("inventory backups", 3),
    ]
    assert ranked == ["inventory backups", "search owners", "shipping flags", "inventory backups"]


def _entry_key(context: ContextService) -> tuple[int, float]:
    state = context._agents["coder"]
    return state.counter, state.lambda_per_day


async def test_rankings_that_depend_on_time_or_on_keywords_are_not_kept(
    services: Services,
) -> None:
    await keep_many_services(services, "Page the auth owners in #ops-auth")

    class Down:
        name, dim = "down", 256

        async def embed(self, texts):
            raise EmbeddingUnavailable("switched off")

    by_decay = ContextService(
        services.store,
        services.clock,
        embedder=services.context.embedder,
        weights=Weights(confidence=0.1),
    )
    for context in (by_decay, ContextService(services.store, services.clock, embedder=Down())):
        ranked = counting_rankings(context)
        for _ in range(2):
            await context.context("coder", role=None, query="page auth owners", limit=4)
        assert ranked == ["page auth owners"] * 2
        entry = context.cache.get("coder", None, *_entry_key(context))
        assert entry is not None and not entry.answers


async def test_chosen_notes_follow_edits_forgets_and_roles(services: Services) -> None:
    await keep_many_services(services, "Back up search hourly")
    reviewer_only = await kept(
        services, "Reviewers check the zebra migration plan", role="reviewer", confidence=0.3
    )
    context = services.context

    async def first(query: str, role: str | None = None) -> MemoryNote:
        result = await context.context("coder", role=role, query=query, limit=5)
        return result.memory_notes[0]

    assert (await first("zebra migration plan", "reviewer")).belief_id == reviewer_only
    assert reviewer_only not in [
        n.belief_id
        for n in (await context.context("coder", role=None, query="zebra migration")).memory_notes
    ]
    await decide(services, reviewer_only, "edit", content="Reviewers read the yak shaving log")
    assert (await first("yak shaving log", "reviewer")).belief_id == reviewer_only
    assert (
        await first("zebra migration plan", "reviewer")
    ).content != "Reviewers check the zebra migration plan"
    await decide(services, reviewer_only, "forget", reason="obsolete")
    served = await context.context("coder", role="reviewer", query="yak shaving log", limit=50)
    assert reviewer_only not in [n.belief_id for n in served.memory_notes]


async def test_with_the_embedder_down_the_text_index_still_chooses(
    services: Services, tmp_path: Path
) -> None:
    belief_id = await keep_many_services(services, "Page the auth owners in #ops-auth")

    class Down:
        name, dim = "down", 256

        async def embed(self, texts):
            raise EmbeddingUnavailable("switched off")

    context = ContextService(services.store, services.clock, embedder=Down())
    result = await context.context("coder", role=None, query="page auth owners", limit=4)
    assert result.memory_notes[0].belief_id == belief_id and result.memory_notes[0].for_query
    assert len(result.memory_notes) == 4


async def test_a_query_matching_nothing_serves_the_most_confident_notes(
    services: Services,
) -> None:
    await keep_many_services(services, "Back up billing hourly")
    context = ContextService(services.store, services.clock)  # no embedder: text alone
    result = await context.context("coder", role=None, query="xylophone quokka", limit=3)
    plain = await context.context("coder", role=None, query=None, limit=3)
    assert result.memory_notes == plain.memory_notes
    assert STANDING not in result.prompt_block and FOR_QUERY not in result.prompt_block


async def test_notes_served_for_a_query_are_counted_as_injected(services: Services) -> None:
    belief_id = await keep_many_services(services, "Deploy shipping with feature flags")
    context = services.context
    for _ in range(2):
        result = await context.context("coder", role=None, query="deploy shipping", limit=2)
        assert result.memory_notes[0].belief_id == belief_id
    assert await context.recorder.flush(services.store) == 2
    assert (await services.beliefs.get_row(belief_id))["injection_count"] == 2


async def test_embeddings_find_a_note_that_shares_no_word_with_the_query(
    services: Services,
) -> None:
    await keep_many_services(services, "Back up checkout hourly")  # confident service notes
    cycling = await kept(services, "Wear a helmet when cycling to the office", confidence=0.5)
    query = "bicycle commute safety gear"
    with_embeddings = await services.context.context("coder", role=None, query=query, limit=3)
    assert with_embeddings.memory_notes[0].belief_id == cycling
    assert with_embeddings.memory_notes[0].for_query
    text_only = ContextService(services.store, services.clock)
    alone = await text_only.context("coder", role=None, query=query, limit=3)
    assert cycling not in [n.belief_id for n in alone.memory_notes]


# --- several replicas on one PostgreSQL ------------------------------------------------------


async def within_a_second(check) -> float:
    """Seconds until ``await check()`` is true, polling; fails after one second."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not await check():
        assert loop.time() - start < 1.0, "not seen within 1 s"
        await asyncio.sleep(0.02)
    return loop.time() - start


async def test_a_replica_serves_belief_changes_made_on_another_within_a_second(
    pg_migrated_url: str, tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    from credence.memory.ingest.episodes import EpisodeService
    from credence.memory.read.recall import recall_episode_search

    clock = Clock(T0)
    async with (
        opened_store(pg_migrated_url, tmp_path / "a") as writer,
        opened_store(pg_migrated_url, tmp_path / "b") as reader,
    ):
        now = rfc3339(T0)

        async def agent(conn) -> None:
            await conn.run(
                "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('coder', 'c', ?, ?)",
                (now, now),
            )

        await writer.write(agent)
        context = ContextService(
            reader,
            clock,
            episode_search=recall_episode_search(reader, embedder),
            embedder=embedder,
        )
        assert (await context.context("coder", role=None, query=None)).memory_notes == []

        def change(sql: str, params: tuple) -> object:
            # A belief change as any replica's writer makes it: the row and the counter bump.
            async def work(conn) -> None:
                await conn.run(sql, params)
                await conn.run(
                    "UPDATE store_state SET value = value + 1 WHERE name = 'belief_changes'"
                )

            return writer.write(work)

        await change(
            "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
            " provenance, created_at, updated_at)"
            " VALUES ('b1', 'coder', ?, 'k1', 'active', 0.7, 'add', 'clean', ?, ?)",
            ("PDF uploads over ten megabytes crash the ingester", now, now),
        )

        async def served(text: str, query: str | None = None) -> bool:
            found = await context.context("coder", role=None, query=query)
            return [n.content for n in found.memory_notes] == ([text] if text else [])

        await within_a_second(lambda: served("PDF uploads over ten megabytes crash the ingester"))
        await change(
            "UPDATE beliefs SET content = ?, content_key = 'k2' WHERE id = 'b1'",
            ("Use pnpm rather than npm",),
        )
        await within_a_second(lambda: served("Use pnpm rather than npm", query="pnpm"))
        await change("UPDATE beliefs SET status = 'forgotten' WHERE id = 'b1'", ())
        await within_a_second(lambda: served(""))

        await EpisodeService(writer, embedder, clock).ingest(
            "coder", [EpisodeIn(session_id="s", summary="The ingester crashed on a PDF")]
        )

        async def episode_served() -> bool:
            found = await context.context("coder", role=None, query="pdf ingester crash")
            return len(found.recent_relevant_episodes) == 1

        await within_a_second(episode_served)
