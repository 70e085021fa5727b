"""Episode models: what an agent did, and the interventions a human made."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from credence.models.common import NO_NUL, Origin, ShortText, Timestamp, TimestampText, Trigger


class InterventionIn(Struct, frozen=True):
    """A user's intervention during the turn, in the user's own words."""

    trigger: Trigger
    text: ShortText


class EpisodeIn(Struct, frozen=True, kw_only=True):
    """One finished turn of an agent."""

    session_id: Annotated[str, Meta(min_length=1, max_length=200, pattern=NO_NUL)]
    summary: Annotated[str, Meta(min_length=1, max_length=20000, pattern=NO_NUL)]
    role_label: Annotated[str, Meta(max_length=64, pattern=NO_NUL)] | None = None
    finished_at: Timestamp | None = None
    interventions: Annotated[list[InterventionIn], Meta(max_length=50)] = msgspec.field(
        default_factory=list
    )
    origin: Origin = "clean"
    metadata: Annotated[dict[Annotated[str, Meta(max_length=100)], Any], Meta(max_length=50)] = (
        msgspec.field(default_factory=dict)
    )


class EpisodeBatchIn(Struct, frozen=True):
    """Up to 500 episodes at once."""

    episodes: Annotated[list[EpisodeIn], Meta(min_length=1, max_length=500)]


class Intervention(Struct, frozen=True):
    """A stored intervention."""

    trigger: Trigger
    text: str


class Episode(Struct, frozen=True, kw_only=True):
    """A stored (redacted) episode."""

    id: str
    agent_id: str
    session_id: str
    role_label: str | None
    finished_at: TimestampText
    summary: str
    interventions: list[Intervention]
    origin: Origin
    untrusted_reasons: list[str]
    metadata: dict[str, Any]
    redactions: int
    reflected_at: TimestampText | None
    created_at: TimestampText


class EpisodeCreated(Struct, frozen=True):
    """The answer to posting one episode."""

    episode: Episode
    redacted: int


class EpisodeBatchCreated(Struct, frozen=True):
    """The answer to posting a batch of episodes."""

    ids: list[str]
    redacted: int


class EpisodePage(Struct, frozen=True):
    """A page of episodes, oldest first."""

    items: list[Episode]
    next_cursor: str | None = None
