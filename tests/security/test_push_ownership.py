"""A push endpoint belongs to the key that registered it: no other key can take it over."""

from __future__ import annotations

import sqlite3
from contextlib import closing

from harness.fakes.push import FakePushService

from credence.settings import Settings
from tests.helpers import make_agent
from tests.livesrv import cli_key, running

SUBS = "/api/v1/push/subscriptions"


def test_another_key_upserting_a_registered_endpoint_gets_409(tmp_path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data", scheduler=False, push_allowed_hosts=("127.0.0.1",)
    )
    with (
        FakePushService() as fake,
        running(settings) as live,
        live.client(cli_key(settings, "admin")) as admin,
    ):
        make_agent(admin, "coder")
        owner = live.client(cli_key(settings, "reviewer", "coder"))
        thief = live.client(cli_key(settings, "reviewer", "coder"))
        victim = fake.subscription("victim")
        first = owner.post(SUBS, json=victim)
        assert first.status_code == 201, first.text

        # The attacker knows the endpoint and sends its own keys for it.
        attacker_keys = fake.subscription("attacker")["keys"]
        for intruder in (thief, admin):
            taken = intruder.post(SUBS, json={**victim, "keys": attacker_keys})
            assert taken.status_code == 409, taken.text
            assert "another key" in taken.json()["detail"]
            assert intruder.get(SUBS).json()["items"] == []

        again = owner.post(SUBS, json=victim)
        assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
        owner.close()
        thief.close()
    with closing(sqlite3.connect(settings.database_path)) as conn:
        rows = conn.execute("SELECT key_id, p256dh, auth FROM push_subscriptions").fetchall()
    assert rows == [(first.json()["key_id"], victim["keys"]["p256dh"], victim["keys"]["auth"])]
