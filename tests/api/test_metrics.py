"""GET /metrics: off by default, loopback or token only, and figures that follow the service."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import httpx
import msgspec
import pytest
from harness.metrics import Samples, delta, parse_samples, total, value

from credence.observe import metrics
from credence.settings import Settings
from tests.helpers import decide, make_agent, propose
from tests.livesrv import LiveServer, cli_key, running

PREFIX = "/api/v1/beliefs/{belief_id}"


@pytest.fixture
def metered(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveServer]:
    """A server with metrics on, whose database gauges are read afresh at every scrape."""
    monkeypatch.setattr(metrics.DATABASE, "refresh_s", 0.0)
    with running(msgspec.structs.replace(settings, metrics=True)) as live:
        yield live


def scrape(server: LiveServer, **headers: str) -> Samples:
    """One scrape of /metrics, parsed."""
    answer = httpx.get(f"{server.url}/metrics", headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse_samples(answer.text)


def test_metrics_follow_a_scripted_sequence_of_requests_and_decisions(
    metered: LiveServer,
) -> None:
    agent = f"m{secrets.token_hex(4)}"
    with metered.client(cli_key(metered.settings, "admin")) as admin:
        make_agent(admin, agent)
        before = scrape(metered)
        texts = ["Run the linter before each commit", "Prefer small pull requests"]
        texts.append("Write the changelog entry last")
        adds = ({"op": "add", "belief": t, "confidence": 0.7} for t in texts)
        results = propose(admin, agent, *adds)
        assert all(r["accepted"] for r in results)
        (duplicate,) = propose(
            admin, agent, {"op": "add", "belief": texts[0].upper(), "confidence": 0.7}
        )
        assert not duplicate["accepted"]
        first, second, third = (
            admin.get(f"/api/v1/beliefs/{r['belief_id']}").json() for r in results
        )
        kept = decide(admin, first, "keep")
        assert kept.status_code == 200
        assert decide(admin, second, "forget", {"reason": "not ours"}).status_code == 200
        assert decide(admin, third, "edit", {"content": "Changelog entry last"}).status_code == 200
        assert decide(admin, kept.json(), "reopen").status_code == 200
        assert decide(admin, kept.json(), "keep").status_code == 412  # stale: not counted
        context = f"/api/v1/agents/{agent}/memory/context"
        for params in ({}, {"role": "x"}, {"query": "linter"}):
            assert admin.get(context, params=params).status_code == 200
    after = scrape(metered)
    changed = delta(after, before)

    assert total(changed, "credence_proposals_total", agent=agent, outcome="submitted") == 3
    assert (
        value(
            changed,
            "credence_proposals_total",
            agent=agent,
            verdict="duplicate",
            outcome="rejected",
        )
        == 1
    )
    for action in ("keep", "forget", "edit", "reopen"):
        assert total(changed, "credence_decisions_total", agent=agent, action=action) == 1, action
    assert value(changed, "credence_context_reads_total", query="without") == 2
    assert value(changed, "credence_context_reads_total", query="with") == 1
    assert value(changed, "credence_context_read_duration_seconds_count", query="with") == 1
    keep_route = {"method": "POST", "route": f"{PREFIX}/keep"}
    assert value(changed, "credence_http_requests_total", status="200", **keep_route) == 1
    assert value(changed, "credence_http_requests_total", status="412", **keep_route) == 1
    assert value(changed, "credence_http_request_duration_seconds_count", **keep_route) == 2
    # Database-wide gauges are exact: the reopened belief waits, one is forgotten, one active.
    for status, count in (("pending", 1), ("forgotten", 1), ("active", 1)):
        assert value(after, "credence_beliefs", agent=agent, status=status) == count, status
    assert value(after, "credence_pending_oldest_age_seconds", agent=agent) >= 0
    assert value(after, "credence_pending_age_seconds_count") == 1
    assert value(after, "credence_pending_age_seconds_bucket", le="+Inf") == 1
    assert value(after, "credence_outbox_depth", queue="push") == 0
    pool_max = 1 if metered.services.store.dialect == "sqlite" else 10
    assert value(after, "credence_db_pool_connections", state="max") == pool_max
    assert value(after, "process_cpu_seconds_total") > 0


def test_database_gauges_are_read_at_most_every_few_seconds(settings: Settings) -> None:
    with running(msgspec.structs.replace(settings, metrics=True)) as live:
        reads = metrics.DATABASE.reads
        for _ in range(3):
            scrape(live)
        assert metrics.DATABASE.reads == reads + 1


def test_metrics_are_off_by_default(server: LiveServer) -> None:
    answer = httpx.get(f"{server.url}/metrics", timeout=10)
    assert answer.status_code == 404 and "CREDENCE_METRICS=on" in answer.text


def test_a_metrics_token_is_required_when_set(settings: Settings) -> None:
    token = secrets.token_urlsafe(16)
    configured = msgspec.structs.replace(settings, metrics=True, metrics_token=token)
    with running(configured) as live:
        url = f"{live.url}/metrics"
        assert httpx.get(url, timeout=10).status_code == 401
        wrong = httpx.get(url, headers={"Authorization": "Bearer nope"}, timeout=10)
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        right = httpx.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert right.status_code == 200 and "credence_http_requests_total" in right.text


def test_without_a_token_only_loopback_clients_may_scrape(settings: Settings) -> None:
    behind_proxy = msgspec.structs.replace(settings, metrics=True, trusted_proxies=("127.0.0.1",))
    with running(behind_proxy) as live:
        url = f"{live.url}/metrics"
        assert httpx.get(url, timeout=10).status_code == 200
        remote = httpx.get(url, headers={"X-Forwarded-For": "203.0.113.7"}, timeout=10)
        assert remote.status_code == 403
