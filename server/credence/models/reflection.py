"""Reflection models: jobs, their steps and output, search, events and wakes."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import Meta, Struct

from credence.models.common import (
    CRON_PATTERN,
    NO_NUL,
    SLUG_PATTERN,
    AgentId,
    BeliefOp,
    ReflectorName,
    ShortText,
    Timestamp,
    TimestampText,
)
from credence.models.episodes import Episode
from credence.models.reasons import StructuredReason

WorkflowId = Literal["agent-reflection"]
JobStatus = Literal["queued", "running", "succeeded", "failed"]
JobTrigger = Literal["cron", "event", "manual"]
StepName = Literal["pull", "propose", "check", "submit"]
StepStatus = Literal["pending", "running", "succeeded", "failed"]
GateVerdict = Literal["safe", "needs_review", "duplicate"]
WakeKind = Literal["cron", "event"]
WakeId = Annotated[str, Meta(pattern=SLUG_PATTERN, description="Wake slug: a-z, 0-9, _ and -")]
EventName = Annotated[str, Meta(pattern=SLUG_PATTERN, description="Event slug")]
CronExpression = Annotated[
    str, Meta(min_length=9, max_length=100, pattern=CRON_PATTERN, description="5-field cron, UTC")
]
MAX_STUB_OUTPUT = 200_000


class JobInputIn(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a reflection job works on; everything but ``agent_id`` is optional.

    ``stub_output`` goes with the stub reflector (which it selects when ``reflector`` is absent).
    """

    json_schema_rules: ClassVar[dict[str, Any]] = {
        "if": {"required": ["stub_output"], "properties": {"stub_output": {"type": "string"}}},
        "then": {"properties": {"reflector": {"enum": ["stub", None]}}},
        "else": {"properties": {"reflector": {"enum": ["heuristic", "llm", None]}}},
    }

    agent_id: AgentId
    reflector: ReflectorName | None = None
    stub_output: (
        Annotated[
            str,
            Meta(
                max_length=MAX_STUB_OUTPUT,
                pattern=NO_NUL,
                description="Raw model text the stub reflector returns verbatim",
            ),
        ]
        | None
    ) = None
    now: Annotated[
        Timestamp | None, Meta(description="Pin the job's clock (decay, timestamps) to this time")
    ] = None
    since: Annotated[
        Timestamp | None, Meta(description="Only episodes finished at or after this time")
    ] = None


class JobInput(Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A job's stored input: what it was submitted with (timestamps normalised to UTC)."""

    agent_id: str
    reflector: ReflectorName | None = None
    stub_output: str | None = None
    now: TimestampText | None = None
    since: TimestampText | None = None


class JobIn(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Submit a job."""

    workflow_id: WorkflowId
    input_data: JobInputIn


class JobStep(Struct, frozen=True, kw_only=True):
    """One step of a job, with its timing and error."""

    name: StepName
    status: StepStatus
    started_at: TimestampText | None
    finished_at: TimestampText | None
    duration_ms: float | None
    error: str | None


class JobResult(Struct, frozen=True, kw_only=True):
    """What the gate and the proposals logic made of one proposal."""

    index: int
    op: BeliefOp
    belief: str
    confidence: float
    gate: GateVerdict
    reasons: Annotated[
        list[str],
        Meta(
            description="Deprecated: the gate's reasons as strings (`kind`, `kind:target` or"
            " `changes:target:old→new`); read `structured_reasons` instead."
        ),
    ]
    accepted: bool
    belief_id: str | None
    rejected_reason: Annotated[
        str | None,
        Meta(description="Deprecated: why it was not submitted, as a string; read `rejected`."),
    ]
    structured_reasons: Annotated[
        list[StructuredReason],
        Meta(
            description="The gate's reasons: each one's `kind`, the belief id (or proposal"
            " index) it is about in `target`, and for `changes` the value that changed."
        ),
    ] = msgspec.field(default_factory=list)
    rejected: Annotated[
        StructuredReason | None,
        Meta(description="Why it was not submitted (null when it was), as a structured reason."),
    ] = None


class JobDropped(Struct, frozen=True, kw_only=True):
    """An entry of the reflector's answer that was invalid on its own."""

    index: int
    reason: str


class JobDecayed(Struct, frozen=True, kw_only=True):
    """An active belief whose confidence decayed noticeably (report only)."""

    belief_id: str
    confidence: float
    decayed_confidence: float
    age_days: float


class JobPartial(Struct, frozen=True, kw_only=True):
    """Why a run covered less than it pulled; omitted episodes stay un-reflected."""

    reason: str
    detail: str
    episodes_omitted: int


class JobUsage(Struct, frozen=True, kw_only=True):
    """The model calls a run made (llm reflector only)."""

    attempts: int
    prompt_tokens: int
    completion_tokens: int
    token_cap: int
    finish_reason: str | None


class JobOutput(Struct, frozen=True, kw_only=True):
    """A finished job's result; ``results`` line up with the reflector's valid proposals."""

    episodes_considered: int
    proposed: int
    results: list[JobResult]
    dropped: list[JobDropped]
    decayed: list[JobDecayed]
    reflector: str
    partial: JobPartial | None = None
    usage: JobUsage | None = None


class Job(Struct, frozen=True, kw_only=True):
    """A run of a workflow for one agent."""

    id: str
    workflow_id: WorkflowId
    agent_id: str
    trigger: JobTrigger
    window_key: str | None
    wake_id: str | None
    status: JobStatus
    steps: list[JobStep]
    input_data: JobInput
    output_data: JobOutput | None
    error: str | None
    attempts: int
    created_at: TimestampText
    started_at: TimestampText | None
    finished_at: TimestampText | None
    updated_at: TimestampText


class JobPage(Struct, frozen=True):
    """A page of jobs, newest first."""

    items: list[Job]
    next_cursor: str | None = None


class SearchIn(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Recall search over an agent's episodes."""

    queries: Annotated[list[ShortText], Meta(min_length=1, max_length=20)]
    k: Annotated[int, Meta(ge=1, le=200)] = 10
    since: Annotated[
        Timestamp | None, Meta(description="Only episodes finished at or after this time")
    ] = None
    reflected: Annotated[
        bool | None, Meta(description="Only reflected (true) or un-reflected (false) episodes")
    ] = None
    include_untrusted: Annotated[
        bool, Meta(description="Include episodes third-party content reached")
    ] = True


class SearchHit(Struct, frozen=True, kw_only=True):
    """One recalled episode; ``score`` is the fused reciprocal-rank score."""

    episode: Episode
    score: float
    text_rank: int | None
    vector_rank: int | None
    cosine: float | None


class SearchResult(Struct, frozen=True):
    """Episodes ranked best first."""

    items: list[SearchHit]


class EventIn(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Tell Credence something happened, e.g. reflection-episodes-ready for an agent."""

    name: EventName
    agent_id: AgentId


class EventAccepted(Struct, frozen=True, kw_only=True):
    """The jobs an event submitted (or found already queued)."""

    name: str
    agent_id: str
    wakes: list[str]
    jobs: list[Job]


class WakeInput(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Job input a wake adds to what it submits."""

    reflector: ReflectorName | None = None


class WakeIn(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Create a wake: ``cron`` (on a schedule) or ``event`` (on a named event, no schedule)."""

    json_schema_rules: ClassVar[dict[str, Any]] = {
        "if": {"properties": {"kind": {"const": "event"}}},
        "then": {
            "required": ["event"],
            "properties": {"event": {"type": "string"}, "cron": {"type": "null"}},
        },
        "else": {"properties": {"event": {"type": "null"}}},
    }

    id: WakeId
    kind: WakeKind
    cron: Annotated[
        CronExpression | None,
        Meta(description="cron wakes: the schedule (UTC); null follows each agent's own cron"),
    ] = None
    event: Annotated[EventName | None, Meta(description="event wakes: the event name")] = None
    agent_ids: Annotated[
        Annotated[list[AgentId], Meta(max_length=100)] | None,
        Meta(description="Only these agents (null: every agent with reflection enabled)"),
    ] = None
    enabled: bool = True
    description: Annotated[str, Meta(max_length=500, pattern=NO_NUL)] = ""
    input_data: Annotated[
        WakeInput | None, Meta(description="Defaults for the jobs this wake submits")
    ] = None


class WakePatch(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Edit a wake; absent fields stay as they are (send ``agent_ids: null`` via ``all_agents``)."""

    json_schema_rules: ClassVar[dict[str, Any]] = {
        "not": {
            "anyOf": [
                {
                    "required": ["cron", "follow_agent_cron"],
                    "properties": {
                        "cron": {"type": "string"},
                        "follow_agent_cron": {"const": True},
                    },
                },
                {
                    "required": ["agent_ids", "all_agents"],
                    "properties": {"agent_ids": {"type": "array"}, "all_agents": {"const": True}},
                },
            ]
        }
    }

    cron: CronExpression | None = None
    follow_agent_cron: bool | None = None
    event: EventName | None = None
    agent_ids: Annotated[list[AgentId], Meta(max_length=100)] | None = None
    all_agents: bool | None = None
    enabled: bool | None = None
    description: Annotated[str, Meta(max_length=500, pattern=NO_NUL)] | None = None
    input_data: WakeInput | None = None


class Wake(Struct, frozen=True, kw_only=True):
    """A wake that submits reflection jobs."""

    id: str
    kind: WakeKind
    workflow_id: WorkflowId
    cron: str | None
    event: str | None
    agent_ids: list[str] | None
    enabled: bool
    description: str
    input_data: WakeInput
    created_at: TimestampText
    updated_at: TimestampText
    last_fired_at: TimestampText | None
    next_fire_at: TimestampText | None


class WakePage(Struct, frozen=True):
    """Every wake."""

    items: list[Wake]
