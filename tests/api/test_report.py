"""GET /memory/report: the figures of a seeded, back-dated review history, on either engine."""

from __future__ import annotations

import time
from datetime import timedelta

import httpx
import msgspec
import pytest

from credence.access.principal import Principal
from credence.clock import fixed_clock
from credence.memory.lifecycle.beliefs import BeliefHooks, BeliefService
from credence.memory.lifecycle.decisions import Decision, etag
from credence.models import ProposalIn, ProposedBy
from tests.helpers import make_agent
from tests.livesrv import LiveServer, cli_key

HOUR = 3600.0
ADA = Principal(key_id="key_ada", scope="admin", agents=None, label="ada")
BOB = Principal(key_id="key_bob", scope="admin", agents=None, label="bob")


class History:
    """Proposes and decides on the server's store at chosen moments before now."""

    def __init__(self, server: LiveServer, agent_id: str) -> None:
        self.server = server
        self.agent_id = agent_id
        self.now = server.services.clock()

    def _service(self, ago: timedelta) -> BeliefService:
        services = self.server.services
        clock = fixed_clock(self.now - ago)
        return BeliefService(services.store, services.embedder, clock, BeliefHooks())

    def propose(self, ago: timedelta, text: str, confidence: float = 0.7, **extra) -> str:
        """A pending belief proposed ``ago``; returns its id."""
        proposal = ProposalIn(op="add", belief=text, confidence=confidence, **extra)
        service = self._service(ago)
        (result,) = self.server.run(
            service.propose(self.agent_id, [proposal], ProposedBy(key_id="key_x"), "key:key_x")
        )
        assert result.accepted, result
        return result.belief_id

    def decide(self, ago: timedelta, belief_id: str, action: str, who: Principal, **payload):
        """Apply a decision as ``who`` at ``ago``."""
        decision = msgspec.convert({"type": action, **payload}, Decision)
        belief = self.server.run(
            self._service(ago).decide(belief_id, decision, who, if_match=etag(1))
        )
        assert belief.status != "pending", belief


@pytest.fixture
def admin_client(server: LiveServer) -> httpx.Client:
    with server.client(cli_key(server.settings, "admin")) as client:
        yield client


def test_the_report_gives_the_figures_of_a_seeded_history(
    server: LiveServer, admin_client: httpx.Client
) -> None:
    make_agent(admin_client, "coder")
    history = History(server, "coder")
    day3, day1 = timedelta(days=3), timedelta(days=1)
    old = history.propose(timedelta(days=40), "Old habit about tabs", confidence=0.5)
    history.decide(timedelta(days=40), old, "keep", ADA)
    kept = history.propose(day3, "Run the linter before each commit")
    forgotten = history.propose(day3, "Prefer long pull requests")
    edited = history.propose(day3, "Write the changelog entry last")
    history.propose(day3, "Tag releases by date", review_reasons=["near_duplicate_of:x"])
    served_never = history.propose(day3, "Pin the toolchain version")
    history.propose(day1, "Skip the linter", review_reasons=["contradicts:x"])
    history.decide(day3 - timedelta(hours=1), kept, "keep", ADA)
    history.decide(day3 - timedelta(hours=2), forgotten, "forget", BOB)
    history.decide(day3 - timedelta(hours=24), edited, "edit", ADA, content="Changelog last")
    history.decide(day3 - timedelta(hours=3), served_never, "keep", BOB)
    # The agent reads its memory once: every kept belief it is served is no longer unused.
    context = admin_client.get("/api/v1/agents/coder/memory/context", params={"limit": 1})
    served = {note["belief_id"] for note in context.json()["memory_notes"]}
    assert len(served) == 1
    deadline = time.monotonic() + 10
    while True:  # injections are recorded in the background, within a second
        report = admin_client.get("/api/v1/agents/coder/memory/report", params={"days": 30})
        assert report.status_code == 200, report.text
        body = report.json()
        if body["unused_count"] == 3 or time.monotonic() > deadline:
            break
        time.sleep(0.2)

    assert body["days"] == 30 and body["threshold"] == 0.3
    assert body["totals"] == {"kept": 2, "edited": 1, "forgotten": 1, "superseded": 0, "pending": 2}
    assert len(body["per_day"]) == 31
    by_date = {day["date"]: day for day in body["per_day"]}
    three_days_ago = str((history.now - day3).date())
    assert by_date[three_days_ago] == {
        "date": three_days_ago,
        "kept": 2,
        "edited": 1,
        "forgotten": 1,
        "superseded": 0,
        "pending": 1,
    }
    assert sum(day["pending"] for day in body["per_day"]) == 2
    assert body["flagged"] == {
        "proposals": 6,
        "duplicate": 1,
        "contradiction": 1,
        "duplicate_share": round(1 / 6, 4),
        "contradiction_share": round(1 / 6, 4),
    }
    assert body["time_to_decision"] == {"decisions": 4, "median_s": 2 * HOUR, "p90_s": 24 * HOUR}
    assert body["reviewers"] == [
        {"reviewer": ADA.actor, "decisions": 2},
        {"reviewer": BOB.actor, "decisions": 2},
    ]
    assert body["unused_count"] == 3
    unused = {item["belief_id"] for item in body["unused"]}
    assert unused == {old, kept, edited, served_never} - served
    assert body["fading_count"] == 1
    (fading,) = body["fading"]
    assert fading["belief_id"] == old and fading["content"] == "Old habit about tabs"
    assert fading["decayed_confidence"] == pytest.approx(0.5 * 2.718281828 ** (-0.02 * 40), 1e-3)


def test_the_export_carries_the_report(server: LiveServer, admin_client: httpx.Client) -> None:
    make_agent(admin_client, "coder")
    History(server, "coder").propose(timedelta(hours=1), "Cite sources")
    exported = admin_client.get("/api/v1/agents/coder/memory/export").json()
    assert exported["report"]["totals"]["pending"] == 1
    assert exported["report"]["days"] == 30


def test_the_report_refuses_what_it_cannot_answer(
    server: LiveServer, admin_client: httpx.Client
) -> None:
    make_agent(admin_client, "coder")
    url = "/api/v1/agents/{}/memory/report"
    assert admin_client.get(url.format("ghost")).status_code == 404
    for params in ({"days": 0}, {"days": 366}, {"threshold": 2}, {"days": "x"}):
        answer = admin_client.get(url.format("coder"), params=params)
        assert answer.status_code == 400, params
    make_agent(admin_client, "someone-else")
    other = cli_key(server.settings, "reviewer", "someone-else")
    with server.client(other) as stranger:
        assert stranger.get(url.format("coder")).status_code == 404
