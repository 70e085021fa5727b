"""API key and pairing models, and the health answer."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from msgspec import Meta, Struct

from credence.models.common import END, AgentId, Label, Scope, TimestampText

# "Every agent" is only ever an explicit choice: agents omitted or null. An empty list is a
# mistake, never a key for everything: the schema says minItems 1, and the domain's own check
# (which the CLI meets too) answers it with a 422 naming the rule rather than a decoding error.
AgentList = Annotated[
    Annotated[list[AgentId], Meta(max_length=100, extra_json_schema={"minItems": 1})] | None,
    Meta(
        description="The agents the key covers; omit or send null for every agent"
        " (an empty list is refused)"
    ),
]


class KeyIn(Struct, frozen=True, kw_only=True):
    """Create an API key; an agent key names exactly one agent, an admin key none."""

    json_schema_rules: ClassVar[dict[str, Any]] = {
        "if": {"properties": {"scope": {"const": "agent"}}},
        "then": {"required": ["agents"], "properties": {"agents": {"minItems": 1, "maxItems": 1}}},
        "else": {
            "if": {"properties": {"scope": {"const": "admin"}}},
            "then": {"properties": {"agents": {"anyOf": [{"type": "null"}, {"maxItems": 0}]}}},
        },
    }

    scope: Scope
    agents: AgentList = None
    label: Label = ""
    may_write: Annotated[
        bool,
        Meta(
            description="Reviewer keys only: may also post episodes, turns, proposals and"
            " imports for its agents (agent and admin keys always may; 422 for them)"
        ),
    ] = False


class KeyPatch(Struct, frozen=True, kw_only=True):
    """Grant or withdraw a reviewer key's writing (episodes, turns, proposals, imports)."""

    may_write: bool


class ApiKey(Struct, frozen=True, kw_only=True):
    """An API key's metadata (never the secret)."""

    id: str
    scope: Scope
    agents: list[str] | None
    label: str
    created_at: TimestampText
    revoked_at: TimestampText | None
    may_write: Annotated[
        bool,
        Meta(
            description="Whether the key may post episodes, turns, proposals and imports:"
            " always for agent and admin keys, for a reviewer key only when an admin granted it"
        ),
    ] = False
    write_grant_at: Annotated[
        TimestampText | None, Meta(description="When an admin last granted or withdrew it")
    ] = None
    write_grant_by: Annotated[
        str | None, Meta(description="Who did (an audit actor: key:<id> or cli)")
    ] = None


class ApiKeyCreated(Struct, frozen=True, kw_only=True):
    """A new API key; ``key`` is shown this once and never again."""

    key: str
    info: ApiKey


class ApiKeyPage(Struct, frozen=True):
    """All API keys."""

    items: list[ApiKey]


class Me(Struct, frozen=True, kw_only=True):
    """Who the caller is."""

    key_id: str
    scope: Scope
    agents: list[str] | None
    label: str
    reviewer_id: str | None = None
    reviewer_name: str = ""
    may_write: bool = False


class PairIn(Struct, frozen=True):
    """Exchange a one-time pairing code for a reviewer key."""

    code: Annotated[str, Meta(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+" + END)]


class PairingCodeIn(Struct, frozen=True, kw_only=True):
    """Create a pairing code (admin)."""

    agents: AgentList = None
    label: Label = "paired device"
    reviewer_id: Annotated[
        Annotated[str, Meta(max_length=64)] | None,
        Meta(description="The reviewer the paired device joins; omit for a new reviewer"),
    ] = None


class PairingCode(Struct, frozen=True, kw_only=True):
    """A one-time pairing code and the URL that uses it."""

    code: str
    url: str
    expires_at: TimestampText


class Health(Struct, frozen=True):
    """Liveness or readiness."""

    status: Literal["ok", "ready"]
    schema_version: int | None = None


class EmbeddingStatus(Struct, frozen=True, kw_only=True):
    """How many stored rows the configured embedding model made, and the backfill's state."""

    model: str
    beliefs: int
    beliefs_current: int
    episodes: int
    episodes_current: int
    state: str
    line: str
