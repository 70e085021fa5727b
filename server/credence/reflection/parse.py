"""Turn a reflector's raw answer into validated proposals, dropping bad entries with a reason."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, cast

import msgspec

from credence.memory.semantics.gate import OPS, Proposal

if TYPE_CHECKING:
    from credence.models import BeliefOp

MAX_ANSWER_CHARS = 200_000
MAX_BELIEF_CHARS = 2000
MAX_RATIONALE_CHARS = 3000
MAX_TARGET_CHARS = 64
_MAX_DECODE_ATTEMPTS = 200
_MAX_FALLBACK_SCANS = 20
_QUOTE_CHARS = 200

_SIGNIFICANT = re.compile(r'["\\\[\]]')
# A JSON string literal, or a comma that only precedes a closing bracket (outside strings).
_TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,(\s*[\]}])', re.DOTALL)
_THINKING = re.compile(r"^\s*<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE_OPENER = re.compile(r"```[A-Za-z]*\s*$")


class Dropped(msgspec.Struct, frozen=True):
    """An entry of the answer that was refused on its own; ``index`` is its array position."""

    index: int
    reason: str


class ParseResult(msgspec.Struct, frozen=True):
    """The proposals that passed validation and the entries that were dropped."""

    proposals: tuple[Proposal, ...]
    dropped: tuple[Dropped, ...]


class ParseError(ValueError):
    """The answer holds no decodable JSON array of proposals."""


def parse_proposals(
    raw: str, *, allowed_sources: AbstractSet[str], max_items: int = 10
) -> ParseResult:
    """Find the JSON array of diffs in ``raw`` and validate each entry.

    Accepts a bare array, a fenced block (```json or plain ```), prose around the array, and
    brackets or fences inside JSON strings; ``[]`` is a legitimate "nothing to learn". A
    leading ``<think>…</think>`` block (reasoning models) is ignored, and trailing commas are
    forgiven. When several arrays of objects appear, one opened right after a code fence wins,
    else the first. Raises :class:`ParseError` when no array can be decoded.

    Drop reasons: ``too_many:<max>``, ``not_an_object``, ``missing_field:<f>``,
    ``bad_type:<f>``, ``unknown_op:<op>``, ``empty_belief``, ``belief_too_long``,
    ``invalid_text:<f>`` (NUL or lone surrogate), ``confidence_out_of_range``,
    ``no_source_episodes``, ``unknown_source:<id>``, ``missing_target``, ``bad_value:<f>``.
    """
    if not isinstance(raw, str):
        raise TypeError("raw must be str")
    if len(raw) > MAX_ANSWER_CHARS:
        raise ParseError(f"answer is {len(raw)} characters long: {_quote(raw)}")
    entries = _find_array(_THINKING.sub("", raw, count=1))
    if entries is None:
        raise ParseError(f"no JSON array of proposals in the answer: {_quote(raw)}")
    proposals: list[Proposal] = []
    dropped: list[Dropped] = []
    for position, entry in enumerate(entries):
        if position >= max_items:
            dropped.append(Dropped(position, f"too_many:{max_items}"))
            continue
        outcome = _validate(position, entry, allowed_sources)
        if isinstance(outcome, Proposal):
            proposals.append(outcome)
        else:
            dropped.append(Dropped(position, outcome))
    return ParseResult(proposals=tuple(proposals), dropped=tuple(dropped))


def _quote(raw: str) -> str:
    head = raw[:_QUOTE_CHARS]
    return repr(head) + ("…" if len(raw) > _QUOTE_CHARS else "")


def _find_array(text: str) -> list[Any] | None:
    """Return the best top-level JSON array in ``text``: objects beat ``[]``, fenced beats bare."""
    ends, string_starts = _match_brackets(text)
    found_objects: list[tuple[bool, list[Any]]] = []
    found_empty = False
    attempts = fallback_scans = 0
    resume = 0
    for position in sorted([*ends, *string_starts]):
        if position < resume or attempts >= _MAX_DECODE_ATTEMPTS:
            continue
        end = ends.get(position)
        if end is None and position in string_starts and fallback_scans < _MAX_FALLBACK_SCANS:
            fallback_scans += 1
            end = _balanced_end(text, position)
        if end is None:
            continue
        attempts += 1
        value = _decode(text[position:end])
        if not isinstance(value, list):
            continue
        resume = end
        if not value:
            found_empty = True
        elif any(isinstance(item, dict) for item in value):
            found_objects.append((bool(_FENCE_OPENER.search(text, 0, position)), value))
    for fenced, value in found_objects:
        if fenced:
            return value
    if found_objects:
        return found_objects[0][1]
    return [] if found_empty else None


def _match_brackets(text: str) -> tuple[dict[int, int], set[int]]:
    """Match brackets in one pass: {start: end} for closed arrays, plus starts seen in strings.

    Quotes count only inside an open bracket: at depth 0 the text is prose, where a stray
    quote must not hide the array that follows. A ``[`` that this pass saw inside a string
    may still open a real array if that "string" was really prose; the caller rescans those.
    """
    ends: dict[int, int] = {}
    string_starts: set[int] = set()
    open_at: list[int] = []
    in_string = False
    cursor = 0
    while (match := _SIGNIFICANT.search(text, cursor)) is not None:
        char = match.group()
        at = match.start()
        cursor = at + 1
        if not open_at:
            if char == "[":
                open_at.append(at)
        elif in_string:
            if char == "\\":
                cursor = at + 2
            elif char == '"':
                in_string = False
            elif char == "[":
                string_starts.add(at)
        elif char == '"':
            in_string = True
        elif char == "[":
            open_at.append(at)
        elif char == "]":
            ends[open_at.pop()] = at + 1
    for unclosed in open_at:
        string_starts.add(unclosed)
    return ends, string_starts


def _balanced_end(text: str, start: int) -> int | None:
    """Return the index after the ``]`` closing the array opened at ``start``, or None."""
    depth = 0
    in_string = False
    cursor = start
    while (match := _SIGNIFICANT.search(text, cursor)) is not None:
        char = match.group()
        at = match.start()
        cursor = at + 1
        if in_string:
            if char == "\\":
                cursor = at + 2
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return at + 1
    return None


def _decode(candidate: str) -> Any:
    for attempt in (candidate, _TRAILING_COMMA.sub(_keep_string, candidate)):
        try:
            return json.loads(attempt)
        except (ValueError, RecursionError):
            continue
    return None


def _keep_string(match: re.Match[str]) -> str:
    return match.group(1) if match.group(1) is not None else match.group(0)


def _validate(position: int, entry: Any, allowed_sources: AbstractSet[str]) -> Proposal | str:
    """Return a Proposal, or the reason the entry is dropped."""
    if not isinstance(entry, dict):
        return "not_an_object"
    for field in ("op", "belief", "confidence", "rationale", "source_episodes"):
        if field not in entry:
            return f"missing_field:{field}"
    op, belief, confidence = entry["op"], entry["belief"], entry["confidence"]
    rationale, sources = entry["rationale"], entry["source_episodes"]
    if not isinstance(op, str):
        return "bad_type:op"
    op = op.strip().lower()
    if op not in OPS:
        return f"unknown_op:{op[:40]}"
    known_op = cast("BeliefOp", op)
    problem = _text_problem(belief, rationale) or _confidence_problem(confidence)
    if problem:
        return problem
    belief = " ".join(belief.split())
    if not belief:
        return "empty_belief"
    if len(belief) > MAX_BELIEF_CHARS:
        return "belief_too_long"
    source_ids = _source_ids(sources, allowed_sources)
    if isinstance(source_ids, str):
        return source_ids
    target, problem = _target(op, entry.get("target_belief_id"))
    if problem:
        return problem
    if len(rationale) > MAX_RATIONALE_CHARS:
        rationale = rationale[: MAX_RATIONALE_CHARS - 1] + "…"
    return Proposal(
        index=position,
        op=known_op,
        belief=belief,
        confidence=float(confidence),
        rationale=rationale.strip(),
        source_episodes=source_ids,
        target_belief_id=target,
    )


def _text_problem(belief: Any, rationale: Any) -> str | None:
    """The reason the belief or rationale is not clean text, or None."""
    for field, value in (("belief", belief), ("rationale", rationale)):
        if not isinstance(value, str):
            return f"bad_type:{field}"
        if not _clean_text(value):
            return f"invalid_text:{field}"
    return None


def _confidence_problem(confidence: Any) -> str | None:
    """The reason a confidence is not a finite number in [0, 1], or None."""
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return "bad_type:confidence"
    if not math.isfinite(confidence) or not 0.0 <= confidence <= 1.0:
        return "confidence_out_of_range"
    return None


def _source_ids(sources: Any, allowed_sources: AbstractSet[str]) -> tuple[str, ...] | str:
    """The distinct cited episode ids, or the reason they are refused."""
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        return "bad_type:source_episodes"
    source_ids = tuple(dict.fromkeys(source.strip() for source in sources))
    if not source_ids:
        return "no_source_episodes"
    for source in source_ids:
        if source not in allowed_sources:
            return f"unknown_source:{source[:64]}"
    return source_ids


def _target(op: str, target: Any) -> tuple[str | None, str | None]:
    """(target belief id, None), or (None, the reason it is refused); an add has no target."""
    if op == "add":
        return None, None
    if target is None or (isinstance(target, str) and not target.strip()):
        return None, "missing_target"
    if not isinstance(target, str):
        return None, "bad_type:target_belief_id"
    target = target.strip()
    if len(target) > MAX_TARGET_CHARS or not _clean_text(target):
        return None, "bad_value:target_belief_id"
    return target, None


def _clean_text(value: str) -> bool:
    """Return False for text SQLite or UTF-8 would refuse: NUL bytes, lone surrogates."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
