"""Test notifications: one push to a key's devices and a message to its channels, sent now."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from credence.clock import Clock
from credence.db import channels as channels_db
from credence.db import push as push_db
from credence.db.channels import Channel
from credence.db.push import Subscription as StoredSubscription
from credence.ids import new_id
from credence.notify import ntfy, outbox, webpush
from credence.notify.channels import ChannelResult, notify_channels, scheme_and_host
from credence.notify.payload import TEST_BODY, TEST_TITLE, build_test_payload
from credence.notify.runtime import PushRuntime
from credence.notify.webpush import Outcome, Subscription
from credence.notify.worker import CONCURRENCY, SEND_TIMEOUT_SECONDS
from credence.tls import tls_context

if TYPE_CHECKING:
    from credence.db.engine import Database


@dataclass(frozen=True)
class DeviceResult:
    """One subscription's answer to a test push."""

    subscription_id: str
    outcome: str
    status_code: int | None
    detail: str


@dataclass(frozen=True)
class ChannelTestResult:
    """One channel's answer to a test message."""

    channel_id: str
    url: str
    ok: bool
    detail: str


async def send_test(
    store: Database,
    http: httpx.AsyncClient,
    runtime: PushRuntime,
    clock: Clock,
    *,
    key_id: str | None,
    agents: frozenset[str] | None,
    include_channels: bool = True,
    concurrency: int = CONCURRENCY,
    channel_timeout: float = 10.0,
) -> tuple[str, list[DeviceResult], list[ChannelTestResult]]:
    """Send a test notification now to a key's subscriptions (every key's if None) and channels.

    ``agents`` limits channels to those covering one of these agents, and the payload's pending
    count to their beliefs (None: every channel and agent); ``include_channels`` False sends to the
    key's devices only.
    Gone subscriptions are deleted, as in delivery.
    """
    test_id = new_id("test")
    subs = await store.read(lambda conn: push_db.test_targets(conn, key_id))
    channel_rows = [
        row
        for row in (await store.read(channels_db.list_channels) if include_channels else [])
        if agents is None or row.agents is None or set(row.agents) & agents
    ]
    # The count is the caller's own: a reviewer of one agent learns nothing about the others.
    count = await store.read(lambda conn: outbox.pending_count(conn, agents))
    payload = build_test_payload(pending_count=count, test_id=test_id)
    gate = asyncio.Semaphore(concurrency)

    async def one(row: StoredSubscription) -> DeviceResult:
        async with gate:
            subscription = Subscription(row.endpoint, row.p256dh, row.auth)
            result = await webpush.send(
                http,
                subscription,
                payload,
                runtime.keys,
                runtime.subject,
                ttl=3600,
                urgency="normal",
                topic=None,
                now=clock(),
                timeout=SEND_TIMEOUT_SECONDS,
            )
        return DeviceResult(row.id, result.outcome.value, result.status_code, result.detail)

    async def channel(row: Channel) -> ChannelResult:
        if row.kind != ntfy.KIND:
            [result] = await notify_channels(
                [row.url], TEST_TITLE, TEST_BODY, timeout=channel_timeout
            )
            return result
        async with httpx.AsyncClient(timeout=channel_timeout, verify=tls_context()) as client:
            sent = await ntfy.publish(
                client,
                row.url,
                row.access_token,
                ntfy.encode({"title": TEST_TITLE, "message": TEST_BODY}),
                clock(),
            )
        return ChannelResult(row.masked_url, sent.outcome is Outcome.SENT, sent.detail)

    devices, channel_results = await asyncio.gather(
        asyncio.gather(*(one(row) for row in subs)),
        asyncio.gather(*(channel(row) for row in channel_rows)),
    )
    gone = [d.subscription_id for d in devices if d.outcome == Outcome.GONE.value]
    if gone:
        await store.write(lambda conn: push_db.delete_subscriptions(conn, gone))
    channels = [
        ChannelTestResult(row.id, scheme_and_host(row.masked_url), result.ok, result.detail)
        for row, result in zip(channel_rows, channel_results, strict=True)
    ]
    return test_id, list(devices), channels
