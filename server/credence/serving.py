"""How uvicorn serves the app: trusted proxies only, a header deadline, log lines made safe."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from typing import Any

import uvicorn
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from credence.logs import uvicorn_log_config
from credence.settings import Settings, SettingsError, check_data_dir, redact_url


def trusted_proxies(settings: Settings) -> str:
    """CREDENCE_TRUSTED_PROXIES checked and joined for uvicorn ("" trusts nobody)."""
    for entry in settings.trusted_proxies:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise SettingsError(
                f"CREDENCE_TRUSTED_PROXIES: {entry!r} is not an IP address or CIDR"
            ) from None
    return ",".join(settings.trusted_proxies)


def header_deadline_protocol(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol, closing a connection whose request head takes over ``seconds``.

    The clock starts when the connection opens and again with the first byte after a response;
    it stops once the request line and headers are parsed (a new request cycle exists).
    uvicorn itself only times idle keep-alive connections, so a client trickling its headers
    would otherwise hold the connection forever.
    """

    class HeaderDeadlineProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        _header_timer: asyncio.TimerHandle | None = None
        _header_cycle: object = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            self._arm_header_deadline()

        def data_received(self, data: bytes) -> None:
            cycle = self.cycle
            if self._header_timer is None and (cycle is None or cycle.response_complete):
                self._arm_header_deadline()
            super().data_received(data)
            if self._header_timer is not None and self.cycle is not self._header_cycle:
                self._disarm_header_deadline()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_deadline()
            super().connection_lost(exc)

        def _arm_header_deadline(self) -> None:
            self._header_cycle = self.cycle
            self._header_timer = self.loop.call_later(seconds, self._header_deadline_passed)

        def _disarm_header_deadline(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _header_deadline_passed(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadlineProtocol


def uvicorn_config(app: Any, settings: Settings, **overrides: Any) -> uvicorn.Config:
    """The uvicorn Config for ``app``: what `credence serve` runs, and what the tests run."""
    proxies = trusted_proxies(settings)
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level.lower(),
        "log_config": uvicorn_log_config(),
        "access_log": False,
        "lifespan": "on",
        # uvicorn believes X-Forwarded-For from 127.0.0.1 unless told otherwise.
        "proxy_headers": bool(proxies),
        "forwarded_allow_ips": proxies,
        "http": header_deadline_protocol(settings.request_timeout_s),
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)


def _one_line(exc: BaseException) -> str:
    parts = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return "; ".join(parts) or type(exc).__name__


async def check_database(url: str) -> None:
    """The PostgreSQL database at ``url`` answers and its migrations apply; else SettingsError.

    A plain connection first, so an unreachable server or refused login is reported with the
    driver's reason (the pool would only say it timed out); then the store itself is opened
    and closed, which applies pending migrations under their advisory lock.
    """
    import psycopg

    from credence.db.engine import StoreError
    from credence.db.pgstore import CONNECT_TIMEOUT_S, PostgresStore

    where = redact_url(url)
    try:
        probe = await psycopg.AsyncConnection.connect(url, connect_timeout=int(CONNECT_TIMEOUT_S))
    except (psycopg.Error, ValueError) as exc:
        raise SettingsError(
            f"CREDENCE_DATABASE_URL: cannot connect to {where}: {_one_line(exc)}"
        ) from None
    await probe.close()
    store = PostgresStore(url)
    try:
        await store.open()
    except (StoreError, psycopg.Error) as exc:
        raise SettingsError(f"CREDENCE_DATABASE_URL ({where}): {_one_line(exc)}") from None
    await store.close()


def check_startup(settings: Settings) -> None:
    """Before the server starts: the data dir and database are usable, push can sign.

    Raises SettingsError naming the variable, so `credence serve` fails in one line instead of
    a traceback from inside the server's start-up.
    """
    from credence.notify.channels import mask_channel_url
    from credence.notify.runtime import check_settings

    check_data_dir(settings.data_dir)
    if settings.database_url:
        asyncio.run(check_database(settings.database_url))
    if settings.pwa_dir is not None and not settings.pwa_dir.is_dir():
        raise SettingsError(f"CREDENCE_PWA_DIR must be a directory, got {str(settings.pwa_dir)!r}")
    apprise_log = logging.getLogger("apprise")
    quiet, apprise_log.disabled = apprise_log.disabled, True  # our one line says it instead
    try:
        for position, url in enumerate(settings.apprise_urls, start=1):
            try:
                mask_channel_url(url)
            except ValueError as exc:
                # Never the URL itself: apprise URLs carry their service's credentials.
                raise SettingsError(f"CREDENCE_APPRISE_URLS entry {position}: {exc}") from None
    finally:
        apprise_log.disabled = quiet
    # The subject and any supplied key; the key pair itself is made in the database at start-up.
    check_settings(settings)
