"""Acronyms one side writes and the other spells out: "HR" / "human resources"."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from credence.memory.semantics.tokens import STOP_WORDS

# Two to six capitals standing alone: "HR", "DMV", "CI". Not a word in capitals for emphasis,
# which a sentence of capitals would hold many of; those are rare in beliefs and stay apart.
_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")
# Small words an acronym skips: "Department of Motor Vehicles" is "DMV".
_SKIPPED: Final = ("of", "and", "the", "for", "&")
# The fewest letters a spelled-out word has.
_MIN_LETTERS: Final = 3


@lru_cache(maxsize=4096)
def _spelled_out(acronym: str) -> re.Pattern[str]:
    """Words whose first letters are the acronym's, in order, small words skipped between."""
    skipped = "|".join(re.escape(word) for word in _SKIPPED)
    gap = rf"(?:\s+(?:{skipped}))*\s+"
    words = [rf"{letter}[a-z]{{{_MIN_LETTERS - 1},}}" for letter in acronym.lower()]
    return re.compile(r"\b" + gap.join(words) + r"\b", re.IGNORECASE)


@lru_cache(maxsize=16384)
def _acronyms(text: str) -> frozenset[str]:
    return frozenset(_ACRONYM.findall(text))


def _abbreviated(side: str, other: str) -> str:
    """``side`` with each acronym only ``other`` writes put in place of its spelled-out words,
    when those are words of meaning ("has rules" spells no "HR")."""
    for acronym in sorted(_acronyms(other) - _acronyms(side)):
        for match in _spelled_out(acronym).finditer(side):
            words = match.group().casefold().split()
            if all(word in _SKIPPED or word not in STOP_WORDS for word in words):
                side = side[: match.start()] + acronym + side[match.end() :]
                break
    return side


def acronyms_written_alike(old: str, new: str) -> tuple[str, str]:
    """The two texts with words one spells out ("the Department of Motor Vehicles") put as the
    acronym the other writes ("the DMV"), so an acronym is read as the words it stands for."""
    if _acronyms(old) == _acronyms(new):
        return old, new  # no acronym, or the same ones: nothing spelled out to fold
    return _abbreviated(old, new), _abbreviated(new, old)
