"""Turn extraction: a framework's message list becomes an episode summary, interventions, origin."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

SUMMARY_MAX_CHARS = 1200
INTERVENTION_MAX_CHARS = 500
MAX_TOOL_NAMES = 8
TOOL_NAME_MAX_CHARS = 64
_CLASSIFY_WINDOW = 1000

ORIGIN_CLEAN = "clean"
ORIGIN_UNTRUSTED = "untrusted"

REASON_TOOL_OUTPUT = "tool_output"
REASON_WEB = "web_content"
REASON_MAIL = "mail"
REASON_RETRIEVED = "retrieved_content"
REASON_ATTACHMENT = "attachment"
_REASON_ORDER = (REASON_TOOL_OUTPUT, REASON_WEB, REASON_MAIL, REASON_RETRIEVED, REASON_ATTACHMENT)

TRIGGER_DENIAL = "denial"
TRIGGER_STEER = "steer"
TRIGGER_FOLLOWUP = "followup"

_ROLE_ALIASES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}

_TEXT_PART_TYPES = {"text", "input_text", "output_text"}
_IGNORED_PART_TYPES = {"thinking", "redacted_thinking", "reasoning"}
_IMAGE_PART_TYPES = {"image", "image_url", "input_image"}
_AUDIO_PART_TYPES = {"audio", "input_audio"}
_ATTACHMENT_PART_TYPES = {"document", "file", "input_file"}
_TOOL_CALL_PART_TYPES = {"tool_use", "server_tool_use", "mcp_tool_use"}
_WEB_RESULT_PART_TYPES = {"web_search_tool_result", "web_fetch_tool_result"}

_WEB_WORDS = {
    "web",
    "www",
    "browse",
    "browser",
    "browsing",
    "fetch",
    "http",
    "https",
    "url",
    "crawl",
    "crawler",
    "scrape",
    "scraper",
    "google",
    "bing",
    "duckduckgo",
    "wikipedia",
    "webpage",
    "navigate",
    "curl",
    "wget",
    "serp",
    "tavily",
}
_MAIL_WORDS = {"mail", "email", "emails", "gmail", "inbox", "imap", "smtp", "outlook"}
_RETRIEVAL_WORDS = {"retrieve", "retrieval", "rag", "knowledge", "vector", "semantic", "search"}

_DENIAL = re.compile(
    r"""
      (?:^|[.!?;:\n])\s*(?:no|nope|nah)\b(?![-'])(?!\s+(?:problem|worries|rush)\b)
    | \b(?:don'?t|do\s+not)\b
        (?!\s+(?:know|think|understand|see|mind|forget|remember|worry|hesitate)\b)
    | \b(?:stop|undo|revert|reverted|wrong|incorrect|rollback|roll\s+back)\b
    | \bnever\b(?!\s+mind\b)
    | \b(?:that|this|it)(?:'s|s|\s+is|\s+was)\s+not\b
    | \b(?:isn'?t|wasn'?t|aren'?t)\s+(?:right|correct|what|working)\b
    | \bnot\s+what\s+i\b
    | \bi\s+(?:said|told\s+you|asked\s+(?:you\s+)?(?:for|to|not))\b
    | \bshouldn'?t\s+have\b
    | \bwhy\s+did\s+you\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
_STEER = re.compile(
    r"""
    \b(?:instead|rather|prefer|preferably|actually|change|switch|replace|use|using|avoid|try
        |go\s+with|make\s+it|make\s+sure|should\s+be|let'?s|better\s+to)\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class TurnError(ValueError):
    """The posted messages cannot be read as a turn (no user message, unusable shape)."""


class Intervention(msgspec.Struct, frozen=True):
    """A user message after the request: a denial, a steer, or a followup, with its words."""

    trigger: str
    text: str


class ExtractedTurn(msgspec.Struct, frozen=True):
    """What the episode keeps of a turn; redaction is the caller's job."""

    summary: str
    interventions: tuple[Intervention, ...]
    origin: str
    untrusted_reasons: tuple[str, ...]


@dataclass
class _Reading:
    """Facts collected while walking the messages once, in order."""

    user_texts: list[str] = field(default_factory=list)
    assistant_texts: list[str] = field(default_factory=list)
    tool_uses: dict[str, int] = field(default_factory=dict)
    tool_names_by_id: dict[str, str] = field(default_factory=dict)
    tool_failures: int = 0
    reasons: set[str] = field(default_factory=set)

    def call_tool(self, name: Any, call_id: Any = None) -> None:
        tool = _tool_name(name)
        self.tool_uses[tool] = self.tool_uses.get(tool, 0) + 1
        if isinstance(call_id, str) and call_id:
            self.tool_names_by_id[call_id] = tool
        # A finished turn that called a tool consumed its output, even when the posted
        # transcript leaves the result out.
        self.saw_tool_output(tool)

    def saw_tool_output(self, name: Any = None, call_id: Any = None, failed: bool = False) -> None:
        self.reasons.add(REASON_TOOL_OUTPUT)
        tool = name if isinstance(name, str) and name else None
        if tool is None and isinstance(call_id, str):
            tool = self.tool_names_by_id.get(call_id)
        if tool:
            self.reasons.update(_reasons_for_tool(tool))
        if failed:
            self.tool_failures += 1


def extract_turn(messages: Sequence[Mapping[str, Any]]) -> ExtractedTurn:
    """Derive the episode summary, interventions and provenance from one finished turn.

    Accepts OpenAI chat (string or content-part content, ``tool_calls``, role ``tool`` and legacy
    ``function``), OpenAI Responses items, Anthropic content blocks (``tool_use`` /
    ``tool_result``, the latter inside user messages and never counted as user words), Gemini
    ``parts``, and plain role/content lists. Raises TurnError when no user message has words or
    the shape is unusable.
    """
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise TurnError("messages must be a list of message objects")
    if not messages:
        raise TurnError("messages is empty: a turn needs at least one user message")
    reading = _Reading()
    for position, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise TurnError(
                f"messages[{position}] must be an object with a role, got {type(message).__name__}"
            )
        _read_message(reading, message, position)
    if not reading.user_texts:
        raise TurnError("the turn has no user message with text (tool results do not count)")
    request, *later = reading.user_texts
    interventions = tuple(
        Intervention(classify_intervention(text), truncate(text, INTERVENTION_MAX_CHARS))
        for text in later
    )
    reasons = tuple(reason for reason in _REASON_ORDER if reason in reading.reasons)
    return ExtractedTurn(
        summary=_summary(request, reading),
        interventions=interventions,
        origin=ORIGIN_UNTRUSTED if reasons else ORIGIN_CLEAN,
        untrusted_reasons=reasons,
    )


def classify_intervention(text: str) -> str:
    """Label a later user message: ``denial`` beats ``steer``, anything else is ``followup``."""
    window = text[:_CLASSIFY_WINDOW].replace("\u2019", "'").replace("\u2018", "'")
    if _DENIAL.search(window):
        return TRIGGER_DENIAL
    if _STEER.search(window):
        return TRIGGER_STEER
    return TRIGGER_FOLLOWUP


def truncate(text: str, limit: int) -> str:
    """Collapse whitespace and cut to ``limit`` characters on a word boundary, marking with …."""
    compact = " ".join(text.split())
    if len(compact) <= limit:
        return compact
    if limit <= 1:
        return "…"[:limit]
    cut = compact[: limit - 1]
    space = cut.rfind(" ")
    # Only back off to a word boundary when it does not throw away most of the room.
    if space >= (limit - 1) * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-|") + "…"


def _read_message(reading: _Reading, message: Mapping[str, Any], position: int) -> None:
    role = _role_of(message, position)
    if role is None or role == "system":
        return
    if role == "tool":
        call_id = message.get("tool_call_id") or message.get("call_id")
        reading.saw_tool_output(message.get("name"), call_id)
        return
    content = message["content"] if "content" in message else message.get("parts")
    texts = _read_content(reading, content, position)
    if role == "assistant":
        _read_assistant_fields(reading, message, position)
        refusal = message.get("refusal")
        if isinstance(refusal, str) and not "".join(texts).strip():
            texts = [refusal]
    words = " ".join(" ".join(texts).split())
    if not words:
        return
    if role == "user":
        reading.user_texts.append(words)
    else:
        reading.assistant_texts.append(words)


def _role_of(message: Mapping[str, Any], position: int) -> str | None:
    """The canonical role, or None for items that carry nothing a summary needs."""
    raw = message.get("role")
    kind = message.get("type")
    if raw is None:
        # OpenAI Responses items and LangChain dicts name their kind in "type" instead.
        if kind in ("function_call", "custom_tool_call"):
            return "assistant"
        if kind in ("function_call_output", "custom_tool_call_output", "computer_call_output"):
            return "tool"
        if kind == "reasoning":
            return None
        if isinstance(kind, str) and kind.endswith("_call"):
            return "assistant"
        raw = kind
    if not isinstance(raw, str):
        raise TurnError(f"messages[{position}] has no role (expected e.g. 'user' or 'assistant')")
    role = _ROLE_ALIASES.get(raw.strip().lower())
    if role is None:
        known = ", ".join(sorted(_ROLE_ALIASES))
        raise TurnError(f"messages[{position}] has unknown role {raw[:40]!r} (known: {known})")
    return role


def _read_content(reading: _Reading, content: Any, position: int) -> list[str]:
    """Collect the words in a message body, noting tool traffic and third-party content."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, Sequence) or isinstance(content, bytes):
        raise TurnError(
            f"messages[{position}].content must be a string, a list of content parts or null, "
            f"got {type(content).__name__}"
        )
    texts: list[str] = []
    for index, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping):
            text = _read_part(reading, part)
            if text:
                texts.append(text)
        elif part is not None:
            raise TurnError(
                f"messages[{position}].content[{index}] must be a string or an object, "
                f"got {type(part).__name__}"
            )
    return texts


def _read_part(reading: _Reading, part: Mapping[str, Any]) -> str | None:
    kind = part.get("type")
    if kind in _TEXT_PART_TYPES:
        text = part.get("text")
        return text if isinstance(text, str) else None
    if kind == "refusal":
        refusal = part.get("refusal")
        return refusal if isinstance(refusal, str) else None
    if kind in _IGNORED_PART_TYPES:
        return None
    if kind in _TOOL_CALL_PART_TYPES:
        reading.call_tool(part.get("name"), part.get("id"))
        return None
    if kind == "tool_result":
        reading.saw_tool_output(
            call_id=part.get("tool_use_id"), failed=part.get("is_error") is True
        )
        return None
    if kind in _WEB_RESULT_PART_TYPES:
        reading.saw_tool_output("web_search" if "search" in kind else "web_fetch")
        return None
    if isinstance(kind, str) and kind.endswith("_tool_result"):
        reading.saw_tool_output(call_id=part.get("tool_use_id"))
        return None
    if kind == "search_result":
        reading.reasons.add(REASON_RETRIEVED)
        return None
    if kind in _IMAGE_PART_TYPES:
        return "[image]"
    if kind in _AUDIO_PART_TYPES:
        return "[audio]"
    if kind in _ATTACHMENT_PART_TYPES:
        reading.reasons.add(REASON_ATTACHMENT)
        return "[document]"
    return _read_untyped_part(reading, part)


def _read_untyped_part(reading: _Reading, part: Mapping[str, Any]) -> str | None:
    # Gemini parts carry no "type"; their single key says what they are.
    if isinstance(part.get("functionCall"), Mapping):
        reading.call_tool(part["functionCall"].get("name"), part["functionCall"].get("id"))
        return None
    if isinstance(part.get("functionResponse"), Mapping):
        reading.saw_tool_output(part["functionResponse"].get("name"))
        return None
    if "fileData" in part:
        reading.reasons.add(REASON_ATTACHMENT)
        return "[document]"
    if "inlineData" in part:
        return "[attachment]"
    text = part.get("text")
    return text if isinstance(text, str) else None


def _read_assistant_fields(reading: _Reading, message: Mapping[str, Any], position: int) -> None:
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        if not isinstance(tool_calls, Sequence) or isinstance(tool_calls, str | bytes):
            raise TurnError(f"messages[{position}].tool_calls must be a list")
        for call in tool_calls:
            if not isinstance(call, Mapping):
                raise TurnError(f"messages[{position}].tool_calls holds a non-object entry")
            function = call.get("function")
            name = function.get("name") if isinstance(function, Mapping) else call.get("name")
            reading.call_tool(name, call.get("id"))
    function_call = message.get("function_call")
    if isinstance(function_call, Mapping):
        reading.call_tool(function_call.get("name"))
    # OpenAI Responses items: function_call names its tool; web_search_call and kin are the tool.
    kind = message.get("type")
    if kind in ("function_call", "custom_tool_call"):
        reading.call_tool(message.get("name"), message.get("call_id"))
    elif isinstance(kind, str) and kind.endswith("_call"):
        reading.call_tool(kind.removesuffix("_call"), message.get("call_id"))


def _tool_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        return "unknown_tool"
    return truncate(name.strip(), TOOL_NAME_MAX_CHARS)


def _reasons_for_tool(name: str) -> set[str]:
    words = set(_WORD_SPLIT.split(_CAMEL_BOUNDARY.sub(" ", name).lower()))
    compact = name.lower()
    if words & _WEB_WORDS or "websearch" in compact or "webfetch" in compact:
        return {REASON_WEB}
    if words & _MAIL_WORDS:
        return {REASON_MAIL}
    if words & _RETRIEVAL_WORDS:
        return {REASON_RETRIEVED}
    return set()


def _summary(request: str, reading: _Reading) -> str:
    if reading.assistant_texts:
        *narration, outcome = reading.assistant_texts
    else:
        narration, outcome = [], "no assistant reply"
    did_parts = []
    if reading.tool_uses:
        names = [
            f"{name} ×{count}" if count > 1 else name
            for name, count in list(reading.tool_uses.items())[:MAX_TOOL_NAMES]
        ]
        extra = len(reading.tool_uses) - MAX_TOOL_NAMES
        tools = "tools: " + ", ".join(names) + (f" +{extra} more" if extra > 0 else "")
        if reading.tool_failures:
            tools += f" ({reading.tool_failures} failed)"
        did_parts.append(tools)
    if narration:
        did_parts.append(" ".join(narration))
    did = "; ".join(did_parts) if did_parts else "answered directly"
    labels = ("Request: ", " | Did: ", " | Outcome: ")
    parts = (request, did, outcome)
    limits = _share(
        [len(part) for part in parts], SUMMARY_MAX_CHARS - sum(len(label) for label in labels)
    )
    # The tool list leads "Did" so it survives truncation of the narration.
    return "".join(
        label + truncate(part, limit)
        for label, part, limit in zip(labels, parts, limits, strict=True)
    )


def _share(lengths: list[int], budget: int) -> list[int]:
    """Split ``budget`` characters so short parts keep everything and long ones share the rest."""
    limits = [0] * len(lengths)
    pending = sorted(range(len(lengths)), key=lambda i: lengths[i])
    remaining = budget
    while pending:
        fair = remaining // len(pending)
        index = pending.pop(0)
        limits[index] = min(lengths[index], fair)
        remaining -= limits[index]
    return limits
