"""Memory files read as rules: CLAUDE.md, AGENTS.md, MEMORY.md, Markdown lists, a JSON export."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from credence.integrations.managed_block import find_blocks

MAX_RULE_CHARS = 2000

_LIST_ITEM = re.compile(r"^(?P<indent>\s*)(?:[-*+]|\d{1,3}[.)])\s+(?P<text>.*)$")
_CHECKBOX = re.compile(r"^\[[ xX]\]\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_RULE_LINE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_IMPORT = re.compile(r"^\s*@\S+\s*$")  # CLAUDE.md's `@path/to/file` imports
_SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_LINK = re.compile(r"!?\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]*)(?:\s+\"[^\"]*\")?\)")


class MemoryFileError(ValueError):
    """The file cannot be read as memory (bad markers, JSON that is not an export)."""


@dataclass(frozen=True)
class Rule:
    """One rule found in a memory file: its text and the 1-based line it starts on."""

    line: int
    text: str
    role: str | None = None
    confidence: float | None = None


@dataclass(frozen=True)
class Skipped:
    """A candidate rule left out, and why (too long, empty after clean-up)."""

    line: int
    reason: str


@dataclass(frozen=True)
class ParsedFile:
    """What a memory file holds: its rules, what was skipped, and the lines Credence manages."""

    kind: str
    rules: list[Rule]
    skipped: list[Skipped]
    managed_lines: int


def clean_rule(text: str) -> str:
    """A rule's words: links become their text, checkboxes and extra whitespace go."""
    text = _CHECKBOX.sub("", plain(text))
    return _LINK.sub(lambda m: m["text"] or m["target"], text)


def plain(text: str) -> str:
    """Text made storable as one line: no NUL, no lone surrogate, whitespace runs as one space."""
    return " ".join(_SURROGATE.sub("\ufffd", text.replace("\x00", "")).split())


def parse_memory_file(text: str) -> ParsedFile:
    """The rules in a memory file; a JSON memory export is recognised by its shape.

    Raises MemoryFileError when Credence's markers are unbalanced or JSON is not an export.
    """
    text = text.replace("\x00", "")  # never storable, and never a reason to refuse a file
    if text.lstrip().startswith("{"):
        return _parse_export(text)
    return _parse_markdown(text)


def _parse_export(text: str) -> ParsedFile:
    try:
        data: Any = json.loads(text)
    except ValueError as exc:
        raise MemoryFileError(f"not valid JSON: {exc}") from None
    beliefs = data.get("beliefs") if isinstance(data, dict) else None
    if not isinstance(beliefs, list) or "format_version" not in data:
        raise MemoryFileError("JSON that is not a Credence memory export (no beliefs list)")
    lines = text.splitlines()
    rules: list[Rule] = []
    skipped: list[Skipped] = []
    for position, belief in enumerate(beliefs):
        if not isinstance(belief, dict) or belief.get("status", "active") != "active":
            continue
        line = _line_of(lines, belief.get("id")) or _line_of(lines, belief.get("content")) or 1
        content = belief.get("content")
        if not isinstance(content, str) or not plain(content):
            skipped.append(Skipped(line, f"beliefs[{position}] has no content"))
            continue
        confidence = belief.get("confidence")
        role = belief.get("role")
        if role is not None and not (isinstance(role, str) and _SLUG.fullmatch(role)):
            skipped.append(Skipped(line, f"beliefs[{position}].role is not an agent role slug"))
            continue
        rules.append(
            Rule(
                line=line,
                text=plain(content),
                role=role,
                confidence=float(confidence)
                if isinstance(confidence, int | float) and 0 <= confidence <= 1
                else None,
            )
        )
    return _bounded(ParsedFile("export", rules, skipped, 0))


def _line_of(lines: list[str], value: Any) -> int | None:
    if not isinstance(value, str) or not value:
        return None
    needle = json.dumps(value)
    return next((n + 1 for n, line in enumerate(lines) if needle in line), None)


def _parse_markdown(text: str) -> ParsedFile:
    lines = text.splitlines()
    try:
        spans = find_blocks(lines)
    except ValueError as exc:
        raise MemoryFileError(str(exc)) from None
    managed = {n for span in spans for n in range(span.begin, span.end + 1)}
    rules: list[Rule] = []
    current: list[str] = []
    start = 0
    in_fence = in_comment = False
    in_front_matter = bool(lines) and lines[0].strip() == "---"

    def flush() -> None:
        if current:
            rules.append(Rule(line=start + 1, text=clean_rule(" ".join(current))))
            current.clear()

    for number, line in enumerate(lines):
        if in_front_matter:
            in_front_matter = number == 0 or line.strip() != "---"
            continue
        if number in managed:
            flush()
            continue
        if in_fence:
            in_fence = not _FENCE.match(line)
            continue
        if _FENCE.match(line):
            flush()
            in_fence = True
            continue
        if in_comment or "<!--" in line:
            flush()
            in_comment = _comment_state(line, in_comment)
            continue
        stripped = line.strip()
        if (
            not stripped
            or _HEADING.match(line)
            or _RULE_LINE.match(line)
            or _IMPORT.match(line)
            or stripped.startswith("|")
        ):
            flush()
            continue
        if _SETEXT.match(line) and current:
            current.clear()  # the paragraph above was a heading
            continue
        item = _LIST_ITEM.match(line)
        if item:
            flush()
            start = number
            current.append(item["text"])
        else:
            if not current:
                start = number
            current.append(stripped)
    flush()
    return _bounded(ParsedFile("markdown", [r for r in rules if r.text], [], len(managed)))


def _comment_state(line: str, inside: bool) -> bool:
    """Whether an HTML comment is still open after ``line``."""
    for token in re.findall(r"<!--|-->", line):
        inside = token == "<!--"
    return inside


def _bounded(parsed: ParsedFile) -> ParsedFile:
    """Rules longer than a belief may be are skipped with a reason, never cut short."""
    kept = [r for r in parsed.rules if len(r.text) <= MAX_RULE_CHARS]
    too_long = [
        Skipped(r.line, f"longer than {MAX_RULE_CHARS} characters")
        for r in parsed.rules
        if len(r.text) > MAX_RULE_CHARS
    ]
    return ParsedFile(parsed.kind, kept, [*parsed.skipped, *too_long], parsed.managed_lines)
