"""The push app component: VAPID keys, the outbox hook on new pending beliefs, the worker."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from credence.notify import outbox
from credence.notify.channels import mask_channel_url
from credence.notify.runtime import PushRuntime, load_runtime, push_http_of, set_runtime
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
    from credence.services import Services

log = logging.getLogger(__name__)


def push_component(
    *,
    concurrency: int = CONCURRENCY,
    lease_seconds: float = LEASE_SECONDS,
    poll_seconds: float = POLL_SECONDS,
    send_timeout: float = SEND_TIMEOUT_SECONDS,
    drain_seconds: float = DRAIN_SECONDS,
) -> Callable[[Services], Any]:
    """A Component: VAPID keys, the outbox hook on new pending beliefs, and the delivery worker.

    Start-up fails with a SettingsError naming CREDENCE_VAPID_SUBJECT (or the key setting)
    when push could never work, rather than failing every send later.
    """

    @asynccontextmanager
    async def component(services: Services) -> AsyncIterator[PushRuntime]:
        settings = services.settings
        for url in settings.apprise_urls:
            try:
                mask_channel_url(url)
            except ValueError as exc:
                raise SettingsError(f"CREDENCE_APPRISE_URLS has an unusable URL: {exc}") from None
        runtime = await load_runtime(settings, services.store)
        worker = PushWorker(
            services.store,
            push_http_of(services),
            services.clock,
            runtime.keys,
            runtime.subject,
            concurrency=concurrency,
            lease_seconds=lease_seconds,
            poll_seconds=poll_seconds,
            send_timeout=send_timeout,
        )
        runtime.worker = worker
        await outbox.sync_env_channels(
            services.store, settings.apprise_urls, mask_channel_url, services.clock()
        )
        config = outbox.OutboxConfig(
            secret=runtime.secret,
            ttl_seconds=settings.push_ttl_s,
            base_url=settings.base_url,
            clock=services.clock,
        )
        hook = outbox.pending_hook(config, worker.wake)
        services.hooks.in_txn_pending.append(hook)
        wake_on_change = _wake_on_change(worker)
        services.hooks.after_change.append(wake_on_change)
        set_runtime(services, runtime)
        await worker.start()
        log.info("push: VAPID key %s (%s)", runtime.keys.public_key_b64url, runtime.keys.source)
        try:
            yield runtime
        finally:
            services.hooks.in_txn_pending.remove(hook)
            services.hooks.after_change.remove(wake_on_change)
            await worker.stop(drain_seconds)

    return component


def _wake_on_change(worker: PushWorker) -> Callable[[str], None]:
    def wake(_agent_id: str) -> None:
        worker.wake()

    return wake
