"""Other notification channels through apprise, one isolated Apprise object per URL."""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Sequence

import apprise
import msgspec
from apprise.manager_plugins import NotificationManager

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 30.0


def mask_channel_url(url: str) -> str:
    """apprise's privacy-masked form of a channel URL; ValueError when apprise can't use it."""
    notifier = apprise.Apprise()
    try:
        added = notifier.add(url)
    except Exception as exc:  # apprise parses arbitrary user input
        raise ValueError(f"not a usable apprise URL ({type(exc).__name__})") from None
    if not added or len(notifier) == 0:
        raise ValueError("not a supported apprise URL")
    return scheme_and_host(notifier[0].url(privacy=True))


def scheme_and_host(url: str) -> str:
    """A channel URL cut to its scheme and host, safe to show anyone who may see the channel.

    Paths, queries, users and passwords never leave the server: an ntfy topic or a webhook
    path is enough to read or send every notification. A "host" without a dot is a topic or a
    token in apprise's short forms (``ntfy://topic``, ``tgram://token/chat``), so it is hidden.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "…"
    host = rest.split("/", 1)[0].split("?", 1)[0].rpartition("@")[2]
    # An IPv6 literal keeps its brackets; any other host loses its port.
    hostname = host.split("]", 1)[0] + "]" if host.startswith("[") else host.rsplit(":", 1)[0]
    # apprise's privacy form writes a masked token as "1...h": that is no host either.
    if "..." in hostname or ("." not in hostname and not hostname.startswith("[")):
        return f"{scheme}://…"
    return f"{scheme}://{hostname}"


class ChannelResult(msgspec.Struct, frozen=True):
    """One channel's outcome; ``url`` is apprise's privacy-masked form, safe to log or show."""

    url: str
    ok: bool
    detail: str


def _load_plugins() -> None:
    # apprise imports its plugins lazily on first use, which takes a blocking moment and, on
    # Python 3.11, imports the deprecated imghdr module. Do it once at import, warning silenced.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        NotificationManager().load_modules()


_load_plugins()


def _masked(url: str) -> str:
    scheme, sep, _ = url.partition("://")
    return f"{scheme}://…" if sep else "…"


async def _notify_one(url: str, title: str, body: str, timeout: float) -> ChannelResult:
    notifier = apprise.Apprise()
    try:
        added = notifier.add(url)
    except Exception as exc:  # apprise parses arbitrary user URLs; any failure is per channel
        return ChannelResult(_masked(url), False, f"invalid apprise URL: {type(exc).__name__}")
    if not added or len(notifier) == 0:
        return ChannelResult(_masked(url), False, "unsupported or malformed apprise URL")
    masked = notifier[0].url(privacy=True)
    try:
        with await notifier.async_notify(title=title, body=body, timeout=timeout) as result:
            if result:
                return ChannelResult(masked, True, "delivered")
            problems = [
                entry.message for entry in result.logs() if entry.level in ("WARNING", "ERROR")
            ]
            detail = problems[-1] if problems else f"apprise status {result.status.name}"
    except Exception as exc:  # a plugin bug must not stop the other channels
        log.warning("apprise channel %s raised %s", masked, type(exc).__name__)
        return ChannelResult(masked, False, f"apprise raised {type(exc).__name__}")
    log.warning("apprise channel %s failed: %s", masked, detail)
    return ChannelResult(masked, False, detail)


async def notify_channels(
    urls: Sequence[str], title: str, body: str, *, timeout: float = DEFAULT_TIMEOUT_SECONDS
) -> list[ChannelResult]:
    """Send ``title``/``body`` to every apprise URL concurrently; one result per URL, in order.

    Never raises for a channel's failure. The caller puts the deep link in ``body``.
    """
    if not urls:
        return []
    return list(await asyncio.gather(*(_notify_one(url, title, body, timeout) for url in urls)))
