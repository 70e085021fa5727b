"""Push models: Web Push subscriptions, notification channels and test sends."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta, Struct

from credence.models.common import (
    END,
    MAX_SAFE_INT,
    NO_NUL,
    WHITESPACE,
    AgentId,
    Label,
    TimestampText,
)

# Longest push service URL and notification-action token the server accepts (notify enforces them).
MAX_ENDPOINT_LENGTH = 2048
MAX_TOKEN_LENGTH = 256
# The schema says as much as a pattern can: an http(s) URL without credentials or fragment; a
# p256dh is 65 bytes starting 0x04 (87 base64url chars), an auth secret 16 bytes (22 chars).
# What no pattern can say (the point is on P-256, the host is public, http is admitted by
# CREDENCE_PUSH_ALLOWED_HOSTS) is a 422.
ENDPOINT_PATTERN = (
    rf"^https?://[^/?#@{WHITESPACE}\x00-\x1f\x7f]+(?:[/?][^#{WHITESPACE}\x00-\x1f\x7f]*)?" + END
)
P256DH_PATTERN = r"^B[A-P][A-Za-z0-9_-]{85}=?" + END
AUTH_PATTERN = r"^[A-Za-z0-9_-]{21}[AQgw](?:==)?" + END


class PushKeysIn(Struct, frozen=True):
    """The subscription's keys as the browser encodes them (base64url)."""

    p256dh: Annotated[str, Meta(min_length=87, max_length=88, pattern=P256DH_PATTERN)]
    auth: Annotated[str, Meta(min_length=22, max_length=24, pattern=AUTH_PATTERN)]


class PushSubscriptionIn(Struct, frozen=True, kw_only=True):
    """The browser's own ``PushSubscription.toJSON()``."""

    endpoint: Annotated[
        str,
        Meta(
            min_length=9,
            max_length=MAX_ENDPOINT_LENGTH,
            pattern=ENDPOINT_PATTERN,
            description="The push service URL: https to a public host (http only to a host"
            " admitted by CREDENCE_PUSH_ALLOWED_HOSTS)",
        ),
    ]
    keys: PushKeysIn
    # EpochTimeStamp in ms; a number, since JSON (and some browsers) may write 1.7e12.
    expiration_time: Annotated[float, Meta(ge=0, le=MAX_SAFE_INT)] | None = msgspec.field(
        default=None, name="expirationTime"
    )


class PushSubscription(Struct, frozen=True, kw_only=True):
    """A device subscribed to this key's notifications."""

    id: str
    key_id: str
    endpoint: str
    expiration_time: int | None
    created_at: TimestampText
    last_seen_at: TimestampText


class PushSubscriptionPage(Struct, frozen=True):
    """The calling key's subscriptions, most recently seen first."""

    items: list[PushSubscription]


class VapidPublicKey(Struct, frozen=True):
    """The applicationServerKey for ``PushManager.subscribe``: base64url P-256 point."""

    public_key: str


class PushActionIn(Struct, frozen=True, kw_only=True):
    """A notification button: the token from the push payload and what was tapped."""

    token: Annotated[
        str,
        Meta(min_length=1, max_length=MAX_TOKEN_LENGTH, pattern=r"^[A-Za-z0-9._-]+" + END),
    ]
    action: Literal["keep", "forget"]


class PushChannelIn(Struct, frozen=True, kw_only=True):
    """A channel that gets every notification (of these agents, or of all).

    ``kind`` apprise: ``url`` is an apprise URL. ``kind`` ntfy: ``url`` is a topic URL
    (``https://ntfy.example-corp.org/<topic>``; the topic is a secret) and ``token`` an optional
    access token; its messages carry one-tap Keep and Forget, decided as the creating admin key.
    """

    url: Annotated[str, Meta(min_length=3, max_length=2000, pattern=NO_NUL)]
    label: Label = ""
    agents: Annotated[list[AgentId], Meta(min_length=1, max_length=100)] | None = None
    kind: Literal["apprise", "ntfy"] = "apprise"
    token: Annotated[str, Meta(min_length=1, max_length=200, pattern=r"^[!-~]+" + END)] | None = (
        None
    )


class PushChannel(Struct, frozen=True, kw_only=True):
    """A channel; ``url`` is masked (apprise URLs carry secrets). ``source`` env is read-only."""

    id: str
    source: str
    url: str
    label: str
    agents: list[str] | None
    created_at: TimestampText
    kind: str = "apprise"


class PushChannelPage(Struct, frozen=True):
    """Every channel."""

    items: list[PushChannel]


class PushTestDevice(Struct, frozen=True, kw_only=True):
    """What one subscription's push service answered to the test."""

    subscription_id: str
    outcome: str
    status_code: int | None
    detail: str


class PushTestChannel(Struct, frozen=True, kw_only=True):
    """What one channel answered to the test."""

    channel_id: str
    url: str
    ok: bool
    detail: str


class PushTestResult(Struct, frozen=True, kw_only=True):
    """The test notification's outcome per device and per channel."""

    test_id: str
    devices: list[PushTestDevice]
    channels: list[PushTestChannel]
