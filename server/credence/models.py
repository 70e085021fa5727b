"""msgspec Structs that form the API contract: ``XIn`` for input, frozen ``X`` for output."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import Meta, Struct

# Every string a client sends is bounded and free of NUL bytes; ids follow one slug grammar.
# Whole-string patterns end in (?!\n)$: in Python's re, which msgspec and Litestar match with,
# a bare $ also matches before a final newline, so "gamma\n" would pass as an id. The
# lookahead is valid ECMA-262 too, so the OpenAPI document says exactly what the server checks.
END = r"(?!\n)$"
SLUG_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}" + END
ID_PATTERN = r"^[a-z]{1,4}_[0-9a-z]{26}" + END
NO_NUL = r"^[^\x00]*$"
MAX_SAFE_INT = 2**53

AgentId = Annotated[str, Meta(pattern=SLUG_PATTERN, description="Agent slug: a-z, 0-9, _ and -")]
ObjectId = Annotated[str, Meta(pattern=ID_PATTERN, max_length=31)]
Label = Annotated[str, Meta(max_length=200, pattern=NO_NUL)]
ShortText = Annotated[str, Meta(max_length=2000, pattern=NO_NUL)]
# A belief has a visible character and no NUL anywhere (\S alone would match a NUL).
BeliefText = Annotated[
    str, Meta(min_length=1, max_length=2000, pattern=r"^[^\x00]*[^\x00\s][^\x00]*$")
]
Timestamp = Annotated[datetime, Meta(tz=True, description="RFC 3339 date-time with an offset")]
# Stored timestamps go out as the RFC 3339 text they are kept as (clock.rfc3339).
TimestampText = Annotated[str, Meta(extra_json_schema={"format": "date-time"})]
Confidence = Annotated[float, Meta(ge=0.0, le=1.0)]
Trigger = Literal["steer", "denial", "followup"]
Origin = Literal["clean", "untrusted"]
Provenance = Literal["clean", "untrusted", "owner", "unsourced"]
BeliefStatus = Literal["pending", "active", "forgotten", "superseded"]
BeliefOp = Literal["add", "strengthen", "weaken", "forget", "supersede"]
Scope = Literal["admin", "reviewer", "agent"]
# Rules that span fields go in a Struct's ``json_schema_rules``, merged into its schema by
# openapi_doc (the handlers enforce them with a 422). They use if/then/else and not, which fuzzers
# follow and client generators ignore: a oneOf would split the generated model into variants.
ReflectorName = Literal["heuristic", "llm", "stub"]


def _cron_field(value: str, *alone: str) -> str:
    """One cron field: a list of values, ranges and steps, or one of the ``alone`` tokens."""
    item = rf"(?:\*|{value}(?:-{value})?)(?:/[1-9][0-9]?)?"
    return "(?:" + "|".join([rf"{item}(?:,{item})*", *alone]) + ")"


def _names(*names: str) -> str:
    return "|".join([*names, *(name.upper() for name in names)])


_DAYS = _names("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_MONTHS = _names(
    *["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
)
# Five cron fields (minute hour day-of-month month day-of-week) with values in range: stars,
# numbers and names, ranges, steps, lists, and croniter's ? L and # alone. A schedule with no fire
# time (31 February) still parses; the server refuses it with a 422.
CRON_PATTERN = (
    "^"
    + " ".join(
        (
            _cron_field("(?:[0-9]|[1-5][0-9])"),
            _cron_field("(?:[0-9]|1[0-9]|2[0-3])"),
            _cron_field("(?:[1-9]|[12][0-9]|3[01])", r"\?", "L"),
            _cron_field(f"(?:[1-9]|1[0-2]|{_MONTHS})"),
            _cron_field(f"(?:[0-7]|{_DAYS})", r"\?", "[0-7]#[1-5]"),
        )
    )
    + END
)


class ValidationIssue(Struct, frozen=True, kw_only=True):
    """One reason a request failed validation."""

    message: str
    key: str | None = None
    source: str | None = None


class ProblemExtra(Struct, frozen=True, kw_only=True):
    """Details of an error; which keys appear depends on the error (others may follow)."""

    current_etag: (
        Annotated[str, Meta(description='412 and 428: the belief\'s current ETag, e.g. "3"')] | None
    ) = None
    info: str | None = None


class Problem(Struct, frozen=True):
    """The JSON body of every error response."""

    status_code: int
    detail: str
    extra: ProblemExtra | list[ValidationIssue] | None = None


# --- agents -------------------------------------------------------------------------------


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


class AgentPage(Struct, frozen=True):
    """A page of agents."""

    items: list[Agent]
    next_cursor: str | None = None


# --- episodes -----------------------------------------------------------------------------


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


# --- beliefs ------------------------------------------------------------------------------


class ProposedBy(Struct, frozen=True, kw_only=True):
    """Who proposed a belief."""

    key_id: str | None = None
    job_id: str | None = None
    reflector: str | None = None


class Belief(Struct, frozen=True, kw_only=True):
    """A belief: pending, active memory, forgotten (refused), or superseded by another."""

    id: str
    agent_id: str
    role: str | None
    content: str
    status: BeliefStatus
    confidence: float
    op: BeliefOp
    target_belief_id: str | None
    rationale: str
    source_episodes: list[str]
    provenance: Provenance
    review_reasons: list[str]
    proposed_by: ProposedBy
    version: int
    created_at: TimestampText
    updated_at: TimestampText
    decided_by: str | None
    decided_at: TimestampText | None
    forgotten_reason: str | None
    injection_count: int
    last_injected_at: TimestampText | None
    superseded_by: str | None


class BeliefPage(Struct, frozen=True):
    """A page of beliefs, newest first."""

    items: list[Belief]
    next_cursor: str | None = None


class ProposalIn(Struct, frozen=True, kw_only=True):
    """One proposed change to an agent's memory."""

    op: BeliefOp
    belief: BeliefText
    confidence: Confidence
    rationale: Annotated[str, Meta(max_length=4000, pattern=NO_NUL)] = ""
    source_episodes: Annotated[list[ObjectId], Meta(max_length=200)] = msgspec.field(
        default_factory=list
    )
    target_belief_id: ObjectId | None = None
    role: Annotated[str, Meta(pattern=SLUG_PATTERN)] | None = None
    review_reasons: Annotated[list[Annotated[str, Meta(max_length=200)]], Meta(max_length=20)] = (
        msgspec.field(default_factory=list)
    )


class ProposalsIn(Struct, frozen=True):
    """Up to 10 proposals at once."""

    proposals: Annotated[list[ProposalIn], Meta(max_length=10)]


class ProposalResult(Struct, frozen=True):
    """What became of one proposal."""

    index: int
    accepted: bool
    belief_id: str | None
    rejected_reason: str | None


class ProposalsResult(Struct, frozen=True):
    """What became of each proposal, by index."""

    results: list[ProposalResult]


class ForgetIn(Struct, frozen=True, kw_only=True):
    """Forget a belief, optionally saying why."""

    reason: Annotated[str, Meta(max_length=1000, pattern=NO_NUL)] | None = None


RetireList = Annotated[
    list[ObjectId],
    Meta(
        max_length=20,
        description="Active beliefs to retire (superseded by this one): each must be one this"
        " belief's review_reasons flag as `contradicts:<id>`, or its target when its op is"
        " `supersede`. Omitted or empty: nothing is retired (both stay active).",
    ),
]


class KeepIn(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Keep a pending belief, optionally retiring the beliefs it replaces."""

    retire: RetireList = msgspec.field(default_factory=list)


class EditIn(Struct, frozen=True, forbid_unknown_fields=True):
    """Replace a belief's content with the owner's own words, optionally retiring others."""

    content: BeliefText
    retire: RetireList = msgspec.field(default_factory=list)


class AuditEntry(Struct, frozen=True, kw_only=True):
    """One append-only audit row."""

    seq: int
    belief_id: str
    action: str
    actor: str
    at: TimestampText
    before_status: BeliefStatus | None
    after_status: BeliefStatus
    before_hash: str | None
    after_hash: str
    version: int
    detail: str
    prev_hash: str
    row_hash: str
    actor_label: str = ""


class AuditPage(Struct, frozen=True):
    """A belief's audit trail, oldest first."""

    items: list[AuditEntry]


class AuditEvent(Struct, frozen=True, kw_only=True):
    """One decision in the history feed: what happened to which belief, by whom (in words)."""

    seq: int
    belief_id: str
    agent_id: str
    content: str
    action: str
    actor: str
    actor_label: str
    at: TimestampText
    before_status: str | None
    after_status: str
    version: int
    detail: str


class AuditFeed(Struct, frozen=True):
    """Decisions newest first (kept, edited, forgotten, reopened, superseded, restored)."""

    items: list[AuditEvent]
    next_cursor: str | None = None


class AuditVerification(Struct, frozen=True):
    """The result of walking the whole audit chain."""

    ok: bool
    rows: int
    first_broken: int | None


# --- keys and pairing ---------------------------------------------------------------------


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


class ApiKey(Struct, frozen=True, kw_only=True):
    """An API key's metadata (never the secret)."""

    id: str
    scope: Scope
    agents: list[str] | None
    label: str
    created_at: TimestampText
    revoked_at: TimestampText | None


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


class PairIn(Struct, frozen=True):
    """Exchange a one-time pairing code for a reviewer key."""

    code: Annotated[str, Meta(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+" + END)]


class PairingCodeIn(Struct, frozen=True, kw_only=True):
    """Create a pairing code (admin)."""

    agents: AgentList = None
    label: Label = "paired device"


class PairingCode(Struct, frozen=True, kw_only=True):
    """A one-time pairing code and the URL that uses it."""

    code: str
    url: str
    expires_at: TimestampText


class Health(Struct, frozen=True):
    """Liveness or readiness."""

    status: Literal["ok", "ready"]
    schema_version: int | None = None


# --- integration ----------------------------------------------------------------------------


class MemoryNote(Struct, frozen=True, kw_only=True):
    """An active belief served to the agent, with its confidence decayed to now.

    ``for_query`` is true when the request's query chose the note (by relevance fused with
    confidence); the others are the most confident notes filling the remaining places.
    """

    belief_id: str
    content: str
    confidence: float
    decayed_confidence: float
    for_query: bool = False


class RelevantEpisode(Struct, frozen=True, kw_only=True):
    """A recent episode recall search found relevant to the query."""

    episode_id: str
    summary: str
    finished_at: TimestampText
    score: float


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
        "content": {"type": "string", "pattern": r"\S"},
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


# --- reflection -----------------------------------------------------------------------------

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
    reasons: list[str]
    accepted: bool
    belief_id: str | None
    rejected_reason: str | None


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


# --- push ---------------------------------------------------------------------------------

# Longest push service URL and notification-action token the server accepts (notify enforces them).
MAX_ENDPOINT_LENGTH = 2048
MAX_TOKEN_LENGTH = 256
# The schema says as much as a pattern can: an http(s) URL without credentials or fragment; a
# p256dh is 65 bytes starting 0x04 (87 base64url chars), an auth secret 16 bytes (22 chars).
# What no pattern can say (the point is on P-256, the host is public, http is admitted by
# CREDENCE_PUSH_ALLOWED_HOSTS) is a 422.
ENDPOINT_PATTERN = r"^https?://[^/?#@\s\x00-\x1f\x7f]+(?:[/?][^#\s\x00-\x1f\x7f]*)?" + END
P256DH_PATTERN = r"^B[A-P][A-Za-z0-9_-]{85}=?" + END
AUTH_PATTERN = r"^[A-Za-z0-9_-]{21}[AQgw](?:==)?" + END


class PushKeysIn(Struct, frozen=True):
    """The subscription's keys as the browser encodes them (base64url)."""

    p256dh: Annotated[str, Meta(min_length=87, max_length=88, pattern=P256DH_PATTERN)]
    auth: Annotated[str, Meta(min_length=22, max_length=24, pattern=AUTH_PATTERN)]


class PushSubscriptionIn(Struct, frozen=True, kw_only=True):
    """The browser's own ``PushSubscription.toJSON()``."""

    endpoint: Annotated[
        str,
        Meta(
            min_length=9,
            max_length=MAX_ENDPOINT_LENGTH,
            pattern=ENDPOINT_PATTERN,
            description="The push service URL: https to a public host (http only to a host"
            " admitted by CREDENCE_PUSH_ALLOWED_HOSTS)",
        ),
    ]
    keys: PushKeysIn
    # EpochTimeStamp in ms; a number, since JSON (and some browsers) may write 1.7e12.
    expiration_time: Annotated[float, Meta(ge=0, le=MAX_SAFE_INT)] | None = msgspec.field(
        default=None, name="expirationTime"
    )


class PushSubscription(Struct, frozen=True, kw_only=True):
    """A device subscribed to this key's notifications."""

    id: str
    key_id: str
    endpoint: str
    expiration_time: int | None
    created_at: TimestampText
    last_seen_at: TimestampText


class PushSubscriptionPage(Struct, frozen=True):
    """The calling key's subscriptions, most recently seen first."""

    items: list[PushSubscription]


class VapidPublicKey(Struct, frozen=True):
    """The applicationServerKey for ``PushManager.subscribe``: base64url P-256 point."""

    public_key: str


class PushActionIn(Struct, frozen=True, kw_only=True):
    """A notification button: the token from the push payload and what was tapped."""

    token: Annotated[
        str,
        Meta(min_length=1, max_length=MAX_TOKEN_LENGTH, pattern=r"^[A-Za-z0-9._-]+" + END),
    ]
    action: Literal["keep", "forget"]


class PushChannelIn(Struct, frozen=True, kw_only=True):
    """An apprise URL that gets every notification (of these agents, or of all)."""

    url: Annotated[str, Meta(min_length=3, max_length=2000, pattern=NO_NUL)]
    label: Label = ""
    agents: Annotated[list[AgentId], Meta(min_length=1, max_length=100)] | None = None


class PushChannel(Struct, frozen=True, kw_only=True):
    """A channel; ``url`` is masked (apprise URLs carry secrets). ``source`` env is read-only."""

    id: str
    source: str
    url: str
    label: str
    agents: list[str] | None
    created_at: TimestampText


class PushChannelPage(Struct, frozen=True):
    """Every channel."""

    items: list[PushChannel]


class PushTestDevice(Struct, frozen=True, kw_only=True):
    """What one subscription's push service answered to the test."""

    subscription_id: str
    outcome: str
    status_code: int | None
    detail: str


class PushTestChannel(Struct, frozen=True, kw_only=True):
    """What one channel answered to the test."""

    channel_id: str
    url: str
    ok: bool
    detail: str


class PushTestResult(Struct, frozen=True, kw_only=True):
    """The test notification's outcome per device and per channel."""

    test_id: str
    devices: list[PushTestDevice]
    channels: list[PushTestChannel]
