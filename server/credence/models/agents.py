"""Agent models: create, patch and list agents and their reflection settings."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta, Struct

from credence.models.common import (
    CRON_PATTERN,
    SLUG_PATTERN,
    AgentId,
    Label,
    ReflectorName,
    ShortText,
    TimestampText,
)


class ReflectionSettings(Struct, frozen=True, kw_only=True):
    """How and when an agent's episodes are reflected on."""

    enabled: bool = True
    cron: Annotated[
        str, Meta(max_length=100, pattern=CRON_PATTERN, description="5-field cron, UTC")
    ] = "0 3 * * *"
    lambda_per_day: Annotated[float, Meta(ge=0.0, le=10.0)] = 0.02
    max_diffs: Annotated[int, Meta(ge=1, le=10)] = 10
    recall_k: Annotated[int, Meta(ge=1, le=200)] = 50
    recall_queries: Annotated[list[ShortText], Meta(max_length=20)] = msgspec.field(
        default_factory=list
    )
    reflector: ReflectorName | None = None


class AgentIn(Struct, frozen=True, kw_only=True):
    """Create an agent."""

    id: AgentId
    name: Label
    roles: Annotated[list[Annotated[str, Meta(pattern=SLUG_PATTERN)]], Meta(max_length=50)] = (
        msgspec.field(default_factory=list)
    )
    reflection: ReflectionSettings = msgspec.field(default_factory=ReflectionSettings)


class AgentPatch(Struct, frozen=True, kw_only=True):
    """Update an agent; absent fields stay as they are."""

    name: Label | None = None
    roles: (
        Annotated[list[Annotated[str, Meta(pattern=SLUG_PATTERN)]], Meta(max_length=50)] | None
    ) = None
    reflection: ReflectionSettings | None = None


class Agent(Struct, frozen=True, kw_only=True):
    """An agent whose memory Credence keeps."""

    id: str
    name: str
    roles: list[str]
    reflection: ReflectionSettings
    created_at: TimestampText
    updated_at: TimestampText
    stored_episode_chars: Annotated[
        int,
        Meta(
            description=(
                "Characters of episode text stored for this agent, counted against"
                " CREDENCE_EPISODE_QUOTA_MB"
            )
        ),
    ] = 0


class AgentPage(Struct, frozen=True):
    """A page of agents."""

    items: list[Agent]
    next_cursor: str | None = None
