"""The push app component: VAPID keys, the outbox hook on new pending beliefs, the worker."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from credence.clock import Clock
from credence.notify import outbox, review, weekly
from credence.notify.channels import mask_channel_url
from credence.notify.runtime import PushParts, PushRuntime, load_runtime
from credence.notify.worker import (
    CONCURRENCY,
    DRAIN_SECONDS,
    LEASE_SECONDS,
    POLL_SECONDS,
    SEND_TIMEOUT_SECONDS,
    PushWorker,
)
from credence.settings import SettingsError

if TYPE_CHECKING:
    from credence.db.beliefs import ChangeHook, PendingHook

log = logging.getLogger(__name__)


@asynccontextmanager
async def running_push(
    parts: PushParts,
    clock: Clock,
    pending_hooks: list[PendingHook],
    committed_hooks: list[ChangeHook],
    *,
    concurrency: int = CONCURRENCY,
    lease_seconds: float = LEASE_SECONDS,
    poll_seconds: float = POLL_SECONDS,
    send_timeout: float = SEND_TIMEOUT_SECONDS,
    drain_seconds: float = DRAIN_SECONDS,
    weekly_figures: weekly.Figures | None = None,
) -> AsyncIterator[PushRuntime]:
    """VAPID keys, the outbox hook on new pending beliefs, and the delivery worker, running.

    The ledger hook joins ``pending_hooks`` (run inside the transaction that makes a belief
    pending) and a planner wake-up joins ``committed_hooks`` (run after that transaction
    commits, so the planner reads what it wrote), both removed on the way out. Start-up
    fails with a SettingsError naming CREDENCE_VAPID_SUBJECT (or the key setting) when push
    could never work, rather than failing every send later. With ``weekly_figures`` (the
    report of an agent's week), each reviewer also gets the weekly report digest.
    """
    settings, store = parts.settings, parts.store
    for url in settings.apprise_urls:
        try:
            mask_channel_url(url)
        except ValueError as exc:
            raise SettingsError(f"CREDENCE_APPRISE_URLS has an unusable URL: {exc}") from None
    runtime = await load_runtime(settings, store)
    worker = PushWorker(
        store,
        parts.http,
        clock,
        runtime.keys,
        runtime.subject,
        concurrency=concurrency,
        lease_seconds=lease_seconds,
        poll_seconds=poll_seconds,
        send_timeout=send_timeout,
    )
    runtime.worker = worker
    await outbox.sync_env_channels(store, settings.apprise_urls, mask_channel_url, clock())
    config = outbox.OutboxConfig(
        secret=runtime.secret,
        ttl_seconds=settings.push_ttl_s,
        base_url=settings.base_url,
        clock=clock,
    )
    # A new pending belief enters its recipients' ledgers; the planner applies each one's
    # policy (digest, quiet hours, reminders) and queues the pushes the worker sends.
    planner = review.ReviewPlanner(store, config, worker.wake)
    runtime.planner = planner
    hook = review.pending_hook(clock)
    pending_hooks.append(hook)
    wake_planner = _wake_planner(planner)
    committed_hooks.append(wake_planner)
    digests = (
        weekly.WeeklyDigests(store, config, weekly_figures, worker.wake)
        if weekly_figures is not None
        else None
    )
    parts.runtime = runtime
    await worker.start()
    await planner.start()
    if digests is not None:
        await digests.start()
    log.info("push: VAPID key %s (%s)", runtime.keys.public_key_b64url, runtime.keys.source)
    try:
        yield runtime
    finally:
        pending_hooks.remove(hook)
        committed_hooks.remove(wake_planner)
        if digests is not None:
            await digests.stop()
        await planner.stop()
        await worker.stop(drain_seconds)


def _wake_planner(planner: review.ReviewPlanner) -> Callable[[str], None]:
    def wake(_agent_id: str) -> None:
        planner.wake()

    return wake
