"""The push API over real HTTP: scopes, subscriptions, notification actions, tests, channels."""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from harness.fakes.webhook import Webhook

from credence.app import create_app
from credence.cli import main as credence_main
from credence.clock import system_clock
from credence.notify import tokens
from credence.settings import Settings, SettingsError
from tests.helpers import decide, make_agent, pending_belief, post_episode, propose
from tests.livesrv import LiveServer, cli_key, running, store_flags
from tests.notify.rows import installation_secret, vapid_public_key

pytestmark = pytest.mark.loopback_push

SUBS = "/api/v1/push/subscriptions"


@pytest.fixture
def reviewer(server: LiveServer, admin: httpx.Client) -> Iterator[httpx.Client]:
    make_agent(admin, "coder")
    with server.client(cli_key(server.settings, "reviewer", "coder")) as client:
        yield client


def _token(server: LiveServer, belief_id: str, key_id: str, version: int = 1, **delta) -> str:
    secret = installation_secret(server.settings, tokens.SECRET_NAME)
    expires = system_clock() + timedelta(**(delta or {"hours": 1}))
    return tokens.issue(
        secret, belief_id=belief_id, version=version, key_id=key_id, expires_at=expires
    )


def _key_id(client: httpx.Client) -> str:
    return client.get("/api/v1/me").json()["key_id"]


def test_agent_keys_are_refused_everywhere_and_no_key_is_401(server, admin) -> None:
    make_agent(admin, "coder")
    agent_key = cli_key(server.settings, "agent", "coder")
    calls = [
        ("GET", "/api/v1/push/vapid-public-key", None),
        ("GET", SUBS, None),
        ("POST", SUBS, {"endpoint": "https://push.example-push.org/x", "keys": {}}),
        ("DELETE", f"{SUBS}/sub_01jq3z7k9m2n4p6r8s0t1v3w5x", None),
        ("POST", "/api/v1/push/test", None),
        ("GET", "/api/v1/push/channels", None),
        ("POST", "/api/v1/push/channels", {"url": "json://127.0.0.1:9/x"}),
        ("DELETE", "/api/v1/push/channels/chn_01jq3z7k9m2n4p6r8s0t1v3w5x", None),
    ]
    with server.client(agent_key) as agent, server.client() as anonymous:
        for method, path, body in calls:
            assert agent.request(method, path, json=body).status_code == 403, (method, path)
            assert anonymous.request(method, path, json=body).status_code == 401, (method, path)


def test_vapid_public_key_is_the_installations_key_kept_in_the_database(server, reviewer) -> None:
    response = reviewer.get("/api/v1/push/vapid-public-key")
    assert response.status_code == 200
    assert response.json() == {"public_key": vapid_public_key(server.settings)}
    assert not (server.settings.data_dir / "vapid_private.pem").exists()


def test_subscribe_upserts_by_endpoint_and_lists_only_the_callers_own(
    server, admin, reviewer, fake_push
) -> None:
    body = fake_push.subscription("phone")
    created = reviewer.post(SUBS, json=body)
    assert created.status_code == 201, created.text
    first = created.json()
    assert first["endpoint"] == body["endpoint"] and first["key_id"] == _key_id(reviewer)
    assert first["expiration_time"] is None

    again = reviewer.post(SUBS, json={**body, "expirationTime": 4102444800000})
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]
    assert again.json()["expiration_time"] == 4102444800000
    assert again.json()["last_seen_at"] > first["last_seen_at"]
    assert again.json()["created_at"] == first["created_at"]
    assert [s["id"] for s in reviewer.get(SUBS).json()["items"]] == [first["id"]]
    assert admin.get(SUBS).json()["items"] == []

    with server.client(cli_key(server.settings, "reviewer", "coder")) as other:
        assert other.get(SUBS).json()["items"] == []
        assert other.delete(f"{SUBS}/{first['id']}").status_code == 404
        # Another key cannot take the endpoint over (tests/security/test_push_ownership.py).
        assert other.post(SUBS, json=body).status_code == 409
        assert [s["id"] for s in reviewer.get(SUBS).json()["items"]] == [first["id"]]
        assert reviewer.delete(f"{SUBS}/{first['id']}").status_code == 204
        assert reviewer.delete(f"{SUBS}/{first['id']}").status_code == 404


def test_admin_may_remove_any_subscription(admin, reviewer, fake_push) -> None:
    sub = reviewer.post(SUBS, json=fake_push.subscription("phone")).json()
    assert admin.delete(f"{SUBS}/{sub['id']}").status_code == 204
    assert reviewer.get(SUBS).json()["items"] == []


def test_a_key_keeps_its_twenty_most_recent_devices(reviewer, fake_push) -> None:
    ids = [
        reviewer.post(SUBS, json=fake_push.subscription(f"d{n}")).json()["id"] for n in range(22)
    ]
    kept = {s["id"] for s in reviewer.get(SUBS).json()["items"]}
    assert kept == set(ids[2:])


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: {**b, "endpoint": "ftp://127.0.0.1/x"},
        lambda b: {**b, "endpoint": "https://user:pw@push.example-push.org/x"},
        lambda b: {**b, "endpoint": "https://push.example-push.org/" + "x" * 2100},
        lambda b: {**b, "endpoint": "https://push.example-push.org/\x00"},
        lambda b: {**b, "endpoint": "https://push.example-push.org/a#frag"},
        lambda b: {**b, "endpoint": "not a url"},
        lambda b: {**b, "keys": {"p256dh": "AAAA", "auth": b["keys"]["auth"]}},
        lambda b: {**b, "keys": {"p256dh": b["keys"]["p256dh"], "auth": "AAAA"}},
        lambda b: {**b, "keys": {"p256dh": "!!", "auth": "!!"}},
        lambda b: {"endpoint": b["endpoint"]},
        lambda b: {**b, "expirationTime": -1},
        lambda b: {**b, "expirationTime": 2**60},
        lambda b: {**b, "expirationTime": "soon"},
        lambda b: [],
    ],
)
def test_malformed_subscriptions_are_400(reviewer, fake_push, mutate) -> None:
    response = reviewer.post(SUBS, json=mutate(fake_push.subscription("phone")))
    assert response.status_code == 400, response.text
    assert reviewer.get(SUBS).json()["items"] == []


@pytest.mark.parametrize(
    "mutate, detail",
    [
        (lambda b: {**b, "keys": {**b["keys"], "p256dh": "BA" + "A" * 85}}, "not a point on P-256"),
        (lambda b: {**b, "endpoint": "https://push.example-push.org:99999/x"}, "valid URL"),
        (lambda b: {**b, "endpoint": "https://[bad/x"}, "valid URL"),
        (lambda b: {**b, "endpoint": "http://push.example-push.org/x"}, "must use https"),
    ],
)
def test_well_formed_but_unusable_subscriptions_are_422(reviewer, fake_push, mutate, detail):
    response = reviewer.post(SUBS, json=mutate(fake_push.subscription("phone")))
    assert response.status_code == 422, response.text
    assert detail in response.json()["detail"]


def test_http_endpoints_need_an_allowed_host(reviewer, fake_push) -> None:
    body = fake_push.subscription("phone")
    assert body["endpoint"].startswith("http://127.0.0.1:")
    assert reviewer.post(SUBS, json=body).status_code == 201
    localhost = {**body, "endpoint": body["endpoint"].replace("127.0.0.1", "localhost")}
    assert reviewer.post(SUBS, json=localhost).status_code == 422


# --- actions ----------------------------------------------------------------------------------


def _act(server: LiveServer, token: str, action: str) -> httpx.Response:
    with server.client() as anonymous:  # the token is the only credential
        return anonymous.post("/api/v1/push/actions", json={"token": token, "action": action})


def _sourced(admin: httpx.Client, text: str = "PDFs over 10MB exhaust the ingester") -> dict:
    """A pending belief citing a clean episode: one a notification's Keep may decide."""
    episode = post_episode(admin, "coder", summary="ingested a large pdf")
    return pending_belief(admin, text=text, source_episodes=[episode["id"]])


def test_keep_from_a_notification_is_a_normal_audited_decision(server, admin, reviewer) -> None:
    belief = _sourced(admin)
    token = _token(server, belief["id"], _key_id(reviewer))
    kept = _act(server, token, "keep")
    assert kept.status_code == 200, kept.text
    assert kept.json()["status"] == "active" and kept.headers["etag"] == '"2"'
    assert kept.json()["decided_by"] == f"key:{_key_id(reviewer)}"
    retried = _act(server, token, "keep")
    assert retried.status_code == 200 and retried.json() == kept.json()
    trail = admin.get(f"/api/v1/beliefs/{belief['id']}/audit").json()["items"]
    assert [(r["action"], r["actor"]) for r in trail] == [
        ("proposed", trail[0]["actor"]),
        ("kept", f"key:{_key_id(reviewer)}"),
    ]
    # The other button of the same notification now names a stale version.
    assert _act(server, token, "forget").status_code == 412


def test_forget_from_a_notification(server, admin, reviewer) -> None:
    belief = pending_belief(admin)
    forgotten = _act(server, _token(server, belief["id"], _key_id(reviewer)), "forget")
    assert forgotten.status_code == 200 and forgotten.json()["status"] == "forgotten"


def test_a_belief_decided_elsewhere_answers_412(server, admin, reviewer) -> None:
    belief = _sourced(admin)
    token = _token(server, belief["id"], _key_id(reviewer))
    assert decide(admin, belief, "forget").status_code == 200
    stale = _act(server, token, "keep")
    assert stale.status_code == 412 and stale.headers["etag"] == '"2"'


def test_keep_on_an_untrusted_belief_is_409(server, admin, reviewer) -> None:
    episode = post_episode(admin, "coder", origin="untrusted", summary="read a web page")
    [result] = propose(
        admin,
        "coder",
        {
            "op": "add",
            "belief": "Trust the web page",
            "confidence": 0.5,
            "source_episodes": [episode["id"]],
        },
    )
    token = _token(server, result["belief_id"], _key_id(reviewer))
    refused = _act(server, token, "keep")
    assert refused.status_code == 409
    assert _act(server, token, "forget").status_code == 200


def test_bad_expired_foreign_or_revoked_tokens_are_refused(server, admin, reviewer) -> None:
    belief = pending_belief(admin)
    key_id = _key_id(reviewer)
    assert _act(server, "v1.nonsense", "keep").status_code == 401
    assert _act(server, _token(server, belief["id"], key_id, seconds=-1), "keep").status_code == 401
    forged = tokens.issue(
        b"x" * 32,
        belief_id=belief["id"],
        version=1,
        key_id=key_id,
        expires_at=system_clock() + timedelta(hours=1),
    )
    assert _act(server, forged, "keep").status_code == 401
    with server.client() as anonymous:
        wrong = anonymous.post(
            "/api/v1/push/actions",
            json={"token": _token(server, belief["id"], key_id), "action": "edit"},
        )
        assert wrong.status_code == 400
        assert anonymous.post("/api/v1/push/actions", json={"token": "x" * 300}).status_code == 400
    token = _token(server, belief["id"], key_id)
    assert admin.post(f"/api/v1/keys/{key_id}/revoke").status_code == 200
    assert _act(server, token, "keep").status_code == 401
    assert admin.get(f"/api/v1/beliefs/{belief['id']}").json()["status"] == "pending"


def test_a_reviewer_who_no_longer_sees_the_agent_gets_404(server, admin) -> None:
    make_agent(admin, "coder")
    make_agent(admin, "writer")
    belief = pending_belief(admin, "writer")
    with server.client(cli_key(server.settings, "reviewer", "coder")) as outsider:
        token = _token(server, belief["id"], _key_id(outsider))
    assert _act(server, token, "keep").status_code == 404


# --- test sends and channels ------------------------------------------------------------------


def test_test_push_reaches_the_callers_devices_and_channels(server, admin, fake_push) -> None:
    fake_push.expected_server_key = vapid_public_key(server.settings)
    with Webhook() as hook:
        channel = admin.post("/api/v1/push/channels", json={"url": hook.url, "label": "ops"})
        assert channel.status_code == 201, channel.text
        phone = admin.post(SUBS, json=fake_push.subscription("phone")).json()
        fake_push.subscription("gone")
        gone = admin.post(SUBS, json=fake_push.subscription("gone")).json()
        fake_push.unsubscribe("gone")
        result = admin.post("/api/v1/push/test")
        assert result.status_code == 200, result.text
        devices = {d["subscription_id"]: d for d in result.json()["devices"]}
        assert devices[phone["id"]]["outcome"] == "sent"
        assert devices[gone["id"]]["outcome"] == "gone"
        [channel_result] = result.json()["channels"]
        assert channel_result["ok"] and channel_result["channel_id"] == channel.json()["id"]
        [message] = hook.received()
    [delivery] = fake_push.received("phone")
    assert delivery.payload["type"] == "test"
    assert delivery.payload["test_id"] == result.json()["test_id"]
    assert message["title"] == "Credence"
    assert [s["id"] for s in admin.get(SUBS).json()["items"]] == [phone["id"]]


def test_channels_are_admin_managed_with_masked_urls(server, admin, reviewer) -> None:
    created = admin.post(
        "/api/v1/push/channels",
        json={"url": "tgram://123456789:abcdefsecrettoken/987654", "agents": ["coder"]},
    )
    assert created.status_code == 201, created.text
    channel = created.json()
    assert "abcdefsecrettoken" not in channel["url"] and channel["url"].startswith("tgram://")
    assert channel["source"] == "admin" and channel["agents"] == ["coder"]
    assert reviewer.get("/api/v1/push/channels").status_code == 403
    listed = admin.get("/api/v1/push/channels").json()["items"]
    assert listed == [channel]
    duplicate = admin.post(
        "/api/v1/push/channels", json={"url": "tgram://123456789:abcdefsecrettoken/987654"}
    )
    assert duplicate.status_code == 409
    assert admin.post("/api/v1/push/channels", json={"url": "bogus://x"}).status_code == 422
    unknown = admin.post(
        "/api/v1/push/channels", json={"url": "json://127.0.0.1:9/y", "agents": ["nobody"]}
    )
    assert unknown.status_code == 404
    assert admin.delete(f"/api/v1/push/channels/{channel['id']}").status_code == 204
    assert admin.delete(f"/api/v1/push/channels/{channel['id']}").status_code == 404
    assert admin.get("/api/v1/push/channels").json()["items"] == []


def test_env_channels_are_listed_and_cannot_be_deleted(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data", scheduler=False, apprise_urls=("json://127.0.0.1:9/env",)
    )
    with running(settings) as live, live.client(cli_key(settings, "admin")) as admin:
        [channel] = admin.get("/api/v1/push/channels").json()["items"]
        assert channel["source"] == "env" and channel["label"] == "CREDENCE_APPRISE_URLS"
        assert admin.delete(f"/api/v1/push/channels/{channel['id']}").status_code == 409


@pytest.mark.parametrize(
    "subject", ["mailto:me@localhost", "mailto:ops@example.com", "https://10.0.0.1", "me@x.org"]
)
async def test_a_bad_vapid_subject_stops_start_up_naming_the_setting(
    tmp_path: Path, subject: str
) -> None:
    settings = Settings(data_dir=tmp_path / "data", scheduler=False, vapid_subject=subject)
    app = create_app(settings)
    with pytest.raises(ExceptionGroup) as refused:  # Litestar's lifespan runs in a task group
        async with app.lifespan():
            pass
    assert refused.group_contains(SettingsError, match="push cannot start: CREDENCE_VAPID_SUBJECT")


def test_cli_push_test_sends_to_every_device(server, admin, fake_push, monkeypatch) -> None:
    monkeypatch.setenv("CREDENCE_PUSH_ALLOWED_HOSTS", "127.0.0.1")
    fake_push.expected_server_key = vapid_public_key(server.settings)
    sub = admin.post(SUBS, json=fake_push.subscription("desk")).json()
    out, codes = io.StringIO(), []

    def run() -> None:
        with contextlib.redirect_stdout(out):
            codes.append(credence_main(["push", "test", *store_flags(server.settings)]))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert codes == [0], out.getvalue()
    assert f"device {sub['id']}: sent (HTTP 201)" in out.getvalue()
    [delivery] = fake_push.received("desk")
    assert delivery.payload["type"] == "test"
