"""Finished turns from a Claude Code transcript (JSONL) or a Codex CLI `notify` payload."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

# Bounds that keep one posted turn well inside the server's limits (2000 messages, 4 MB).
MAX_MESSAGES = 400
MAX_TOOL_TEXT = 2000
MAX_TOOL_INPUT = 500
MAX_SESSION_ID = 200
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)$")
# Claude Code records slash commands and their local output as user lines; they are not prompts.
_COMMAND_RECORD = ("<command-", "<local-command-")


@dataclass(frozen=True)
class Turn:
    """One finished turn, ready to post to /turns; ``key`` identifies it for de-duplication."""

    session_id: str
    messages: list[dict[str, Any]]
    finished_at: str | None
    key: str
    source: str
    line: int = 0

    def body(self) -> dict[str, Any]:
        """The TurnIn JSON the server takes."""
        body: dict[str, Any] = {
            "session_id": self.session_id[:MAX_SESSION_ID] or "unknown",
            "messages": self.messages,
            "metadata": {"source": self.source, "turn_key": self.key[:200]},
        }
        if self.line:
            body["metadata"]["transcript_line"] = self.line
        if self.finished_at:
            body["finished_at"] = self.finished_at
        return body


@dataclass
class Reading:
    """What one read of a transcript found: whole turns, where to resume, lines it skipped."""

    turns: list[Turn] = field(default_factory=list)
    consumed: int = 0
    malformed: int = 0


def _text_of(content: Any) -> str:
    """The words of a prompt: a string, or the text blocks of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return ""


def _is_prompt(entry: dict[str, Any]) -> bool:
    message = entry.get("message")
    if entry.get("type") != "user" or not isinstance(message, dict):
        return False
    if entry.get("isMeta") or entry.get("isSidechain") or entry.get("isCompactSummary"):
        return False
    content = message.get("content")
    if isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") == "tool_result" for part in content
    ):
        return False
    text = _text_of(content).strip()
    return bool(text) and not text.startswith(_COMMAND_RECORD)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


def _tool_result(part: dict[str, Any]) -> dict[str, Any]:
    content = part.get("content")
    text = content if isinstance(content, str) else _text_of(content)
    return {
        "type": "tool_result",
        "tool_use_id": str(part.get("tool_use_id", ""))[:1000],
        "content": _clip(text, MAX_TOOL_TEXT),
        "is_error": part.get("is_error") is True,
    }


def _assistant_part(part: Any) -> dict[str, Any] | None:
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if kind == "tool_use":
        tool_input = part.get("input")
        encoded = json.dumps(tool_input) if tool_input is not None else "{}"
        return {
            "type": "tool_use",
            "id": str(part.get("id", ""))[:1000],
            "name": str(part.get("name", ""))[:1000],
            "input": tool_input if len(encoded) <= MAX_TOOL_INPUT else {},
        }
    return None  # thinking, images and unknown blocks stay on the user's machine


def _message_of(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A transcript line as a turn message, or None for lines that carry none."""
    message = entry.get("message")
    if entry.get("isSidechain") or not isinstance(message, dict):
        return None
    content = message.get("content")
    if entry.get("type") == "assistant":
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        kept = [p for p in (_assistant_part(part) for part in parts) if p]
        return {"role": "assistant", "content": kept} if kept else None
    if entry.get("type") == "user" and isinstance(content, list):
        results = [
            _tool_result(part)
            for part in content
            if isinstance(part, dict) and part.get("type") == "tool_result"
        ]
        return {"role": "user", "content": results} if results else None
    return None


def _bounded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The prompt and the latest messages when a turn is very long."""
    if len(messages) <= MAX_MESSAGES:
        return messages
    return [messages[0], *messages[-(MAX_MESSAGES - 1) :]]


def read_turns(chunk: bytes, session_id: str, *, first_line: int = 1) -> Reading:
    """The turns that start in ``chunk`` (a transcript read from a turn boundary onwards).

    Only whole lines are read: ``consumed`` is the byte length up to the last newline, where
    the next read resumes. A line that is not a JSON object is counted and skipped; lines
    before the first prompt belong to a turn already read and are skipped too.
    """
    reading = Reading()
    end = chunk.rfind(b"\n") + 1
    reading.consumed = end
    current: Turn | None = None
    for number, raw in enumerate(chunk[:end].splitlines(), start=first_line):
        try:
            entry = json.loads(raw)
        except ValueError:
            reading.malformed += 1
            continue
        if not isinstance(entry, dict):
            reading.malformed += 1
            continue
        stamp = entry.get("timestamp")
        stamp = stamp if isinstance(stamp, str) and _TIMESTAMP.match(stamp) else None
        if _is_prompt(entry):
            if current is not None:
                reading.turns.append(current)
            prompt = _text_of(entry["message"]["content"]).strip()
            current = Turn(
                session_id=session_id,
                messages=[{"role": "user", "content": prompt}],
                finished_at=stamp,
                key=str(entry.get("uuid") or f"line-{number}"),
                source="claude-code",
                line=number,
            )
            continue
        message = _message_of(entry) if current is not None else None
        if current is not None and message is not None:
            current.messages.append(message)
            if stamp:
                current = Turn(**{**current.__dict__, "finished_at": stamp})
    if current is not None:
        reading.turns.append(current)
    reading.turns = [
        Turn(**{**turn.__dict__, "messages": _bounded(turn.messages)}) for turn in reading.turns
    ]
    return reading


def codex_turn(payload: Any) -> Turn | None:
    """The turn a Codex CLI ``agent-turn-complete`` notification describes, else None."""
    if not isinstance(payload, dict) or payload.get("type") != "agent-turn-complete":
        return None
    inputs = payload.get("input-messages")
    prompts = (
        [m for m in inputs if isinstance(m, str) and m.strip()] if isinstance(inputs, list) else []
    )
    if not prompts:
        return None
    messages: list[dict[str, Any]] = [{"role": "user", "content": m} for m in prompts]
    answer = payload.get("last-assistant-message")
    if isinstance(answer, str) and answer.strip():
        messages.append({"role": "assistant", "content": answer})
    thread = payload.get("thread-id") or payload.get("session-id") or "codex"
    turn_id = payload.get("turn-id")
    key = str(turn_id) if turn_id else json.dumps(prompts)[:200]
    return Turn(
        session_id=str(thread),
        messages=_bounded(messages),
        finished_at=None,
        key=key,
        source="codex",
    )
