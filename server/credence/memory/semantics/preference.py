"""Preferences and orders: "A over B", "A, not B", "A rather than B", and their reversal."""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from credence.memory.semantics.lexicon import CONVERSE_OF, PREFERENCE_MARKERS
from credence.memory.semantics.quantities import says_a_number
from credence.memory.semantics.statements import stem

# Words skipped when looking for what a preference marker sets against what.
FLANK_SKIP: Final = frozenset({"a", "an", "the", "using", "use", "with", "for", "prefer"})


def swapped(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """True when the words ``b`` are the words ``a`` with the two sides of a preference or
    order exchanged: "Use tabs, not spaces" / "Use spaces, not tabs"; "Prefer A over B" /
    "Prefer B over A"."""
    if sorted(a) != sorted(b) or a == b:
        return False
    start = 0
    while start < len(a) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    flanks_a, flanks_b = _flanks(a), _flanks(b)
    # The same words reordered can leave a marker's flanks on one side only ("If a test fails,
    # report it before a fix" / "Before a fix, report it if a test fails").
    if flanks_a is not None and flanks_b is not None and flanks_a == flanks_b[::-1]:
        return True
    middle_a, middle_b = a[start : len(a) - end], b[start : len(b) - end]
    for marker in PREFERENCE_MARKERS:
        width = len(marker)
        for cut in range(1, len(middle_a) - width):
            if middle_a[cut : cut + width] != marker:
                continue
            left, right = middle_a[:cut], middle_a[cut + width :]
            if middle_b == right + marker + left:
                return True
    return sides_exchanged(a, b)


def _sides(words: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]] | None:
    """The words only left and only right of the first preference marker, if there is one. A
    comparison word before a number bounds a value ("shorter than 500 km", "over 30", "before
    9"); it sets no two things against each other ("tabs rather than four spaces" does)."""
    for marker in PREFERENCE_MARKERS:
        width = len(marker)
        if not _marks(marker, words):
            continue
        for cut in range(1, len(words) - width + 1):
            bounds = marker in _BOUNDING and _a_number_at(words, cut + width)
            if words[cut : cut + width] == marker and not bounds:
                left, right = frozenset(words[:cut]), frozenset(words[cut + width :])
                return left - right, right - left
    return None


_BOUNDING: Final = frozenset({("than",), ("over",), ("above",), ("before",), ("after",)})


def _a_number_at(words: tuple[str, ...], position: int) -> bool:
    return position < len(words) and says_a_number(words[position])


@lru_cache(maxsize=16384)
def _stemmed_sides(words: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]] | None:
    """:func:`_sides` (markers found on the words as written), each side by stem."""
    sides = _sides(words)
    if sides is None:
        return None
    left, right = (frozenset(stem(word) for word in side) for side in sides)
    return left - right, right - left


def sides_exchanged(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """A word moved from before the preference marker to after it and another the other way,
    compared by stem: "Book window seats, not aisle seats" / "Book aisle seats, not window
    seats"; "Email the landlord instead of phoning" / "Phone the landlord rather than
    emailing". Each sentence may use its own marker."""
    sides_a, sides_b = _stemmed_sides(a), _stemmed_sides(b)
    if sides_a is None or sides_b is None:
        return False
    if _passive(a) != _passive(b):
        return False  # "looks after the kids" / "the kids are looked after by …": one order
    return bool(sides_a[0] & sides_b[1]) and bool(sides_a[1] & sides_b[0])


@lru_cache(maxsize=16384)
def said_from_the_other_end(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, str] | None:
    """(the relation word of ``b``, its converse in ``a``) when ``b`` says ``a`` from the other
    end: its two sides exchanged and the relation word turned to its converse ("The user
    showers before bed" / "The user goes to bed after showering", "Maya is older than Leo" /
    "Leo is younger than Maya"); else None."""
    mine, theirs = set(a), set(b)
    for position, word in enumerate(b):
        if word not in CONVERSE_OF or word in mine:
            continue
        for converse in CONVERSE_OF[word] & mine - theirs:
            if sides_exchanged(a, (*b[:position], converse, *b[position + 1 :])):
                return word, converse
    return None


_PASSIVE_AUXILIARIES: Final = frozenset({"is", "are", "was", "were", "be", "been", "being"})


@lru_cache(maxsize=16384)
def _passive(words: tuple[str, ...]) -> bool:
    """Whether ``words`` hold a passive with its agent ("are looked after by", "is reviewed
    by"), which names the doer after the thing done."""
    return any(
        word in _PASSIVE_AUXILIARIES and "by" in words[position + 2 : position + 4]
        for position, word in enumerate(words)
    )


def _marks(marker: tuple[str, ...], words: tuple[str, ...]) -> bool:
    """Whether ``marker`` sets two sides against each other in ``words``: "to" only beside a
    verb of preferring ("prefers tea to coffee"; "requires tests to pass" sets nothing)."""
    return marker != ("to",) or not _PREFERRING.isdisjoint(words)


_PREFERRING: Final = frozenset(
    {"prefer", "prefers", "preferred", "preferring", "preferable", "favour", "favours"}
    | {"favor", "favors", "favoured", "favored"}
)


@lru_cache(maxsize=16384)
def _flanks(words: tuple[str, ...]) -> tuple[str, str] | None:
    """The nearest content words either side of the first preference marker, if both exist."""
    for marker in PREFERENCE_MARKERS:
        width = len(marker)
        if not _marks(marker, words):
            continue
        for cut in range(1, len(words) - width):
            if words[cut : cut + width] != marker:
                continue
            left = [word for word in words[:cut] if word not in FLANK_SKIP]
            right = [word for word in words[cut + width :] if word not in FLANK_SKIP]
            if left and right and left[-1] != right[0]:
                return left[-1], right[0]
            return None
    return None
