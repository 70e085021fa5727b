"""apprise channels: 'env' ones mirror CREDENCE_APPRISE_URLS, 'admin' ones come from the API."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Literal

from credence.db.engine import Connection, for_update, placeholders
from credence.db.push import json_has
from credence.db.records import Record
from credence.errors import Conflict, NotFound


class Channel(Record, frozen=True, kw_only=True):
    """One push_channels row, read or to add; ``url`` holds the service's credentials, never
    shown. ``agents`` None covers every agent."""

    JSON_FIELDS = frozenset({"agents"})

    id: str
    source: Literal["env", "admin"]
    url: str
    url_hash: str
    masked_url: str
    label: str
    agents: list[str] | None
    created_at: str
    kind: Literal["apprise", "ntfy"] = "apprise"
    # ntfy: the server's access token, and the admin key its Keep/Forget actions decide as.
    access_token: str | None = None
    key_id: str | None = None


CHANNEL_COLUMNS = Channel.columns()


async def list_channels(conn: Connection) -> list[Channel]:
    """Every channel, by id."""
    return Channel.from_rows(
        await conn.rows(f"SELECT {CHANNEL_COLUMNS} FROM push_channels ORDER BY id")
    )


async def channels_for_agent(conn: Connection, agent_id: str) -> list[str]:
    """The ids of the channels that get notifications about ``agent_id``."""
    found = await conn.rows(
        f"SELECT id FROM push_channels WHERE agents IS NULL OR {json_has(conn, 'agents', 'agent')}"
        " ORDER BY id",
        {"agent": agent_id},
    )
    return [row["id"] for row in found]


async def _insert(conn: Connection, channel: Channel) -> bool:
    inserted = await conn.run(
        f"INSERT INTO push_channels({CHANNEL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (url_hash) DO NOTHING",
        (
            channel.id,
            channel.source,
            channel.url,
            channel.url_hash,
            channel.masked_url,
            channel.label,
            json.dumps(list(channel.agents)) if channel.agents else None,
            channel.created_at,
            channel.kind,
            channel.access_token,
            channel.key_id,
        ),
    )
    return bool(inserted)


async def create_channel(conn: Connection, channel: Channel) -> Channel:
    """Add an admin channel and return its row; NotFound for an unknown agent, Conflict for a URL
    that is configured already."""
    agents = sorted(set(channel.agents or ()))
    if agents:
        known = await conn.rows(
            f"SELECT id FROM agents WHERE id IN ({placeholders(len(agents))})", tuple(agents)
        )
        missing = sorted(set(agents) - {row["id"] for row in known})
        if missing:
            raise NotFound(f"agent {missing[0]!r} not found")
    if not await _insert(conn, channel):
        raise Conflict("this channel URL is already configured")
    row = await conn.one(f"SELECT {CHANNEL_COLUMNS} FROM push_channels WHERE id = ?", (channel.id,))
    return Channel.from_row(row)


async def delete_admin_channel(conn: Connection, channel_id: str) -> None:
    """Remove an admin channel; NotFound, or Conflict for one from CREDENCE_APPRISE_URLS."""
    row = await conn.one(
        f"SELECT source FROM push_channels WHERE id = ?{for_update(conn)}", (channel_id,)
    )
    if row is None:
        raise NotFound(f"channel {channel_id!r} not found")
    if row["source"] == "env":
        raise Conflict("this channel comes from CREDENCE_APPRISE_URLS; remove it there")
    await conn.run("DELETE FROM push_channels WHERE id = ?", (channel_id,))


async def sync_env_channels(conn: Connection, wanted: Mapping[str, Channel]) -> None:
    """Make the 'env' channels exactly ``wanted`` (by URL hash); replicas may run this at once."""
    existing = {
        row["url_hash"]: row["id"]
        for row in await conn.rows(
            f"SELECT id, url_hash FROM push_channels WHERE source = 'env'{for_update(conn)}"
        )
    }
    for digest, channel_id in existing.items():
        if digest not in wanted:
            await conn.run("DELETE FROM push_channels WHERE id = ?", (channel_id,))
    for digest, channel in wanted.items():
        if digest in existing:
            continue
        # An admin channel with the same URL becomes the env one: one URL, one message.
        await conn.run(
            "DELETE FROM push_channels WHERE url_hash = ? AND source = 'admin'", (digest,)
        )
        await _insert(conn, channel)


async def channel_kind(conn: Connection, channel_id: str) -> tuple[str, str | None] | None:
    """(kind, the key its actions decide as) of a channel; None when it is gone."""
    row = await conn.one("SELECT kind, key_id FROM push_channels WHERE id = ?", (channel_id,))
    return None if row is None else (row["kind"], row["key_id"])
