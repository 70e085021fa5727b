"""A push action token for a belief that would change another one cannot decide: it only opens."""

from __future__ import annotations

import pytest

from tests.livesrv import running
from tests.notify.test_push_e2e import (
    _close_clients,  # noqa: F401  (autouse here too: it closes the clients _setup opens)
    _kept,
    _propose,
    _received,
    _setup,
    _subscribe,
    propose_changes,
)

pytestmark = pytest.mark.loopback_push


def test_a_lock_screen_tap_never_retires_weakens_or_forgets_an_active_belief(settings, fake_push):
    with running(settings) as server:
        admin, reviewer = _setup(server, fake_push)
        yarn = _kept(admin, "Use yarn for the frontend")
        _subscribe(reviewer, fake_push, "phone")
        made = propose_changes(admin, yarn)
        [plain] = _propose(admin, "Lint before you push")
        tokens = {
            d.payload["belief_id"]: d.payload["token"] for d in _received(fake_push, 6, "phone")
        }
        with server.client() as anonymous:
            for name, belief_id in made.items():
                for action in ("keep", "forget"):
                    body = {"token": tokens[belief_id], "action": action}
                    refused = anonymous.post("/api/v1/push/actions", json=body)
                    assert refused.status_code == 409, (name, action, refused.text)
                    assert refused.json()["detail"].startswith("open the card to decide")
                belief = admin.get(f"/api/v1/beliefs/{belief_id}").json()
                assert belief["status"] == "pending" and belief["version"] == 1, name
                trail = admin.get(f"/api/v1/beliefs/{belief_id}/audit").json()["items"]
                assert [row["action"] for row in trail] == ["proposed"], name
            target = admin.get(f"/api/v1/beliefs/{yarn}").json()
            assert target["status"] == "active" and target["version"] == 2
            # A plain add is still decided by its button.
            kept = anonymous.post(
                "/api/v1/push/actions", json={"token": tokens[plain], "action": "keep"}
            )
            assert kept.status_code == 200 and kept.json()["status"] == "active"
        # The same decisions on the card (the reviewer's key) still work.
        card = reviewer.post(
            f"/api/v1/beliefs/{made['contradicts']}/keep",
            json={"retire": [yarn]},
            headers={"If-Match": '"1"'},
        )
        assert card.status_code == 200, card.text
        assert admin.get(f"/api/v1/beliefs/{yarn}").json()["status"] == "superseded"
