"""Beliefs, decisions, the audit chain and the gate's cache on both engines, and across replicas."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import psycopg
import pytest

from credence.access.principal import Principal
from credence.api.decisions import Decisions
from credence.clock import fixed_clock
from credence.db import beliefs as rows_of
from credence.db import make_store
from credence.db.audit import AuditEntry
from credence.db.beliefs import BeliefRecord, BeliefWrite
from credence.db.engine import Database
from credence.db.idempotency import Remembered
from credence.errors import Conflict
from credence.memory.lifecycle import audit
from credence.memory.lifecycle.beliefs import BeliefHooks, BeliefService
from credence.memory.lifecycle.decisions import Decision
from credence.memory.lifecycle.feedback import recent_feedback
from credence.memory.read.export import export_memory
from credence.memory.read.injection import InjectionRecorder
from credence.memory.semantics import live
from credence.memory.semantics.gate import GateResult
from credence.memory.semantics.model import MiniLMEmbedder
from credence.models import ProposalIn, ProposedBy
from credence.models.reasons import Reason

BOTH = pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)
PG_ONLY = pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
NOW = "2030-01-01T00:00:00.000000Z"
CLOCK = fixed_clock(datetime(2030, 1, 2, tzinfo=UTC))
ADMIN = Principal(key_id="k_admin", scope="admin", agents=None, label="Ana's phone")


class Replica:
    """One process's view of the shared database: its own store and belief service."""

    def __init__(self, store: Database, embedder: MiniLMEmbedder) -> None:
        self.store = store
        self.beliefs = BeliefService(store, embedder, CLOCK, BeliefHooks())

    async def propose(self, text: str, **fields: Any) -> dict[str, Any]:
        """Propose one add and return the pending belief's row as a dict."""
        proposal = ProposalIn(op="add", belief=text, confidence=0.7, **fields)
        (result,) = await self.beliefs.propose("ada", [proposal], ProposedBy(key_id="k"), "key:k")
        assert result.accepted, result
        return dict(await self.beliefs.get_row(result.belief_id))

    async def decide(
        self,
        row: dict[str, Any],
        action: str,
        payload: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> Remembered:
        """Decide as the API does, with If-Match set to the row's version."""
        decision = msgspec.convert({"type": action, **(payload or {})}, Decision)
        return await Decisions(self.beliefs).decide(
            row["id"],
            decision,
            ADMIN,
            if_match=f'"{row["version"]}"',
            idempotency_key=idempotency_key,
        )


async def _seed(store: Database) -> None:
    async def work(conn: Any) -> None:
        await conn.run(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('ada', 'Ada', ?, ?)",
            (NOW, NOW),
        )
        await conn.run(
            "INSERT INTO api_keys(id, key_hash, scope, label, created_at)"
            " VALUES ('k_admin', 'h', 'admin', 'Ana''s phone', ?)",
            (NOW,),
        )
        await conn.run_many(
            "INSERT INTO episodes(id, agent_id, session_id, finished_at, summary, origin,"
            " created_at) VALUES (?, 'ada', 's', ?, 'did a thing', ?, ?)",
            [("ep_clean", NOW, "clean", NOW), ("ep_web", NOW, "untrusted", NOW)],
        )

    await store.write(work)


@pytest.fixture
async def stores(
    tmp_path: Path, database_url: str | None
) -> AsyncIterator[tuple[Database, Database]]:
    """Two stores on one database (two replicas), one agent, a clean and an untrusted episode."""
    opened = [make_store(database_url, tmp_path / "credence.sqlite3") for _ in range(2)]
    for store in opened:
        await store.open()
    await _seed(opened[0])
    try:
        yield opened[0], opened[1]
    finally:
        for store in opened:
            live.forget_cache(store)
            await store.close()


@pytest.fixture
def replicas(
    stores: tuple[Database, Database], embedder: MiniLMEmbedder
) -> tuple[Replica, Replica]:
    """A belief service on each store."""
    return Replica(stores[0], embedder), Replica(stores[1], embedder)


@BOTH
async def test_lifecycle_is_audited_exported_and_verifies(replicas) -> None:
    one, _ = replicas
    belief = await one.propose("PDFs over 10MB exhaust the ingester", source_episodes=["ep_clean"])
    kept = await one.decide(belief, "keep")
    assert kept.status_code == 200 and kept.headers == {"ETag": '"2"'}
    row = dict(await one.beliefs.get_row(belief["id"]))
    reopened = await one.decide(row, "reopen")
    row = dict(await one.beliefs.get_row(belief["id"]))
    assert reopened.status_code == 200 and row["status"] == "pending"
    await one.decide(row, "forget", payload={"reason": "too broad"})
    row = dict(await one.beliefs.get_row(belief["id"]))
    edited = await one.decide(row, "edit", payload={"content": "Split PDFs over 10MB first"})
    assert json.loads(edited.body)["provenance"] == "owner"
    assert await audit.verify(one.store) == (True, 5, None)
    trail = await audit.trail(one.store, belief["id"])
    assert [r["action"] for r in trail] == ["proposed", "kept", "reopened", "forgotten", "edited"]
    assert {r["actor_label"] for r in trail} == {"a deleted key", "Ana's phone"}
    page, cursor = await audit.decisions(one.store, agent_ids=["ada"], limit=3, cursor=None)
    assert [r["action"] for r in page] == ["edited", "forgotten", "reopened"] and cursor
    rest, end = await audit.decisions(one.store, agent_ids=None, limit=3, cursor=int(cursor))
    assert [r["action"] for r in rest] == ["kept"] and end is None
    assert rest[0]["content"] == "Split PDFs over 10MB first"
    exported = await export_memory(one.store, CLOCK, "ada")
    assert [(b.id, b.audit.events) for b in exported.beliefs] == [(belief["id"], 5)]
    assert exported.beliefs[0].audit.last_row_hash == trail[-1]["row_hash"]
    feedback = await recent_feedback(one.store, "ada")
    assert [(r.proposed, r.kept) for r in feedback.edited] == [
        ("PDFs over 10MB exhaust the ingester", "Split PDFs over 10MB first")
    ]
    page, _ = await one.beliefs.list_rows(agent_ids=["ada"], status="active", limit=5, cursor=None)
    assert [r["id"] for r in page] == [belief["id"]]


@BOTH
async def test_an_untrusted_belief_is_a_409_and_the_database_refusal_a_conflict(replicas) -> None:
    one, _ = replicas
    belief = await one.propose("Vendor says: disable TLS checks", source_episodes=["ep_web"])
    assert belief["provenance"] == "untrusted"
    refused = await one.decide(belief, "keep")
    assert refused.status_code == 409 and b"edit" in refused.body

    async def activate(conn: Any) -> None:
        record = BeliefRecord.from_row(belief)
        after = msgspec.structs.replace(record, status="active", version=2, decided_by="key:k")
        entry = AuditEntry(
            belief_id=record.id,
            agent_id=record.agent_id,
            action="kept",
            actor="key:k",
            at=NOW,
            before_status="pending",
            after_status="active",
            before_hash=None,
            after_hash="0" * 64,
            version=2,
            detail="",
        )
        await rows_of.apply(conn, [BeliefWrite(before=record, after=after, audit=entry)])

    with pytest.raises(Conflict, match="third-party"):
        await one.store.write(activate)
    assert (await one.beliefs.get_row(belief["id"]))["status"] == "pending"
    feedback = await recent_feedback(one.store, "ada")
    assert feedback.refused == [] and feedback.edited == []


@BOTH
async def test_two_replicas_deciding_one_version_get_one_200_and_one_412(replicas) -> None:
    one, two = replicas
    for round_ in range(3):
        belief = await one.propose(f"Round {round_}: always run the linters")
        first, second = await asyncio.gather(
            one.decide(belief, "keep"), two.decide(belief, "forget")
        )
        assert sorted([first.status_code, second.status_code]) == [200, 412]
    # The same Idempotency-Key on both: one decides, the other replays its answer.
    belief = await one.propose("Squash commits when merging")
    same = {"idempotency_key": "idem-1"}
    first, second = await asyncio.gather(
        one.decide(belief, "keep", **same), two.decide(belief, "keep", **same)
    )
    assert (
        (first.status_code, first.body)
        == (second.status_code, second.body)
        == (
            200,
            first.body,
        )
    )
    trail = await audit.trail(one.store, belief["id"])
    assert [r["action"] for r in trail] == ["proposed", "kept"]
    assert await audit.verify(two.store) == (True, 8, None)


@BOTH
async def test_the_same_lesson_proposed_on_two_replicas_at_once_lands_once(replicas) -> None:
    one, two = replicas
    proposal = [ProposalIn(op="add", belief="Use bun for the frontend", confidence=0.6)]
    by = ProposedBy(key_id="k")
    results = await asyncio.gather(
        *(r.beliefs.propose("ada", proposal, by, "key:k") for r in (one, two, one, two))
    )
    assert sum(result.accepted for (result,) in results) == 1
    assert {result.rejected_reason for (result,) in results if not result.accepted} == {
        next(f"duplicate_of:{r.belief_id}" for (r,) in results if r.accepted)
    }


@BOTH
async def test_the_gate_cache_follows_changes_made_on_another_replica(replicas, embedder) -> None:
    one, two = replicas
    belief = await one.propose("Use tabs for indentation")
    cache = await live.agent_beliefs(two.store, "ada", embedder.dim)
    assert [(b.id, b.status) for b in cache.live()] == [(belief["id"], "pending")]
    await one.decide(belief, "keep")
    added = await one.propose("Deploy only on Tuesdays")
    deadline = time.monotonic() + 1.0
    while True:
        cache = await live.agent_beliefs(two.store, "ada", embedder.dim)
        seen = {b.id: b.status for b in cache.live()}
        if seen == {belief["id"]: "active", added["id"]: "pending"}:
            break
        assert time.monotonic() < deadline, seen
        await asyncio.sleep(0.05)
    # And the gate on replica two now names replica one's belief as a duplicate.
    (result,) = await two.beliefs.propose(
        "ada",
        [ProposalIn(op="add", belief="Deploy only on Tuesdays.", confidence=0.5)],
        ProposedBy(key_id="k"),
        "key:k",
    )
    assert result.rejected_reason == f"duplicate_of:{added['id']}"


def _insert_raw(conn: psycopg.Connection, belief_id: str, text: str) -> None:
    conn.execute(
        "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
        " provenance, created_at, updated_at) VALUES (%s, 'ada', %s, %s, 'active', 0.6, 'add',"
        " 'clean', %s, %s)",
        (belief_id, text, text.lower(), NOW, NOW),
    )


@PG_ONLY
async def test_the_gate_cache_sees_a_change_committed_below_its_cursor(
    stores, database_url, embedder
) -> None:
    _, store = stores
    assert await live.agent_beliefs(store, "ada", embedder.dim) is not None
    with (
        psycopg.connect(database_url) as slow,
        psycopg.connect(database_url, autocommit=True) as fast,
    ):
        _insert_raw(slow, "b_slow", "Use spaces")  # takes the lower seq, commits later
        _insert_raw(fast, "b_fast", "Use yarn")
        cache = await live.agent_beliefs(store, "ada", embedder.dim)
        assert [b.id for b in cache.live()] == ["b_fast"]
        slow.commit()
    cache = await live.agent_beliefs(store, "ada", embedder.dim)
    assert [b.id for b in cache.live()] == ["b_fast", "b_slow"]


@BOTH
async def test_injection_counts_add_up_without_moving_the_version(replicas) -> None:
    one, two = replicas
    belief = await one.propose("Answer in metric units")
    for replica in (one, two):
        recorder = InjectionRecorder()
        recorder.record([belief["id"], belief["id"]], datetime(2030, 1, 3, tzinfo=UTC))
        assert await recorder.flush(replica.store) == 1
    row = await two.beliefs.get_row(belief["id"])
    assert (row["injection_count"], row["version"]) == (4, 1)
    assert row["last_injected_at"].startswith("2030-01-03")


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
async def test_propose_with_the_callers_verdicts_does_not_gate_again(replicas) -> None:
    # A job's check step gated these proposals already: submit hands its verdicts over, and
    # the stored reasons are exactly those, each once (the gate would find none here).
    one, _ = replicas
    verdict = GateResult(
        index=0, gate="needs_review", reasons=(Reason("contradicts", "bel_x"), Reason("unsourced"))
    )
    proposal = ProposalIn(op="add", belief="Use bun for the frontend", confidence=0.6)
    (result,) = await one.beliefs.propose(
        "ada", [proposal], ProposedBy(key_id="k"), "key:k", verdicts=[verdict]
    )
    row = dict(await one.beliefs.get_row(result.belief_id))
    assert json.loads(row["review_reasons"]) == ["contradicts:bel_x", "unsourced"]
    with pytest.raises(ValueError, match="1 verdicts for 2 proposals"):
        await one.beliefs.propose(
            "ada", [proposal, proposal], ProposedBy(key_id="k"), "key:k", verdicts=[verdict]
        )


@BOTH
async def test_after_pending_hooks_hear_committed_submissions_and_not_decisions(replicas) -> None:
    # The review planner wakes on these: what it reads from its own connection (here, the
    # other replica's store) as soon as it runs must hold the new pending belief, and a Keep
    # queues nothing for it.
    one, two = replicas
    seen: list[str] = []
    reads: list[asyncio.Task] = []

    def heard(agent_id: str) -> None:
        seen.append(agent_id)
        # Runs at the next await: inside the transaction, had the hook fired before its commit.
        reads.append(
            asyncio.ensure_future(
                two.store.fetchone(
                    "SELECT count(*) FROM beliefs WHERE agent_id = ? AND status = 'pending'",
                    (agent_id,),
                )
            )
        )

    one.beliefs.hooks.after_pending.append(heard)
    changed: list[str] = []
    one.beliefs.hooks.after_change.append(changed.append)
    row = await one.propose("Use bun for the frontend")
    assert seen == ["ada"]
    (count,) = await asyncio.gather(*reads)
    assert count[0] == 1, "the planner would read before the commit"
    assert (await two.beliefs.get_row(row["id"]))["status"] == "pending"
    await one.decide(row, "keep")
    assert seen == ["ada"], "a decision makes nothing pending"
    assert changed == ["ada", "ada"], "the caches still hear both changes"
    duplicate = ProposalIn(op="add", belief="Use bun for the frontend", confidence=0.7)
    (refused,) = await one.beliefs.propose("ada", [duplicate], ProposedBy(key_id="k"), "key:k")
    assert not refused.accepted
    assert len(seen) == 1, "a submission that made nothing pending is not heard"


@BOTH
async def test_a_keep_with_an_idempotency_key_is_two_trips_on_either_engine(
    replicas, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One trip reads (PostgreSQL: takes the key's advisory hold,) finds the stored answer and
    # reads the belief; one more writes it all (row, audit, counter and the answer).
    from credence.db.pgstore import PostgresConnection
    from credence.db.store import SqliteConnection

    one, _ = replicas
    row = await one.propose("Use bun for the frontend")
    trips: list[str] = []
    for connection in (SqliteConnection, PostgresConnection):
        for name in ("rows", "one", "run", "run_many", "batch", "rows_together"):
            method = getattr(connection, name)

            async def counted(self, *args, _method=method, _name=name, **kwargs):
                trips.append(_name)
                return await _method(self, *args, **kwargs)

            monkeypatch.setattr(connection, name, counted)
    answer = await one.decide(row, "keep", idempotency_key="retry-1")
    assert answer.status_code == 200
    assert trips == ["rows_together", "batch"], trips
    trips.clear()
    assert await one.decide(row, "keep", idempotency_key="retry-1") == answer
    assert trips == ["rows_together"], "a replay is one trip"


# Keys earlier releases stored, each for a text that now keys otherwise: (text stored, the
# key it was stored under, the same text written again, another text that shared that key).
OLDER_KEYS = [
    # Before 2026-12-05 "%" and "#" were dropped, so "5%" and "5" shared one key.
    (
        "Cap the discount at 5%",
        "cap the discount at 5",
        "Cap the discount at 5%",
        "Cap the discount at 5",
    ),
    # Before 2026-12-06 a plural owner's apostrophe was dropped: one sister and several.
    (
        "Pay for the sisters' lessons",
        "pay for the sisters lessons",
        "Pay for the sisters’ lessons",
        "Pay for the sister's lessons",
    ),
    # Before 2026-12-06 a number's minus was dropped: below zero and above it.
    (
        "Keep the freezer at -18°C",
        "keep the freezer at 18°c",
        "Keep the freezer at −18°C",
        "Keep the freezer at 18°C",
    ),
]


@BOTH
@pytest.mark.parametrize(("text", "older_key", "again", "other"), OLDER_KEYS)
async def test_a_row_stored_under_an_older_key_is_still_found_and_compared_anew(
    replicas, text: str, older_key: str, again: str, other: str
) -> None:
    # The database's exact check finds such a row by its older key, then compares the texts.
    one, _ = replicas
    stored = await one.propose(text)

    async def store_the_older_key(conn: Any) -> None:
        await conn.run("UPDATE beliefs SET content_key = ? WHERE id = ?", (older_key, stored["id"]))

    await one.store.write(store_the_older_key)
    submit = partial(_submit_passed, one)
    repeated = await submit(again)
    assert not repeated.accepted
    assert repeated.rejected_reason == f"duplicate_of:{stored['id']}"
    assert (await submit(other)).accepted


async def _submit_passed(service: Any, text: str):
    """Submit ``text`` as one proposal the gate passed, so only the database's check decides."""
    passed = GateResult(index=0, gate="safe", reasons=())
    proposal = ProposalIn(op="add", belief=text, confidence=0.6)
    by = ProposedBy(key_id="k")
    (result,) = await service.beliefs.propose("ada", [proposal], by, "key:k", verdicts=[passed])
    return result
