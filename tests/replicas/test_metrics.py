"""Two replicas: each reports its own requests and decisions, both the same database gauges."""

from __future__ import annotations

import secrets
import time

import httpx
from harness.metrics import Samples, delta, parse_samples, total, value

from tests.helpers import decide, make_agent, propose
from tests.replicas.harness import Replica, ReplicaSet

GAUGE_WAIT_S = 15.0  # database gauges are re-read at most every 5 s


def scrape(replica: Replica) -> Samples:
    """One scrape of the replica's /metrics, parsed."""
    answer = httpx.get(f"{replica.url}/metrics", timeout=10)
    assert answer.status_code == 200, answer.text
    return parse_samples(answer.text)


def test_each_replica_counts_its_own_work_and_both_read_the_same_database(
    replicas: ReplicaSet, admin_key: str
) -> None:
    first, second = replicas[0], replicas[1]
    agent = f"m{secrets.token_hex(4)}"
    before = [scrape(first), scrape(second)]
    with first.client(admin_key) as one, second.client(admin_key) as two:
        make_agent(one, agent)
        (result,) = propose(one, agent, {"op": "add", "belief": "Cite sources", "confidence": 0.8})
        belief = two.get(f"/api/v1/beliefs/{result['belief_id']}").json()
        assert decide(two, belief, "keep").status_code == 200
        for _ in range(2):
            assert two.get(f"/api/v1/agents/{agent}/memory/context").status_code == 200
    after = [scrape(first), scrape(second)]
    on_first, on_second = delta(after[0], before[0]), delta(after[1], before[1])

    assert total(on_first, "credence_proposals_total", agent=agent, outcome="submitted") == 1
    assert total(on_second, "credence_proposals_total", agent=agent) == 0
    assert total(on_second, "credence_decisions_total", agent=agent, action="keep") == 1
    assert total(on_first, "credence_decisions_total", agent=agent) == 0
    assert value(on_second, "credence_context_reads_total", query="without") == 2
    assert value(on_first, "credence_context_reads_total", query="without") == 0
    route = {"method": "POST", "route": "/api/v1/agents"}
    assert value(on_first, "credence_http_requests_total", status="201", **route) == 1
    assert value(on_second, "credence_http_requests_total", status="201", **route) == 0

    deadline = time.monotonic() + GAUGE_WAIT_S
    while True:
        seen = [
            value(scrape(r), "credence_beliefs", agent=agent, status="active") for r in replicas
        ]
        if seen == [1.0] * len(replicas) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert seen == [1.0] * len(replicas)
