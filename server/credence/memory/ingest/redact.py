"""Secret redaction: replace credentials in text before it is stored, logged, embedded or sent."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import msgspec

from credence.memory.ingest.secret_rules import (
    AUTH_SCHEME_PREFIX,
    AUTHORIZATION_KEY,
    LITERALS,
    RULE_LITERALS,
    RULES,
    SECRET_KEY,
    Rule,
    SecretSpan,
    Span,
    compile_pattern,
    match_text,
)
from credence.memory.ingest.secret_shapes import (
    MIN_SECRET_LENGTH,
    TEMPLATE_STARTS,
    looks_like_secret,
)

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTION_SECRET",
    "RULES",
    "Redaction",
    "Rule",
    "SecretSpan",
    "looks_like_secret",
    "redact",
    "redact_value",
]

# The store's name for the per-installation key of placeholder digests.
REDACTION_SECRET = "redaction"


class Redaction(msgspec.Struct, frozen=True):
    """The result of redacting one text."""

    text: str  # redacted text
    count: int  # number of secrets replaced
    rules: tuple[str, ...]  # rule slug per replacement, in order of appearance (may repeat)


_PLACEHOLDER = compile_pattern(rb"\[REDACTED:[a-z0-9_]{1,32}:[0-9a-f]{8}\]")
# --- redacting ----------------------------------------------------------------------------

_RESERVED = ""  # the "slug" of placeholders that were in the text already: left alone, not counted

# A placeholder in the current text: start, end, slug (or _RESERVED).
_Mark = tuple[int, int, str]


def _placeholder(slug: str, secret: bytes, digest_key: bytes) -> bytes:
    # Keyed: an unsalted hash would let anyone holding the text confirm a guessed password
    # offline. Within one installation the same secret keeps its placeholder, so redacted
    # episodes still correlate.
    digest = hmac.new(digest_key, secret, hashlib.sha256).hexdigest()[:8]
    return f"[REDACTED:{slug}:{digest}]".encode()


def _rule_spans(rule: Rule, data: bytes, marks: list[_Mark]) -> list[Span]:
    """The secrets ``rule`` finds in ``data``, except in matches touching a placeholder."""
    found: list[tuple[Span, int]] = []  # each secret with the end of its match
    next_mark = 0
    for match in rule.regex.finditer(data):
        start, end = match.span()
        while next_mark < len(marks) and marks[next_mark][1] <= start:
            next_mark += 1
        if next_mark < len(marks) and marks[next_mark][0] < end:
            # A placeholder is never redacted again, nor swallowed by a bigger secret. (Checking
            # the whole match is enough: a key found inside a placeholder, as in its slug, is
            # followed by the rest of it, so the secret would touch it too.)
            continue
        span = rule.secret(data, start, end)
        if span is not None and span[0] < span[1]:
            found.append((span, end))
    if not rule.not_followed_by:
        return [span for span, _ in found]
    # Right to left, so that a match followed by the next accepted one counts as followed by its
    # placeholder, as it will be; otherwise crd_…-crd_… would need a second pass.
    kept: list[Span] = []
    next_start = -1
    for span, end in reversed(found):
        if end == len(data) or end == next_start or data[end] not in rule.not_followed_by:
            kept.append(span)
            next_start = span[0]
    kept.reverse()
    return kept


def _substitute(
    data: bytes, marks: list[_Mark], spans: list[Span], slug: str, digest_key: bytes
) -> tuple[bytes, list[_Mark]]:
    """Replace the (sorted, disjoint, mark-free) ``spans`` by placeholders; shift the marks."""
    pieces: list[bytes] = []
    moved: list[_Mark] = []
    position = shift = i = 0
    for start, end in spans:
        while i < len(marks) and marks[i][0] < start:
            moved.append((marks[i][0] + shift, marks[i][1] + shift, marks[i][2]))
            i += 1
        replacement = _placeholder(slug, data[start:end], digest_key)
        pieces += (data[position:start], replacement)
        moved.append((start + shift, start + shift + len(replacement), slug))
        shift += len(replacement) - (end - start)
        position = end
    moved.extend((s + shift, e + shift, rule) for s, e, rule in marks[i:])
    pieces.append(data[position:])
    return b"".join(pieces), moved


def redact(text: str, *, digest_key: bytes) -> Redaction:
    """Replace every secret in ``text`` with ``[REDACTED:<rule>:<8 hex>]``.

    The hex are the start of HMAC-SHA256(``digest_key``, secret); the key is the installation's
    own (``store.secret(REDACTION_SECRET)``).

    Idempotent (placeholders are left alone, and none matches a rule) and linear in the length of
    the text: RE2 matches in linear time, and each rule makes one pass.
    """
    data = text.encode("utf-8", "surrogatepass")
    marks: list[_Mark] = [(*match.span(), _RESERVED) for match in _PLACEHOLDER.finditer(data)]
    # Which literals the text holds. The original text is enough: a match that takes its literal
    # from a placeholder added on the way touches that placeholder, so it is dropped anyway. If
    # the set fails (it cannot run out of memory on a few literals, but if), every rule runs.
    present = LITERALS.Match(data)
    present = frozenset(present) if present is not None else None
    changed = False
    for rule, literal_ids in zip(RULES, RULE_LITERALS, strict=True):
        if present is not None and literal_ids and present.isdisjoint(literal_ids):
            continue
        spans = _rule_spans(rule, data, marks)
        if spans:
            data, marks = _substitute(data, marks, spans, rule.slug, digest_key)
            changed = True
    spans = _wrapped_secrets(data, marks, digest_key)
    if spans:
        data, marks = _substitute(data, marks, spans, "base64_secret", digest_key)
        changed = True
    if not changed:
        return Redaction(text=text, count=0, rules=())
    slugs = tuple(slug for _, _, slug in marks if slug != _RESERVED)
    return Redaction(text=data.decode("utf-8", "surrogatepass"), count=len(slugs), rules=slugs)


_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/]{24,4096}={0,2}")


def _wrapped_secrets(data: bytes, marks: list[_Mark], digest_key: bytes) -> list[Span]:
    """Runs of base64 whose decoded text holds a secret (``echo … | base64`` in a log)."""
    spans: list[Span] = []
    for match in _BASE64_RUN.finditer(data):
        start, end = match.span()
        if any(s < end and start < e for s, e, _ in marks) or (end - start) % 4:
            continue
        try:
            decoded = base64.b64decode(data[start:end], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        readable = decoded.isprintable() or "\n" in decoded
        if readable and redact(decoded, digest_key=digest_key).count:
            spans.append((start, end))
    return spans


def _placeholder_text(slug: str, secret: str, digest_key: bytes) -> str:
    return _placeholder(slug, secret.encode("utf-8", "surrogatepass"), digest_key).decode()


def _redact_keyed(key: object, value: str, digest_key: bytes) -> tuple[str, int]:
    """Redact a string, using its dict key as context: ``{"password": "..."}``."""
    result = redact(value, digest_key=digest_key)
    if result.count or not isinstance(key, str):
        return result.text, result.count
    raw_key = key.encode("utf-8", "surrogatepass")
    if AUTHORIZATION_KEY.search(raw_key):
        data = value.encode("utf-8", "surrogatepass")
        scheme = AUTH_SCHEME_PREFIX.match(data)
        if scheme is not None and scheme.end() < len(data):
            credential = match_text(data, scheme.end(), len(data))
            if not credential.startswith(TEMPLATE_STARTS) and "[REDACTED:" not in credential:
                prefix = match_text(data, 0, scheme.end())
                return prefix + _placeholder_text("authorization", credential, digest_key), 1
        elif looks_like_secret(value):
            return _placeholder_text("authorization", value, digest_key), 1
    elif SECRET_KEY.search(raw_key) and looks_like_secret(value):
        return _placeholder_text("generic_secret", value, digest_key), 1
    return value, 0


@dataclass(slots=True)
class _Frame:
    """A container being rebuilt by redact_value."""

    items: Iterator[Any]
    built: dict[Any, Any] | list[Any]
    is_tuple: bool
    parent: _Frame | None
    key: object  # where the finished container goes in its parent dict

    def add(self, key: object, item: object) -> None:
        if isinstance(self.built, dict):
            self.built[key] = item
        else:
            self.built.append(item)


def _open(
    container: dict[Any, Any] | list[Any] | tuple[Any, ...], parent: _Frame | None, key: object
) -> _Frame:
    if isinstance(container, dict):
        return _Frame(iter(container.items()), {}, False, parent, key)
    return _Frame(iter(container), [], isinstance(container, tuple), parent, key)


_DONE = object()
_Value = TypeVar("_Value")


def redact_value(value: _Value, *, digest_key: bytes) -> tuple[_Value, int]:
    """Redact every string inside a JSON-like value (dict/list/str/other); return (value, count).

    Dict keys are redacted too, and a key gives its value context: ``{"password": "Xy7#kP9$mQ"}``
    is redacted although the bare string would not be. Other values come back unchanged; the
    input is never modified. Iterative, so deep nesting cannot exhaust the stack.
    """
    total = 0

    def scalar(item: object, key: object = None) -> object:
        nonlocal total
        if not isinstance(item, str):
            return item
        text, count = _redact_keyed(key, item, digest_key)
        total += count
        return text

    if not isinstance(value, dict | list | tuple):
        return cast("_Value", scalar(value)), total
    frame = _open(value, None, None)
    while True:
        entry: Any = next(frame.items, _DONE)
        if entry is _DONE:
            finished = tuple(frame.built) if frame.is_tuple else frame.built
            if frame.parent is None:
                # Containers are rebuilt as the same type they came in as.
                return cast("_Value", finished), total
            frame.parent.add(frame.key, finished)
            frame = frame.parent
            continue
        if isinstance(frame.built, dict):
            key, child = entry
            new_key = scalar(key)
        else:
            key = new_key = None
            child = entry
        if isinstance(child, dict | list | tuple):
            frame = _open(child, frame, new_key)
        else:
            frame.add(new_key, scalar(child, key))
