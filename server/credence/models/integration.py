"""Integration models: the memory context, conversation turns and the export."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from msgspec import Meta, Struct

from credence.models.common import (
    NO_NUL,
    WHITESPACE,
    BeliefOp,
    BeliefStatus,
    Provenance,
    Timestamp,
    TimestampText,
)
from credence.models.report import MemoryReport


class NoteWhy(Struct, frozen=True, kw_only=True):
    """Why a query chose a note: the signals and the fused score they made.

    ``dense`` is the cosine between the query and the note under the sentence model (null
    when the embedder was unavailable), ``keyword`` the note's BM25 for the query scaled to
    0..1 by the best note's (null when keywords had no part in the ranking: cosine ranked and
    the keyword weight is 0, so it was not computed), ``confidence`` its decayed confidence.
    """

    score: float
    dense: float | None
    keyword: float | None
    confidence: float


class MemoryNote(Struct, frozen=True, kw_only=True):
    """An active belief served to the agent, with its confidence decayed to now.

    ``for_query`` is true when the request's query chose the note (by meaning first, see
    ``why``); the others are the most confident notes filling the remaining places and have
    no ``why``.
    """

    belief_id: str
    content: str
    confidence: float
    decayed_confidence: float
    for_query: bool = False
    why: NoteWhy | None = None


class RelevantEpisode(Struct, frozen=True, kw_only=True):
    """A recent episode recall search found relevant to the query.

    ``corrections`` are the user's own words from the episode's interventions (the prompt
    block shows them with the summary).
    """

    episode_id: str
    summary: str
    finished_at: TimestampText
    score: float
    corrections: list[str] = msgspec.field(default_factory=list)


class MemoryContext(Struct, frozen=True, kw_only=True):
    """What an agent reads back: reviewed notes, relevant episodes, and the prompt block."""

    memory_notes: list[MemoryNote]
    recent_relevant_episodes: list[RelevantEpisode]
    prompt_block: str


# The roles (and aliases) a turn message may name; memory.turns maps them to user, assistant…
ROLE_NAMES = (
    "user",
    "human",
    "assistant",
    "ai",
    "model",
    "system",
    "developer",
    "tool",
    "function",
    "ipython",
)
# OpenAI Responses items name their kind in ``type`` instead of a role.
ITEM_TYPES = (
    "function_call_output",
    "custom_tool_call_output",
    "computer_call_output",
    "reasoning",
)
# A turn is worth an episode only when some user message has words.
USER_MESSAGE_WITH_WORDS = {
    "type": "object",
    "required": ["role", "content"],
    "properties": {
        "role": {"enum": ["user", "human"]},
        "content": {"type": "string", "pattern": f"[^{WHITESPACE}]"},
    },
}
# A content part: text, or an object such as {"type": "text", "text": ...}; nulls are skipped.
ContentPart = str | dict[str, Any] | None


class TurnMessageIn(Struct, frozen=True, kw_only=True):
    """One message of a turn, in any of the shapes the common agent frameworks use.

    ``role`` is user, assistant, tool or system (or an alias: human, ai, model, developer,
    function); OpenAI Responses items name their kind in ``type`` instead. ``content`` is a
    string, a list of content parts (OpenAI, Anthropic blocks) or null; Gemini sends ``parts``.
    Other fields are ignored.
    """

    json_schema_rules: ClassVar[dict[str, Any]] = {
        "if": {"properties": {"role": {"type": "null"}}},
        "then": {
            "required": ["type"],
            "properties": {
                "type": {"anyOf": [{"enum": [*ROLE_NAMES, *ITEM_TYPES]}, {"pattern": "_call$"}]}
            },
        },
        "else": {"properties": {"role": {"enum": list(ROLE_NAMES)}}},
    }

    role: Annotated[str, Meta(max_length=40)] | None = None
    type: Annotated[str, Meta(max_length=100)] | None = None
    content: str | Annotated[list[ContentPart], Meta(max_length=1000)] | dict[str, Any] | None = (
        None
    )
    parts: Annotated[list[ContentPart], Meta(max_length=1000)] | None = None
    name: Annotated[str, Meta(max_length=1000)] | None = None
    tool_calls: Annotated[list[dict[str, Any]], Meta(max_length=1000)] | None = None
    tool_call_id: Annotated[str, Meta(max_length=1000)] | None = None
    call_id: Annotated[str, Meta(max_length=1000)] | None = None
    function_call: dict[str, Any] | None = None
    refusal: Annotated[str, Meta(max_length=20000)] | None = None


class TurnIn(Struct, frozen=True, kw_only=True):
    """A finished turn as the agent framework has it; the server derives the episode."""

    session_id: Annotated[str, Meta(min_length=1, max_length=200, pattern=NO_NUL)]
    messages: Annotated[
        list[TurnMessageIn],
        Meta(
            min_length=1, max_length=2000, extra_json_schema={"contains": USER_MESSAGE_WITH_WORDS}
        ),
    ]
    role_label: Annotated[str, Meta(max_length=64, pattern=NO_NUL)] | None = None
    finished_at: Timestamp | None = None
    metadata: Annotated[dict[Annotated[str, Meta(max_length=100)], Any], Meta(max_length=40)] = (
        msgspec.field(default_factory=dict)
    )


class AuditSummary(Struct, frozen=True, kw_only=True):
    """A belief's audit trail in brief; the full chain is at /beliefs/{id}/audit."""

    events: int
    proposed_at: TimestampText | None
    last_action: str | None
    last_actor: str | None
    last_at: TimestampText | None
    last_row_hash: str | None


class ExportedBelief(Struct, frozen=True, kw_only=True):
    """One active (or superseded) belief in an export, with its origin and who decided on it."""

    id: str
    role: str | None
    content: str
    status: BeliefStatus
    superseded_by: str | None
    confidence: float
    provenance: Provenance
    op: BeliefOp
    source_episodes: list[str]
    version: int
    created_at: TimestampText
    updated_at: TimestampText
    decided_by: str | None
    decided_at: TimestampText | None
    injection_count: int
    last_injected_at: TimestampText | None
    audit: AuditSummary


class MemoryExport(Struct, frozen=True, kw_only=True):
    """An agent's active memory, for backups and for agents that load memory from a file."""

    format_version: int
    agent_id: str
    agent_name: str
    exported_at: TimestampText
    beliefs: list[ExportedBelief]
    report: MemoryReport | None = None
