"""Capability tokens in push messages: Keep or Forget one belief version, until the TTL ends."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from datetime import datetime

import msgspec

from credence.models import MAX_TOKEN_LENGTH

# The installation secret the MACs use (``store.secret(SECRET_NAME)``); single-box installs kept
# it in this file of the data dir before, and the store adopts that file once.
SECRET_NAME = "push_token"
SECRET_FILENAME = "push_token_secret"
VERSION = "v1"
# Separates these MACs from any other use the secret might ever get.
_DOMAIN = b"credence/push-action/v1\x00"
_ID = r"[a-z]{1,4}_[0-9a-z]{26}"
_TOKEN = re.compile(
    rf"v1\.(?P<belief>{_ID})\.(?P<version>[1-9][0-9]{{0,14}})\.(?P<key>{_ID})"
    r"\.(?P<expires>[1-9][0-9]{0,11})\.(?P<nonce>[A-Za-z0-9_-]{16})\.(?P<mac>[A-Za-z0-9_-]{43})"
)


class TokenError(ValueError):
    """The token is malformed, forged, or expired; ``reason`` is safe to show."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ActionClaims(msgspec.Struct, frozen=True):
    """What a verified token allows: Keep or Forget ``belief_id`` at ``version`` as ``key_id``."""

    belief_id: str
    version: int
    key_id: str
    expires_at: int
    nonce: str


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _mac(secret: bytes, message: str) -> str:
    return _b64url(hmac.new(secret, _DOMAIN + message.encode("ascii"), hashlib.sha256).digest())


def issue(secret: bytes, *, belief_id: str, version: int, key_id: str, expires_at: datetime) -> str:
    """Return a token allowing Keep or Forget of ``belief_id`` at ``version`` until ``expires_at``.

    ``key_id`` is the reviewer key the action will be applied and audited as.
    """
    if expires_at.tzinfo is None:
        raise ValueError("expires_at must be timezone-aware")
    nonce = _b64url(secrets.token_bytes(12))
    message = f"{VERSION}.{belief_id}.{int(version)}.{key_id}.{int(expires_at.timestamp())}.{nonce}"
    token = f"{message}.{_mac(secret, message)}"
    if not _TOKEN.fullmatch(token):
        raise ValueError("belief id, key id or version cannot be put in a token")
    return token


def verify(secret: bytes, token: str, now: datetime) -> ActionClaims:
    """Check the token's MAC in constant time and its expiry; return what it allows."""
    if len(token) > MAX_TOKEN_LENGTH:
        raise TokenError("this action token is malformed")
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise TokenError("this action token is malformed")
    message, _, mac = token.rpartition(".")
    if not hmac.compare_digest(_mac(secret, message), mac):
        raise TokenError("this action token is not valid")
    expires_at = int(match["expires"])
    if now.timestamp() >= expires_at:
        raise TokenError("this action token has expired; open Credence to decide")
    return ActionClaims(
        belief_id=match["belief"],
        version=int(match["version"]),
        key_id=match["key"],
        expires_at=expires_at,
        nonce=match["nonce"],
    )


def idempotency_key(token: str, action: str) -> str:
    """The Idempotency-Key a token's action is applied under, so a retry never applies twice."""
    digest = hashlib.sha256(f"{token}\x00{action}".encode()).hexdigest()[:40]
    return f"push:{digest}"
