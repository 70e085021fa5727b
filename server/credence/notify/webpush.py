"""Web Push delivery: RFC 8291 encryption, VAPID signing, async POST, outcome classification."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from datetime import datetime
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec
from cryptography.hazmat.primitives.asymmetric import ec
from pywebpush import WebPusher, WebPushException

from credence.models import MAX_ENDPOINT_LENGTH
from credence.notify.endpoints import AllowedHosts, EndpointRefused
from credence.notify.payload import MAX_PAYLOAD_BYTES
from credence.notify.vapid import VapidKeys, audience_for, b64url_decode, vapid_headers

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
BACKOFF_BASE_SECONDS = 2.0
BACKOFF_CAP_SECONDS = 32.0
# Push services keep messages at most about four weeks (FCM: 2,419,200 s).
MAX_TTL_SECONDS = 28 * 24 * 3600
# Shorter than the 24 h maximum so a push service whose clock runs ahead still accepts it.
VAPID_EXPIRES_IN = 12 * 3600
URGENCIES = ("very-low", "low", "normal", "high")
_TOPIC = re.compile(r"[A-Za-z0-9_-]{1,32}")
_DETAIL_LIMIT = 300
_BODY_LIMIT = 16384
NO_HOSTS = AllowedHosts()


class Outcome(StrEnum):
    """What the caller should do with a subscription after one send."""

    SENT = "sent"
    GONE = "gone"
    RETRY_AFTER = "retry_after"
    RETRY = "retry"
    AUTH_FAILED = "auth_failed"
    FAILED = "failed"


class SendResult(msgspec.Struct, frozen=True):
    """One send's outcome; ``retry_after`` is seconds the push service asked us to wait."""

    outcome: Outcome
    status_code: int | None
    retry_after: float | None
    detail: str


# Our own words for a push service's answer: its body never reaches an API caller.
_REASONS = {
    Outcome.SENT: "",
    Outcome.GONE: "the push service no longer knows this subscription",
    Outcome.RETRY_AFTER: "the push service asked us to slow down",
    Outcome.RETRY: "the push service is unavailable; will retry",
    Outcome.AUTH_FAILED: "the push service refused our VAPID credentials",
    Outcome.FAILED: "the push service refused the message",
}


class Subscription(msgspec.Struct, frozen=True):
    """A browser push subscription: endpoint plus the p256dh and auth keys, base64url."""

    endpoint: str
    p256dh: str
    auth: str


def validate_endpoint(url: str, allowed: AllowedHosts = NO_HOSTS) -> str:
    """Return ``url`` if it is a usable push endpoint: https, or http to an ``allowed`` host.

    Whether its host is public is decided after DNS (EndpointPolicy); this checks the form.
    """
    if len(url) > MAX_ENDPOINT_LENGTH:
        raise ValueError("push endpoint is too long")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"push endpoint is not a valid URL: {exc}") from exc
    host = parts.hostname
    if not host or parts.username is not None or parts.password is not None or parts.fragment:
        raise ValueError("push endpoint must be an absolute URL with a host and no credentials")
    if re.search(r"[\s\x00-\x1f\x7f]", url):
        raise ValueError("push endpoint contains whitespace or control characters")
    scheme = parts.scheme.lower()
    if scheme == "https":
        return url
    if scheme == "http" and allowed.admits(host, port or 80):
        return url
    raise ValueError(
        "push endpoint must use https (http only to a host in CREDENCE_PUSH_ALLOWED_HOSTS),"
        f" got {scheme}://" + (f"{host}:{port}" if port else host)
    )


def validate_keys(p256dh: str, auth: str) -> tuple[str, str]:
    """Check the subscription keys: p256dh a 65-byte uncompressed P-256 point, auth 16 bytes."""
    try:
        point = b64url_decode(p256dh)
    except ValueError as exc:
        raise ValueError("p256dh is not base64url") from exc
    if len(point) != 65 or point[0] != 0x04:
        raise ValueError("p256dh must be a 65-byte uncompressed P-256 point")
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError as exc:
        raise ValueError("p256dh is not a point on P-256") from exc
    try:
        secret = b64url_decode(auth)
    except ValueError as exc:
        raise ValueError("auth is not base64url") from exc
    if len(secret) != 16:
        raise ValueError("auth must decode to 16 bytes")
    return p256dh, auth


def parse_subscription(data: Mapping[str, Any], allowed: AllowedHosts = NO_HOSTS) -> Subscription:
    """Validate a ``PushSubscription.toJSON()`` object and return it as a Subscription."""
    keys = data.get("keys")
    endpoint = data.get("endpoint")
    if not isinstance(endpoint, str) or not isinstance(keys, Mapping):
        raise ValueError("subscription needs an endpoint string and a keys object")
    p256dh, auth = keys.get("p256dh"), keys.get("auth")
    if not isinstance(p256dh, str) or not isinstance(auth, str):
        raise ValueError("subscription keys need p256dh and auth strings")
    validate_keys(p256dh, auth)
    return Subscription(endpoint=validate_endpoint(endpoint, allowed), p256dh=p256dh, auth=auth)


def backoff_seconds(attempt: int) -> float:
    """Return the wait after failed attempt number ``attempt`` (1-based): 2, 4, 8, 16, 32, 32…"""
    if attempt < 1:
        raise ValueError("attempt numbers start at 1")
    return min(BACKOFF_BASE_SECONDS * 2 ** min(attempt - 1, 16), BACKOFF_CAP_SECONDS)


def next_retry_delay(
    result: SendResult, attempt: int, *, age_seconds: float, ttl: int
) -> float | None:
    """Return seconds to wait before retrying, or None to give up.

    ``attempt`` is the number of the send that just failed (1-based); ``age_seconds`` is how
    long ago the message was first queued. No retry is scheduled past the message's TTL or
    beyond MAX_ATTEMPTS sends.
    """
    if result.outcome not in (Outcome.RETRY, Outcome.RETRY_AFTER) or attempt >= MAX_ATTEMPTS:
        return None
    delay = backoff_seconds(attempt)
    if result.retry_after is not None:
        delay = (
            result.retry_after
            if result.outcome is Outcome.RETRY_AFTER
            else max(delay, result.retry_after)
        )
    if age_seconds + delay > ttl:
        return None
    return delay


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Parse Retry-After as delta-seconds or an HTTP-date (relative to ``now``); None if absent."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        return None
    return max(0.0, (moment - now).total_seconds())


def classify_response(
    status_code: int, headers: Mapping[str, str], now: datetime, detail: str = ""
) -> SendResult:
    """Map a push service's answer to an Outcome (RFC 8030 and the services' documented codes).

    ``detail`` defaults to our own short reason; a push service's body is never put there.
    """
    retry_after = parse_retry_after(headers.get("retry-after") or headers.get("Retry-After"), now)
    if 200 <= status_code < 300:
        outcome, retry_after = Outcome.SENT, None
    elif status_code in (404, 410):
        outcome, retry_after = Outcome.GONE, None
    elif status_code == 429:
        outcome = Outcome.RETRY if retry_after is None else Outcome.RETRY_AFTER
    elif status_code in (401, 403):
        outcome, retry_after = Outcome.AUTH_FAILED, None
    elif status_code >= 500:
        outcome = Outcome.RETRY
    else:
        outcome, retry_after = Outcome.FAILED, None
    return SendResult(outcome, status_code, retry_after, detail or _REASONS[outcome])


def encrypt(subscription: Subscription, payload: bytes) -> bytes:
    """Encrypt ``payload`` for the subscription with RFC 8291 aes128gcm (a fresh ephemeral key)."""
    info = {
        "endpoint": subscription.endpoint,
        "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth},
    }
    return WebPusher(info).encode(payload, content_encoding="aes128gcm")["body"]


def build_headers(
    keys: VapidKeys,
    endpoint: str,
    subject: str,
    *,
    ttl: int,
    urgency: str,
    topic: str | None,
    now: datetime,
) -> dict[str, str]:
    """Return the request headers for one push: TTL, Urgency, Topic, encoding and VAPID."""
    if isinstance(ttl, bool) or not isinstance(ttl, int) or not 0 <= ttl <= MAX_TTL_SECONDS:
        raise ValueError(f"TTL must be an integer between 0 and {MAX_TTL_SECONDS} seconds")
    if urgency not in URGENCIES:
        raise ValueError(f"urgency must be one of {', '.join(URGENCIES)}")
    headers = {
        "TTL": str(ttl),
        "Urgency": urgency,
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
    }
    if topic is not None:
        if not _TOPIC.fullmatch(topic):
            raise ValueError("topic must be 1-32 base64url characters")
        headers["Topic"] = topic
    headers.update(vapid_headers(keys, endpoint, subject, VAPID_EXPIRES_IN, now))
    return headers


async def send(
    client: httpx.AsyncClient,
    subscription: Subscription,
    payload: bytes,
    keys: VapidKeys,
    subject: str,
    *,
    ttl: int,
    urgency: str = "normal",
    topic: str | None,
    now: datetime,
    timeout: float = 10,
) -> SendResult:
    """Encrypt, sign and POST one push message; network and service failures become a result.

    Invalid arguments (payload too large, bad TTL, urgency or topic) raise ValueError: they are
    the caller's bugs, not the push service's answer.
    """
    if not payload or len(payload) > MAX_PAYLOAD_BYTES:
        raise ValueError(f"push payload must be 1-{MAX_PAYLOAD_BYTES} bytes, got {len(payload)}")
    headers = build_headers(
        keys, subscription.endpoint, subject, ttl=ttl, urgency=urgency, topic=topic, now=now
    )
    origin = audience_for(subscription.endpoint)
    try:
        body = encrypt(subscription, payload)
    except (WebPushException, ValueError) as exc:
        return SendResult(Outcome.FAILED, None, None, f"cannot encrypt for subscription: {exc}")
    try:
        async with client.stream(
            "POST", subscription.endpoint, content=body, headers=headers, timeout=timeout
        ) as response:
            excerpt = await _read_excerpt(response)
    except httpx.TimeoutException as exc:
        return SendResult(Outcome.RETRY, None, None, f"timed out: {type(exc).__name__}")
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        return SendResult(Outcome.FAILED, None, None, f"unusable endpoint: {exc}")
    except httpx.TransportError as exc:
        if isinstance(exc.__cause__, EndpointRefused):
            return SendResult(Outcome.FAILED, None, None, f"refused: {exc.__cause__}")
        return SendResult(Outcome.RETRY, None, None, f"transport error: {type(exc).__name__}")
    result = classify_response(response.status_code, response.headers, now)
    if result.outcome is Outcome.AUTH_FAILED:
        log.error(
            "push service %s rejected our VAPID credentials (HTTP %s: %s); check the VAPID key "
            "and CREDENCE_VAPID_SUBJECT",
            origin,
            result.status_code,
            excerpt,
        )
    elif result.outcome is not Outcome.SENT:
        log.info("push to %s: %s (HTTP %s)", origin, result.outcome, result.status_code)
    return result


async def _read_excerpt(response: httpx.Response) -> str:
    # Reading a short body to its end lets the connection return to the pool for the next send;
    # the excerpt is for the operator's log only.
    collected = b""
    async for chunk in response.aiter_bytes():
        collected += chunk
        if len(collected) > _BODY_LIMIT:
            break
    if 200 <= response.status_code < 300:
        return ""
    text = collected[:_DETAIL_LIMIT].decode("utf-8", "replace")
    return re.sub(r"\s+", " ", text).strip()
