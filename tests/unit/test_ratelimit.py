"""Token buckets per key and per pairing address; the 429 a live server answers with them."""

from __future__ import annotations

from pathlib import Path

import pytest

from credence.ratelimit import RateLimiter, TokenBuckets
from credence.settings import Settings
from tests.helpers import make_agent
from tests.livesrv import cli_key, running


class FakeMonotonic:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_bucket_allows_a_minutes_burst_then_refuses_with_the_wait() -> None:
    clock = FakeMonotonic()
    buckets = TokenBuckets(6, monotonic=clock)  # one token every 10 s
    assert [buckets.take("k") for _ in range(6)] == [0] * 6
    assert buckets.take("k") == 10
    clock.now += 4
    assert buckets.take("k") == 6  # 0.4 token refilled: 6 s until the next whole one
    clock.now += 6
    assert buckets.take("k") == 0
    assert buckets.take("k") == 10


def test_refused_requests_do_not_spend_tokens() -> None:
    clock = FakeMonotonic()
    buckets = TokenBuckets(60, monotonic=clock)  # one token a second
    for _ in range(60):
        assert buckets.take("k") == 0
    for _ in range(100):
        assert buckets.take("k") == 1
    clock.now += 1
    assert buckets.take("k") == 0


def test_refill_never_exceeds_a_minutes_allowance() -> None:
    clock = FakeMonotonic()
    buckets = TokenBuckets(3, monotonic=clock)
    buckets.take("k")
    clock.now += 3600
    assert [buckets.take("k") for _ in range(4)] == [0, 0, 0, 20]


def test_callers_have_their_own_buckets() -> None:
    buckets = TokenBuckets(1, monotonic=FakeMonotonic())
    assert buckets.take("a") == 0
    assert buckets.take("a") == 60
    assert buckets.take("b") == 0


def test_zero_switches_the_limit_off() -> None:
    buckets = TokenBuckets(0, monotonic=FakeMonotonic())
    assert not buckets.enabled
    assert all(buckets.take("k") == 0 for _ in range(10_000))
    assert len(buckets) == 0


def test_memory_is_bounded_and_idle_callers_go_first() -> None:
    clock = FakeMonotonic()
    buckets = TokenBuckets(60, monotonic=clock, max_tracked=100)  # one token a second
    for _ in range(30):
        buckets.take("busy")
    for number in range(150):  # each idle caller has refilled a second after its one request
        buckets.take(f"idle-{number}")
        clock.now += 0.025
    assert len(buckets) <= 100
    # "busy" (33.75 tokens left after 3.75 s of refill) was kept while the full buckets were dropped
    assert [buckets.take("busy") for _ in range(34)] == [0] * 33 + [1]


def test_limiter_routes_requests_to_the_right_bucket() -> None:
    limiter = RateLimiter(2, 1, monotonic=FakeMonotonic())
    assert limiter.check("GET", "/api/v1/beliefs", "key_a", "10.0.0.1") == 0
    assert all(limiter.check("GET", "/api/v1/beliefs", "key_a", "ip") == 0 for _ in range(50))
    assert limiter.check("POST", "/api/v1/beliefs/x/keep", "key_a", "ip") == 0
    assert limiter.check("PATCH", "/api/v1/agents/a", "key_a", "ip") == 0
    assert limiter.check("DELETE", "/api/v1/x", "key_a", "ip") == 30
    assert limiter.check("POST", "/api/v1/x", "key_b", "ip") == 0
    assert limiter.check("POST", "/api/v1/pair", None, "10.0.0.1") == 0
    assert limiter.check("POST", "/api/v1/pair/", None, "10.0.0.1") == 60
    assert limiter.check("POST", "/api/v1/pair", None, "10.0.0.2") == 0


@pytest.fixture
def limited(tmp_path: Path):
    """A live server allowing 3 writes a minute per key and 2 pairing attempts per address."""
    settings = Settings(
        data_dir=tmp_path / "data",
        scheduler=False,
        rate_limit_per_minute=3,
        pair_rate_limit_per_minute=2,
    )
    with running(settings) as live:
        yield live


def test_live_burst_answers_429_with_retry_after_and_a_problem(limited) -> None:
    admin_key = cli_key(limited.settings, "admin")
    other_key = cli_key(limited.settings, "admin")
    with limited.client(admin_key) as admin, limited.client(other_key) as other:
        make_agent(admin, "coder")
        body = {"session_id": "s", "summary": "did a thing"}
        statuses = [
            admin.post("/api/v1/agents/coder/episodes", json=body).status_code for _ in range(2)
        ]
        assert statuses == [201, 201]
        refused = admin.post("/api/v1/agents/coder/episodes", json=body)
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["Retry-After"]) <= 20
        assert refused.json()["status_code"] == 429
        assert "rate limit" in refused.json()["detail"]
        # reads are never limited, and another key has its own allowance
        assert admin.get("/api/v1/agents/coder/episodes").status_code == 200
        assert other.post("/api/v1/agents/coder/episodes", json=body).status_code == 201
    stored = limited.run(limited.services.store.fetchone("SELECT COUNT(*) AS n FROM episodes"))
    assert stored["n"] == 3  # the refused write never ran


def test_live_pairing_attempts_are_limited_per_address(limited) -> None:
    with limited.client() as anonymous:
        answers = [
            anonymous.post("/api/v1/pair", json={"code": "not-a-real-code-xx"}) for _ in range(3)
        ]
    assert [a.status_code for a in answers] == [410, 410, 429]
    # The wait left in the window: 30 s, less however long the three requests took.
    assert 0 < int(answers[-1].headers["Retry-After"]) <= 30
