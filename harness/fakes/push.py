"""A real loopback Web Push service for tests: checks VAPID, decrypts aes128gcm, scripts answers."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import http_ece
import uvicorn
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from credence.clock import Clock, system_clock
from credence.notify.endpoints import AllowedHosts

# This service's host, as CREDENCE_PUSH_ALLOWED_HOSTS admits it (its endpoints are plain http).
LOOPBACK = AllowedHosts.parse(["127.0.0.1"])
MAX_BODY_BYTES = 4096
URGENCIES = frozenset({"very-low", "low", "normal", "high"})
_TOPIC = re.compile(r"[A-Za-z0-9_-]{1,32}")
_NAME = re.compile(r"[A-Za-z0-9_.~-]{1,100}")
_PUSH_PATH = re.compile(r"/push/([^/]+)")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Reply:
    """A scripted answer: status, optional Retry-After, and a delay before answering."""

    status: int = 201
    retry_after: str | None = None
    delay: float = 0.0
    body: str = ""


@dataclass(frozen=True)
class Delivery:
    """A push message the fake accepted (answered 2xx) after verifying and decrypting it."""

    name: str
    headers: dict[str, str]
    payload: Any
    plaintext: bytes
    claims: dict[str, Any]
    received_at: datetime
    status: int


@dataclass(frozen=True)
class Attempt:
    """Every request the fake saw, with the status it answered and why."""

    name: str | None
    status: int
    reason: str
    received_at: datetime


@dataclass
class _Browser:
    private_key: ec.EllipticCurvePrivateKey
    auth_secret: bytes
    subscription: dict[str, Any]
    application_server_key: str | None
    gone: bool = False
    replies: deque[Reply] = field(default_factory=deque)


class _Rejected(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class FakePushService:
    """A Web Push service on 127.0.0.1 that behaves like a strict real one.

    Each POST to /push/<name> must carry a TTL, a valid Urgency/Topic if present, an
    aes128gcm body of at most 4096 bytes, and a VAPID ``Authorization: vapid t=…,k=…`` whose
    ES256 signature verifies against ``k``, whose aud is this origin and whose exp lies in the
    next 24 hours (401 otherwise; 403 when ``k`` is not the subscription's applicationServerKey).
    The body is then decrypted with the subscription's own private key and auth secret.
    """

    def __init__(self, *, expected_server_key: str | None = None, clock: Clock = system_clock):
        self.expected_server_key = expected_server_key
        self._clock = clock
        self._lock = threading.Lock()
        self._browsers: dict[str, _Browser] = {}
        self._deliveries: list[Delivery] = []
        self._attempts: list[Attempt] = []
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.port = 0

    # lifecycle -------------------------------------------------------------------------------

    def start(self) -> FakePushService:
        """Bind 127.0.0.1 on a free port and serve from a background thread."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._socket = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app,
            interface="asgi3",
            lifespan="off",
            proxy_headers=False,
            log_config=None,
            log_level="warning",
            access_log=False,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True, name="fake-push"
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("fake push service did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving and release the socket."""
        if self._server is not None:
            self._server.should_exit = True
            self._server.force_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def __enter__(self) -> FakePushService:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        """The service's origin, which is the VAPID audience it demands."""
        if not self.port:
            raise RuntimeError("start the fake push service first")
        return f"http://127.0.0.1:{self.port}"

    # the browser side ------------------------------------------------------------------------

    def subscription(self, name: str, *, application_server_key: str | None = None) -> dict:
        """Return a browser-like ``PushSubscription.toJSON()`` for ``name`` (created once)."""
        if not _NAME.fullmatch(name):
            raise ValueError(f"subscription name {name!r} must be URL-safe")
        with self._lock:
            browser = self._browsers.get(name)
            if browser is None:
                private_key = ec.generate_private_key(ec.SECP256R1())
                auth_secret = os.urandom(16)
                point = private_key.public_key().public_bytes(
                    serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
                )
                browser = _Browser(
                    private_key=private_key,
                    auth_secret=auth_secret,
                    subscription={
                        "endpoint": f"{self.origin}/push/{name}",
                        "expirationTime": None,
                        "keys": {"p256dh": _b64url(point), "auth": _b64url(auth_secret)},
                    },
                    application_server_key=application_server_key,
                )
                self._browsers[name] = browser
            return json.loads(json.dumps(browser.subscription))

    def unsubscribe(self, name: str) -> None:
        """Forget the subscription like a browser would: further pushes to it answer 410."""
        with self._lock:
            self._browsers[name].gone = True

    def script(self, name: str, *replies: Reply) -> None:
        """Queue answers for the next requests to ``name``; afterwards it answers 201 again."""
        with self._lock:
            self._browsers[name].replies.extend(replies)

    def received(self, name: str | None = None) -> list[Delivery]:
        """Accepted deliveries, oldest first, optionally for one subscription."""
        with self._lock:
            return [d for d in self._deliveries if name is None or d.name == name]

    def attempts(self, name: str | None = None) -> list[Attempt]:
        """Every request seen, including rejected and scripted-failure ones."""
        with self._lock:
            return [a for a in self._attempts if name is None or a.name == name]

    async def wait_for(
        self, count: int, timeout: float = 5.0, *, name: str | None = None
    ) -> list[Delivery]:
        """Wait without blocking the event loop until ``count`` deliveries have arrived."""
        deadline = time.monotonic() + timeout
        while True:
            deliveries = self.received(name)
            if len(deliveries) >= count:
                return deliveries
            if time.monotonic() >= deadline:
                seen = [(a.name, a.status, a.reason) for a in self.attempts(name)[-5:]]
                raise TimeoutError(
                    f"expected {count} deliveries, got {len(deliveries)}; last attempts: {seen}"
                )
            await asyncio.sleep(0.005)

    # the push service side -------------------------------------------------------------------

    async def _app(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body") or len(body) > MAX_BODY_BYTES:
                break
        headers: dict[str, str] = {}
        for key, value in scope["headers"]:
            headers[key.decode("latin-1").lower()] = value.decode("latin-1")
        match = _PUSH_PATH.fullmatch(scope["path"])
        name = match.group(1) if match else None
        now = self._clock()
        try:
            if match is None:
                raise _Rejected(404, "no such path")
            if scope["method"] != "POST":
                raise _Rejected(405, "push messages are POSTed")
            with self._lock:
                browser = self._browsers.get(name)
            if browser is None:
                raise _Rejected(404, "unknown subscription")
            if browser.gone:
                raise _Rejected(410, "subscription expired or unsubscribed")
            claims, plaintext = self._check(browser, headers, body, now)
        except _Rejected as rejected:
            self._record_attempt(name, rejected.status, rejected.reason, now)
            await _respond(send, rejected.status, rejected.reason)
            return
        with self._lock:
            reply = browser.replies.popleft() if browser.replies else Reply()
        if reply.delay:
            await asyncio.sleep(reply.delay)
        extra: list[tuple[bytes, bytes]] = []
        if reply.retry_after is not None:
            extra.append((b"retry-after", reply.retry_after.encode("latin-1")))
        if 200 <= reply.status < 300:
            try:
                payload = json.loads(plaintext)
            except ValueError:
                payload = None
            delivery = Delivery(
                name, headers, payload, plaintext, claims, self._clock(), reply.status
            )
            with self._lock:
                self._deliveries.append(delivery)
                extra.append((b"location", f"/message/{len(self._deliveries)}".encode()))
        self._record_attempt(name, reply.status, "scripted" if reply != Reply() else "ok", now)
        await _respond(send, reply.status, reply.body, extra)

    def _record_attempt(self, name: str | None, status: int, reason: str, now: datetime) -> None:
        with self._lock:
            self._attempts.append(Attempt(name, status, reason, now))

    def _check(
        self, browser: _Browser, headers: dict[str, str], body: bytes, now: datetime
    ) -> tuple[dict[str, Any], bytes]:
        if len(body) > MAX_BODY_BYTES:
            raise _Rejected(413, "payload too large")
        if not re.fullmatch(r"\d+", headers.get("ttl", "")):
            raise _Rejected(400, "missing or invalid TTL header")
        if "urgency" in headers and headers["urgency"] not in URGENCIES:
            raise _Rejected(400, "invalid Urgency header")
        if "topic" in headers and not _TOPIC.fullmatch(headers["topic"]):
            raise _Rejected(400, "invalid Topic header")
        if headers.get("content-encoding") != "aes128gcm":
            raise _Rejected(400, "Content-Encoding must be aes128gcm")
        server_key, claims = _verify_vapid(headers.get("authorization", ""), self.origin, now)
        expected = browser.application_server_key or self.expected_server_key
        if expected is not None and server_key != expected:
            raise _Rejected(403, "VAPID key does not match the subscription's server key")
        try:
            plaintext = http_ece.decrypt(
                body,
                private_key=browser.private_key,
                auth_secret=browser.auth_secret,
                version="aes128gcm",
            )
        except Exception as exc:
            raise _Rejected(400, f"cannot decrypt: {type(exc).__name__}") from exc
        return claims, plaintext


def _verify_vapid(authorization: str, origin: str, now: datetime) -> tuple[str, dict[str, Any]]:
    """Check an RFC 8292 header independently of py_vapid; return (k, claims) or raise 401."""
    scheme, _, params = authorization.partition(" ")
    if scheme.lower() != "vapid":
        raise _Rejected(401, "Authorization must use the vapid scheme")
    fields: dict[str, str] = {}
    for part in params.split(","):
        key, _, value = part.strip().partition("=")
        fields[key] = value
    token, server_key = fields.get("t", ""), fields.get("k", "")
    try:
        encoded_header, encoded_claims, encoded_signature = token.split(".")
        header = json.loads(_unb64url(encoded_header))
        claims = json.loads(_unb64url(encoded_claims))
        signature = _unb64url(encoded_signature)
        public_key = ec.EllipticCurvePublicKey.from_encoded_point(
            ec.SECP256R1(), _unb64url(server_key)
        )
    except ValueError as exc:
        raise _Rejected(401, f"malformed VAPID token or key: {exc}") from exc
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise _Rejected(401, "VAPID token parts must be JSON objects")
    if header.get("alg") != "ES256" or len(signature) != 64:
        raise _Rejected(401, "VAPID token must be ES256")
    der = encode_dss_signature(
        int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
    )
    try:
        public_key.verify(
            der, f"{encoded_header}.{encoded_claims}".encode(), ec.ECDSA(hashes.SHA256())
        )
    except InvalidSignature as exc:
        raise _Rejected(401, "VAPID signature does not verify") from exc
    if claims.get("aud") != origin:
        raise _Rejected(401, f"VAPID aud {claims.get('aud')!r} is not {origin}")
    exp = claims.get("exp")
    now_seconds = now.timestamp()
    if not isinstance(exp, int) or exp <= now_seconds:
        raise _Rejected(401, "VAPID token expired")
    if exp > now_seconds + 24 * 3600:
        raise _Rejected(401, "VAPID exp more than 24 hours ahead")
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub.startswith(("mailto:", "https:")):
        raise _Rejected(401, "VAPID sub must be mailto: or https:")
    return server_key, claims


async def _respond(
    send: Any, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = text.encode()
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    headers.extend(extra or [])
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
