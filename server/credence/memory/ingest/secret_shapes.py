"""Whether a value looks like a secret: length, character classes and entropy."""

from __future__ import annotations

import math
import re
import string
from collections import Counter

TEMPLATE_STARTS = ("$", "{", "<", "%")  # ${TOKEN}, {{ secret }}, <password>, %(pw)s

# --- judging values -----------------------------------------------------------------------

_LOWER = frozenset(string.ascii_lowercase)
_UPPER = frozenset(string.ascii_uppercase)
_DIGITS = frozenset(string.digits)
_ALPHANUMERIC = _LOWER | _UPPER | _DIGITS
MIN_SECRET_LENGTH = 8
# A value longer than any password is judged by its beginning, which keeps judging cheap and lets
# the stdlib engine run the shape checks: bounded input, no ambiguous repetition.
_JUDGED_LENGTH = 1024
_WORDISH = re.compile(r"[(\[]?[A-Za-z]+(?:[_.\-][A-Za-z]+)*[.!?:)\]]*")  # "expired." too
_CODEISH = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.[A-Za-z_$][\w$]*)+(?:[(\[].*)?|[(\[].*)", re.ASCII)
_PATHISH = re.compile(r"~?/|\.\.?/|[A-Za-z]:\\")


_N_LOG2_N = tuple(n * math.log2(n) if n else 0.0 for n in range(_JUDGED_LENGTH + 1))


def _shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` (at most _JUDGED_LENGTH characters) in bits per character."""
    # H = log2(L) - sum(n * log2(n)) / L over the count n of each distinct character.
    length = len(value)
    return math.log2(length) - sum(map(_N_LOG2_N.__getitem__, Counter(value).values())) / length


def _character_classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters ``value`` uses."""
    chars = set(value)
    return (
        (not chars.isdisjoint(_LOWER))
        + (not chars.isdisjoint(_UPPER))
        + (not chars.isdisjoint(_DIGITS))
        + bool(chars - _ALPHANUMERIC)
    )


def looks_like_secret(value: str) -> bool:
    """Whether a value given to a secret-sounding key is random enough to be a real secret.

    Ordinary words and identifiers (``reset``, ``confidential``, ``YOUR_API_KEY``), code
    (``os.environ.get(...)``), paths, URLs, template placeholders and redaction placeholders are
    not; ``Xy7#kP9$mQ2!`` and ``changeme123`` are.
    """
    if len(value) < MIN_SECRET_LENGTH or value.startswith(TEMPLATE_STARTS):
        return False
    sample = value[:_JUDGED_LENGTH]
    if "://" in sample or "[REDACTED:" in sample or _character_classes(sample) < 2:
        return False
    if _WORDISH.fullmatch(sample) or _CODEISH.fullmatch(sample) or _PATHISH.match(sample):
        return False
    # 8 or 9 characters cannot reach 3 bits per character unless nearly all differ, so for them
    # the bar is relative to the most their length allows.
    return _shannon_entropy(sample) >= min(3.0, math.log2(len(sample)) - 0.3)


def has_letter_and_digit(value: str) -> bool:
    chars = set(value)
    return not chars.isdisjoint(_DIGITS) and not chars.isdisjoint(_LOWER | _UPPER)
