"""The test push's pending count is the caller's own, never the installation's."""

from __future__ import annotations

import pytest

from tests.helpers import make_agent, pending_belief
from tests.livesrv import cli_key
from tests.notify.rows import vapid_public_key

pytestmark = pytest.mark.loopback_push


def test_the_count_covers_only_the_keys_agents(server, admin, fake_push) -> None:
    fake_push.expected_server_key = vapid_public_key(server.settings)
    make_agent(admin, "alpha")
    make_agent(admin, "beta")
    pending_belief(admin, "alpha", text="Ask before deleting files")
    for text in ("PDFs over 10MB exhaust the ingester", "Retry uploads at most twice"):
        pending_belief(admin, "beta", text=text)

    counts = {}
    for name, agents in (("alpha", ("alpha",)), ("every", ())):
        key = cli_key(server.settings, "reviewer", *agents)
        with server.client(key) as reviewer:
            subscribed = reviewer.post(
                "/api/v1/push/subscriptions", json=fake_push.subscription(name)
            )
            assert subscribed.status_code in (200, 201), subscribed.text
            sent = reviewer.post("/api/v1/push/test")
            assert sent.status_code == 200, sent.text
        [delivery] = fake_push.received(name)
        counts[name] = delivery.payload["pending_count"]
    assert counts == {"alpha": 1, "every": 3}
