"""The background parts the app starts with its services, wired from the services' parts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from credence.memory.read.context import ContextService, flushing_injections
from credence.memory.semantics.backfill import Backfill, running_backfill
from credence.notify import weekly
from credence.notify.component import running_push
from credence.notify.runtime import PushRuntime
from credence.notify.worker import LEASE_SECONDS
from credence.services import Component, Services


def context_component(interval_s: float = 0.5) -> Component:
    """The context service's injection flusher, stopped (and flushed) before the store."""

    @asynccontextmanager
    async def component(services: Services) -> AsyncIterator[ContextService]:
        async with flushing_injections(services.context, interval_s) as service:
            yield service

    return component


def push_component(
    *, lease_seconds: float = LEASE_SECONDS, weekly_figures: weekly.Figures | None = None
) -> Component:
    """Push delivery (see ``notify.component.running_push``), hooked to the belief service."""

    @asynccontextmanager
    async def component(services: Services) -> AsyncIterator[PushRuntime]:
        async with running_push(
            services.push,
            services.clock,
            services.hooks.in_txn_pending,
            services.hooks.after_pending,
            lease_seconds=lease_seconds,
            weekly_figures=weekly_figures,
        ) as runtime:
            yield runtime

    return component


def backfill_component() -> Component:
    """The embedding backfill as a background task of every replica, cancelled at shutdown."""

    @asynccontextmanager
    async def component(services: Services) -> AsyncIterator[Backfill]:
        backfill = Backfill(services.store, services.embedder, services.clock)
        services.backfill = backfill
        async with running_backfill(backfill):
            yield backfill

    return component
