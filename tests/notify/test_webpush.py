"""Web Push send against a real loopback push service: decryption, headers, outcome per answer."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import socket
from datetime import timedelta
from email.utils import format_datetime

import httpx
import pytest
from harness.fakes.push import LOOPBACK, FakePushService, Reply

from credence.clock import system_clock
from credence.notify.endpoints import AllowedHosts
from credence.notify.payload import MAX_PAYLOAD_BYTES, build_payload, topic_for
from credence.notify.vapid import VapidKeys, generate, vapid_headers
from credence.notify.webpush import (
    MAX_ATTEMPTS,
    Outcome,
    SendResult,
    Subscription,
    backoff_seconds,
    classify_response,
    encrypt,
    next_retry_delay,
    parse_retry_after,
    parse_subscription,
    send,
    validate_endpoint,
    validate_keys,
)

BELIEF_ID = "blf_01jq3z7k9m2n4p6r8s0t1v3w5x"


def _payload(content: str = "PDFs over 10MB reliably exhaust the ingester") -> bytes:
    return build_payload(
        belief_id=BELIEF_ID,
        agent_id="ingest-bot",
        agent_name="Ingest bot",
        content=content,
        provenance="clean",
        pending_count=4,
        token="cap_token",
        ttl_seconds=3600,
    )


async def _send(
    client: httpx.AsyncClient,
    subscription: Subscription,
    keys: VapidKeys,
    subject: str,
    payload: bytes | None = None,
    **options,
) -> SendResult:
    options.setdefault("ttl", 3600)
    options.setdefault("topic", topic_for(BELIEF_ID))
    options.setdefault("now", system_clock())
    return await send(client, subscription, payload or _payload(), keys, subject, **options)


async def test_a_sent_push_decrypts_to_the_payload_with_valid_headers(
    fake_push: FakePushService, http_client, vapid_keys, subject
):
    raw = fake_push.subscription("alice")
    assert set(raw) == {"endpoint", "expirationTime", "keys"} and raw["expirationTime"] is None
    subscription = parse_subscription(raw, LOOPBACK)
    payload = _payload()

    result = await _send(http_client, subscription, vapid_keys, subject, payload, urgency="high")

    assert result == SendResult(Outcome.SENT, 201, None, "")
    [delivery] = await fake_push.wait_for(1, name="alice")
    assert delivery.plaintext == payload
    assert delivery.payload == json.loads(payload)
    assert delivery.headers["ttl"] == "3600"
    assert delivery.headers["urgency"] == "high"
    assert delivery.headers["topic"] == topic_for(BELIEF_ID)
    assert delivery.headers["content-encoding"] == "aes128gcm"
    assert delivery.headers["content-type"] == "application/octet-stream"
    assert delivery.claims["aud"] == fake_push.origin
    assert delivery.claims["sub"] == subject
    now = system_clock().timestamp()
    assert now < delivery.claims["exp"] <= now + 24 * 3600


async def test_every_send_signs_fresh_claims(fake_push, http_client, vapid_keys, subject):
    subscription = parse_subscription(fake_push.subscription("alice"), LOOPBACK)
    start = system_clock()
    await _send(http_client, subscription, vapid_keys, subject, now=start)
    await _send(http_client, subscription, vapid_keys, subject, now=start + timedelta(minutes=7))
    first, second = await fake_push.wait_for(2)
    assert second.claims["exp"] - first.claims["exp"] == 7 * 60
    assert first.headers["authorization"] != second.headers["authorization"]


async def test_topic_is_optional_and_urgency_defaults_to_normal(
    fake_push, http_client, vapid_keys, subject
):
    subscription = parse_subscription(fake_push.subscription("alice"), LOOPBACK)
    result = await _send(http_client, subscription, vapid_keys, subject, topic=None)
    assert result.outcome is Outcome.SENT
    [delivery] = await fake_push.wait_for(1)
    assert "topic" not in delivery.headers
    assert delivery.headers["urgency"] == "normal"


async def test_a_maximum_size_payload_fits_one_record(fake_push, http_client, vapid_keys, subject):
    subscription = parse_subscription(fake_push.subscription("alice"), LOOPBACK)
    payload = _payload(" ".join(["lesson"] * 2000))
    assert len(payload) <= MAX_PAYLOAD_BYTES
    assert len(encrypt(subscription, payload)) <= 4096
    result = await _send(http_client, subscription, vapid_keys, subject, payload)
    assert result.outcome is Outcome.SENT
    assert (await fake_push.wait_for(1))[0].plaintext == payload


@pytest.mark.parametrize(
    ("reply", "outcome", "retry_after"),
    [
        (Reply(202), Outcome.SENT, None),
        (Reply(404), Outcome.GONE, None),
        (Reply(410), Outcome.GONE, None),
        (Reply(429, retry_after="7"), Outcome.RETRY_AFTER, 7.0),
        (Reply(429), Outcome.RETRY, None),
        (Reply(500, body="boom"), Outcome.RETRY, None),
        (Reply(503, retry_after="30"), Outcome.RETRY, 30.0),
        (Reply(401), Outcome.AUTH_FAILED, None),
        (Reply(403), Outcome.AUTH_FAILED, None),
        (Reply(400, body="bad things"), Outcome.FAILED, None),
        (Reply(413), Outcome.FAILED, None),
    ],
    ids=lambda value: str(getattr(value, "status", value)),
)
async def test_each_push_service_answer_is_classified(
    fake_push, http_client, vapid_keys, subject, reply, outcome, retry_after
):
    subscription = parse_subscription(fake_push.subscription("alice"), LOOPBACK)
    fake_push.script("alice", reply)
    result = await _send(http_client, subscription, vapid_keys, subject)
    assert result.outcome is outcome
    assert result.status_code == reply.status
    assert result.retry_after == retry_after
    if reply.body:  # the push service's words never reach a caller
        assert reply.body not in result.detail
    follow_up = await _send(http_client, subscription, vapid_keys, subject)
    assert follow_up.outcome is Outcome.SENT


async def test_retry_after_as_an_http_date_becomes_seconds(
    fake_push, http_client, vapid_keys, subject
):
    subscription = parse_subscription(fake_push.subscription("alice"), LOOPBACK)
    now = system_clock().replace(microsecond=0)
    fake_push.script("alice", Reply(429, retry_after=format_datetime(now + timedelta(seconds=90))))
    result = await _send(http_client, subscription, vapid_keys, subject, now=now)
    assert result.outcome is Outcome.RETRY_AFTER
    assert result.retry_after == 90.0


async def test_an_unsubscribed_browser_answers_gone(fake_push, http_client, vapid_keys, subject):
    subscription = parse_subscription(fake_push.subscription("alice"), LOOPBACK)
    fake_push.unsubscribe("alice")
    result = await _send(http_client, subscription, vapid_keys, subject)
    assert (result.outcome, result.status_code) == (Outcome.GONE, 410)


async def test_a_slow_push_service_times_out_as_retry(fake_push, http_client, vapid_keys, subject):
    subscription = parse_subscription(fake_push.subscription("alice"), LOOPBACK)
    fake_push.script("alice", Reply(201, delay=1.0))
    result = await _send(http_client, subscription, vapid_keys, subject, timeout=0.2)
    assert result.outcome is Outcome.RETRY
    assert result.status_code is None
    assert "timed out" in result.detail


async def test_a_refused_connection_is_retry(http_client, vapid_keys, subject):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with FakePushService() as elsewhere:
        raw = elsewhere.subscription("alice")
    raw["endpoint"] = f"http://127.0.0.1:{port}/push/alice"
    result = await _send(http_client, parse_subscription(raw, LOOPBACK), vapid_keys, subject)
    assert result.outcome is Outcome.RETRY
    assert "ConnectError" in result.detail


async def test_a_key_the_subscription_was_not_made_with_is_auth_failed(
    http_client, tmp_path, subject, caplog
):
    other_keys = generate()
    our_keys = generate()
    with FakePushService(expected_server_key=other_keys.public_key_b64url) as fake:
        subscription = parse_subscription(fake.subscription("alice"), LOOPBACK)
        with caplog.at_level(logging.ERROR, logger="credence.notify.webpush"):
            result = await _send(http_client, subscription, our_keys, subject)
        assert fake.received() == []
    assert (result.outcome, result.status_code) == (Outcome.AUTH_FAILED, 403)
    assert "VAPID" in caplog.text


async def test_an_expired_vapid_token_is_auth_failed(fake_push, http_client, vapid_keys, subject):
    subscription = parse_subscription(fake_push.subscription("alice"), LOOPBACK)
    stale_clock = system_clock() - timedelta(days=2)
    result = await _send(http_client, subscription, vapid_keys, subject, now=stale_clock)
    assert (result.outcome, result.status_code) == (Outcome.AUTH_FAILED, 401)
    assert result.detail == "the push service refused our VAPID credentials"


async def test_an_unknown_subscription_is_gone(fake_push, http_client, vapid_keys, subject):
    raw = fake_push.subscription("alice")
    raw["endpoint"] = raw["endpoint"].replace("/alice", "/bob")
    result = await _send(http_client, parse_subscription(raw, LOOPBACK), vapid_keys, subject)
    assert (result.outcome, result.status_code) == (Outcome.GONE, 404)


async def test_many_concurrent_sends_each_arrive_once(fake_push, http_client, vapid_keys, subject):
    subscriptions = [
        parse_subscription(fake_push.subscription(f"d{n}"), LOOPBACK) for n in range(5)
    ]
    payloads = [_payload(f"lesson number {n}") for n in range(25)]
    results = await asyncio.gather(
        *(
            _send(http_client, subscriptions[n % 5], vapid_keys, subject, payload)
            for n, payload in enumerate(payloads)
        )
    )
    assert {result.outcome for result in results} == {Outcome.SENT}
    deliveries = await fake_push.wait_for(25)
    assert sorted(d.plaintext for d in deliveries) == sorted(payloads)
    assert {d.name for d in deliveries} == {f"d{n}" for n in range(5)}


# The fake is strict like a real push service, so a sloppy sender would fail these tests.


async def test_the_fake_refuses_pushes_without_ttl_or_with_a_bad_token(
    fake_push: FakePushService, http_client, vapid_keys, subject
):
    subscription = parse_subscription(fake_push.subscription("alice"), LOOPBACK)
    body = encrypt(subscription, b'{"x": 1}')
    good_auth = vapid_headers(vapid_keys, subscription.endpoint, subject, 600, system_clock())
    base = {"Content-Encoding": "aes128gcm", "TTL": "60", **good_auth}

    async def post(headers: dict[str, str], content: bytes = body) -> int:
        response = await http_client.post(subscription.endpoint, content=content, headers=headers)
        return response.status_code

    assert await post({k: v for k, v in base.items() if k != "TTL"}) == 400
    assert await post({**base, "Urgency": "urgent"}) == 400
    assert await post({**base, "Topic": "x" * 33}) == 400
    tampered = base["Authorization"].replace("t=eyJ", "t=eyK", 1)
    assert await post({**base, "Authorization": tampered}) == 401
    other_origin = vapid_headers(
        vapid_keys, "https://push.credence-push.org/x", subject, 600, system_clock()
    )
    assert await post({**base, **other_origin}) == 401
    assert await post(base, body[:-1] + bytes([body[-1] ^ 1])) == 400
    assert fake_push.received() == []
    assert await post(base) == 201


# Pure helpers.


def test_backoff_is_bounded_exponential():
    assert [backoff_seconds(n) for n in range(1, 8)] == [2, 4, 8, 16, 32, 32, 32]
    with pytest.raises(ValueError):
        backoff_seconds(0)


def test_next_retry_delay_stops_at_max_attempts_and_the_ttl():
    retry = SendResult(Outcome.RETRY, 500, None, "")
    assert next_retry_delay(retry, 1, age_seconds=0, ttl=3600) == 2
    assert next_retry_delay(retry, 4, age_seconds=0, ttl=3600) == 16
    assert next_retry_delay(retry, MAX_ATTEMPTS, age_seconds=0, ttl=3600) is None
    assert next_retry_delay(retry, 3, age_seconds=55, ttl=60) is None
    told = SendResult(Outcome.RETRY_AFTER, 429, 120.0, "")
    assert next_retry_delay(told, 1, age_seconds=0, ttl=3600) == 120.0
    assert next_retry_delay(told, 1, age_seconds=0, ttl=100) is None
    unavailable = SendResult(Outcome.RETRY, 503, 10.0, "")
    assert next_retry_delay(unavailable, 1, age_seconds=0, ttl=3600) == 10.0
    for outcome in (Outcome.SENT, Outcome.GONE, Outcome.AUTH_FAILED, Outcome.FAILED):
        assert next_retry_delay(SendResult(outcome, 0, None, ""), 1, age_seconds=0, ttl=60) is None


def test_parse_retry_after_forms():
    now = system_clock().replace(microsecond=0)
    assert parse_retry_after("120", now) == 120.0
    assert parse_retry_after(format_datetime(now + timedelta(seconds=5), usegmt=True), now) == 5.0
    assert parse_retry_after(format_datetime(now - timedelta(seconds=5), usegmt=True), now) == 0.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None


def test_classify_treats_any_2xx_as_sent_and_3xx_as_failed():
    now = system_clock()
    assert classify_response(200, {}, now).outcome is Outcome.SENT
    assert classify_response(301, {}, now).outcome is Outcome.FAILED


async def test_invalid_send_arguments_raise(fake_push, http_client, vapid_keys, subject):
    subscription = parse_subscription(fake_push.subscription("alice"), LOOPBACK)
    with pytest.raises(ValueError, match="payload"):
        await _send(http_client, subscription, vapid_keys, subject, b"x" * 3994)
    with pytest.raises(ValueError, match="urgency"):
        await _send(http_client, subscription, vapid_keys, subject, urgency="asap")
    with pytest.raises(ValueError, match="topic"):
        await _send(http_client, subscription, vapid_keys, subject, topic="not/base64url")
    with pytest.raises(ValueError, match="TTL"):
        await _send(http_client, subscription, vapid_keys, subject, ttl=-1)
    assert fake_push.attempts() == []


@pytest.mark.parametrize(
    "url",
    [
        "https://fcm.googleapis.com/fcm/send/abc",
        "https://web.push.apple.com/QGx",
        "http://127.0.0.1:8080/push/a",
        "http://127.9.9.9/push/a",
        "http://localhost:9000/push",
        "http://[::1]:9000/push",
    ],
)
def test_endpoints_that_are_accepted(url: str):
    allowed = AllowedHosts.parse(["127.0.0.1:8080", "127.9.9.9", "localhost", "[::1]:9000"])
    assert validate_endpoint(url, allowed) == url
    if url.startswith("http://"):  # only CREDENCE_PUSH_ALLOWED_HOSTS admits http
        with pytest.raises(ValueError, match="CREDENCE_PUSH_ALLOWED_HOSTS"):
            validate_endpoint(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://fcm.googleapis.com/fcm/send/abc",
        "http://192.168.1.20/push",
        "http://10.0.0.1/push",
        "ftp://push.credence-push.org/x",
        "javascript:alert(1)",
        "https://user:pw@push.credence-push.org/x",
        "https:///nohost",
        "https://push.credence-push.org/a b",
        "https://push.credence-push.org/x#frag",
        "https://push.credence-push.org:99999/x",
        "https://push.credence-push.org/" + "a" * 2100,
        "/relative/path",
    ],
)
def test_endpoints_that_are_refused(url: str):
    with pytest.raises(ValueError):
        validate_endpoint(url)


def test_browser_keys_are_checked(fake_push: FakePushService):
    keys = fake_push.subscription("alice")["keys"]
    assert validate_keys(keys["p256dh"], keys["auth"]) == (keys["p256dh"], keys["auth"])

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    point = base64.urlsafe_b64decode(keys["p256dh"] + "==")
    bad_p256dh = [
        b64(point[:33]),  # compressed length
        b64(b"\x04" + b"\x01" * 64),  # not on the curve
        b64(b"\x05" + point[1:]),  # wrong prefix
        keys["p256dh"] + "!",  # not base64url
    ]
    for candidate in bad_p256dh:
        with pytest.raises(ValueError, match="p256dh"):
            validate_keys(candidate, keys["auth"])
    for candidate in (b64(b"\x00" * 15), b64(b"\x00" * 17), "***"):
        with pytest.raises(ValueError, match="auth"):
            validate_keys(keys["p256dh"], candidate)
    with pytest.raises(ValueError, match="endpoint"):
        parse_subscription({"keys": keys})
    with pytest.raises(ValueError, match="keys"):
        parse_subscription({"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": 1}})
