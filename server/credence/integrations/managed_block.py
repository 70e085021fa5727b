"""The managed block: kept beliefs rendered between Credence's markers in an instruction file."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

BlockFormat = Literal["agents-md", "claude-md", "markdown"]
FORMATS: tuple[BlockFormat, ...] = ("agents-md", "claude-md", "markdown")

# A marker is a whole line; its agent id is what ties the block to one agent, so several agents'
# blocks can share a file. The words after the id are for the human reading the file.
_MARKER = r"^\s*<!--\s*{word} credence:(?P<agent>[a-z0-9][a-z0-9_-]{{0,63}})(?:\s[^>]*)?-->\s*$"
_BEGIN = re.compile(_MARKER.format(word="BEGIN"))
_END = re.compile(_MARKER.format(word="END"))

_INTRO = {
    "agents-md": (
        "## Reviewed memory ({agent})",
        "Lessons a human reviewer kept in Credence. Follow them unless the user says otherwise.",
    ),
    "claude-md": (
        "# Reviewed memory ({agent})",
        "These are durable rules a human kept in Credence; treat them like the rest of this file.",
    ),
    "markdown": ("## Reviewed memory ({agent})", ""),
}
ALL_ROLES = "All roles"


class MarkerError(ValueError):
    """The file's Credence markers are unbalanced, out of order or duplicated."""


@dataclass(frozen=True)
class BlockBelief:
    """One kept belief as the block shows it."""

    content: str
    role: str | None = None
    belief_id: str = ""


@dataclass(frozen=True)
class Span:
    """Where one agent's block is: the begin and end marker lines (0-based, inclusive)."""

    agent_id: str
    begin: int
    end: int


def begin_marker(agent_id: str) -> str:
    """The line that opens ``agent_id``'s block."""
    return (
        f"<!-- BEGIN credence:{agent_id} (managed by Credence: `credence sync` rewrites this"
        " block; edit outside it) -->"
    )


def end_marker(agent_id: str) -> str:
    """The line that closes ``agent_id``'s block."""
    return f"<!-- END credence:{agent_id} -->"


def _one_line(text: str) -> str:
    """A belief as one list item: whitespace runs (newlines too) become one space."""
    return " ".join(text.split())


def render_block(
    agent_id: str, beliefs: Iterable[BlockBelief], fmt: BlockFormat = "agents-md"
) -> str:
    """The block's text, markers included, ending in a newline.

    Beliefs for all roles come first, then each role alphabetically; within a group beliefs are
    sorted by their text (case-insensitively, then id), so a new belief is a one-line diff.
    """
    heading, intro = _INTRO[fmt]
    groups: dict[str | None, list[BlockBelief]] = {}
    for belief in beliefs:
        groups.setdefault(belief.role, []).append(belief)
    lines = [begin_marker(agent_id), heading.format(agent=agent_id), ""]
    if intro:
        lines += [intro, ""]
    if not groups:
        lines += ["_No kept beliefs yet._", ""]
    level = "##" if fmt == "claude-md" else "###"
    roles = sorted(groups, key=lambda role: (role is not None, role or ""))
    for role in roles:
        if len(roles) > 1 or role is not None:
            lines += [f"{level} {ALL_ROLES if role is None else f'Role: {role}'}", ""]
        ordered = sorted(groups[role], key=lambda b: (_one_line(b.content).casefold(), b.belief_id))
        lines += [f"- {_one_line(b.content)}" for b in ordered]
        lines.append("")
    lines.append(end_marker(agent_id))
    return "\n".join(lines) + "\n"


def find_blocks(lines: Sequence[str]) -> list[Span]:
    """Every Credence block in the file's lines, in order.

    Raises MarkerError (naming the 1-based line) on an END without a BEGIN, a BEGIN inside
    another block, a block left open, or two blocks for one agent.
    """
    spans: list[Span] = []
    open_at: tuple[str, int] | None = None
    for number, line in enumerate(lines):
        begin, end = _BEGIN.match(line), _END.match(line)
        if begin:
            if open_at is not None:
                raise MarkerError(
                    f"line {number + 1}: a BEGIN credence marker inside the block opened at line"
                    f" {open_at[1] + 1}"
                )
            open_at = (begin["agent"], number)
        elif end:
            if open_at is None:
                raise MarkerError(f"line {number + 1}: an END credence marker without a BEGIN")
            if end["agent"] != open_at[0]:
                raise MarkerError(
                    f"line {number + 1}: END credence:{end['agent']} closes the block of"
                    f" {open_at[0]} opened at line {open_at[1] + 1}"
                )
            spans.append(Span(open_at[0], open_at[1], number))
            open_at = None
    if open_at is not None:
        raise MarkerError(
            f"line {open_at[1] + 1}: the credence:{open_at[0]} block is never closed (no END)"
        )
    seen: dict[str, Span] = {}
    for span in spans:
        if span.agent_id in seen:
            raise MarkerError(
                f"line {span.begin + 1}: a second credence:{span.agent_id} block (the first"
                f" begins at line {seen[span.agent_id].begin + 1})"
            )
        seen[span.agent_id] = span
    return spans


def _newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def splice(text: str, agent_id: str, block: str) -> str:
    """``text`` with ``agent_id``'s block replaced by ``block`` (or appended when missing).

    Every byte outside the block is kept as it was; the file's line ending is used for the
    block. Raises MarkerError when the markers are unbalanced or duplicated.
    """
    lines = text.splitlines(keepends=True)
    spans = find_blocks([line.rstrip("\r\n") for line in lines])
    newline = _newline_of(text)
    rendered = block.replace("\n", newline) if newline != "\n" else block
    mine = next((span for span in spans if span.agent_id == agent_id), None)
    if mine is not None:
        after = lines[mine.end + 1 :]
        if not lines[mine.end].endswith(("\n", "\r")) and not after:
            rendered = rendered.rstrip("\r\n")  # the file ended at the END marker: keep it so
        return "".join(lines[: mine.begin]) + rendered + "".join(after)
    if not text:
        return rendered
    separator = "" if text.endswith(("\n", "\r")) else newline
    blank = "" if text.endswith(newline * 2) or text.strip() == "" else newline
    return text + separator + blank + rendered


def lines_outside_blocks(lines: Sequence[str]) -> list[tuple[int, str]]:
    """(1-based number, line) for each line not inside (nor marking) a Credence block."""
    inside: set[int] = set()
    for span in find_blocks(lines):
        inside.update(range(span.begin, span.end + 1))
    return [(number + 1, line) for number, line in enumerate(lines) if number not in inside]
