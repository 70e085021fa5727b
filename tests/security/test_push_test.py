"""POST /push/test shows no channel URL beyond scheme and host, tests channels for admins only,
and is throttled per key."""

from __future__ import annotations

import pytest
from harness.fakes.webhook import Webhook

from credence.api.push import TEST_SENDS_PER_MINUTE
from credence.notify.channels import scheme_and_host
from tests.helpers import make_agent
from tests.livesrv import cli_key

TEST = "/api/v1/push/test"
CHANNELS = "/api/v1/push/channels"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("ntfy://ntfy.example.org/every-agents-topic", "ntfy://ntfy.example.org"),
        ("ntfy://every-agents-topic", "ntfy://…"),
        ("json://hooks.example.com:8443/secret/path?token=x", "json://hooks.example.com"),
        ("mailto://ops:hunter2@mail.example.com", "mailto://mail.example.com"),
        ("tgram://1...n/", "tgram://…"),
    ],
)
def test_a_channel_shows_scheme_and_host_only(url: str, shown: str) -> None:
    assert scheme_and_host(url) == shown


def test_listed_channels_hide_topics_and_paths(server, admin) -> None:
    created = admin.post(CHANNELS, json={"url": "ntfy://ntfy.example.org/every-agents-topic"})
    assert created.status_code == 201, created.text
    [listed] = admin.get(CHANNELS).json()["items"]
    assert listed["url"] == "ntfy://ntfy.example.org"
    assert admin.delete(f"{CHANNELS}/{listed['id']}").status_code == 204  # never sent to


def test_only_admins_test_channels_and_never_see_their_paths(server, admin) -> None:
    make_agent(admin, "coder")
    with Webhook() as hook:
        assert admin.post(CHANNELS, json={"url": hook.url}).status_code == 201
        with server.client(cli_key(server.settings, "reviewer", "coder")) as reviewer:
            mine = reviewer.post(TEST)
        assert mine.status_code == 200, mine.text
        assert mine.json()["channels"] == [] and hook.received() == []
        everything = admin.post(TEST)
        assert everything.status_code == 200, everything.text
        [channel] = everything.json()["channels"]
        assert channel["ok"] and channel["url"] == "json://127.0.0.1"
        assert "/hook" not in everything.text
        assert len(hook.wait_for(1)) == 1


def test_test_sends_are_throttled_per_key(server, admin) -> None:
    make_agent(admin, "coder")
    with server.client(cli_key(server.settings, "reviewer", "coder")) as reviewer:
        statuses = [reviewer.post(TEST).status_code for _ in range(TEST_SENDS_PER_MINUTE + 1)]
        refused = reviewer.post(TEST)
    assert statuses == [200] * TEST_SENDS_PER_MINUTE + [429]
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert admin.post(TEST).status_code == 200  # another key's budget is its own
