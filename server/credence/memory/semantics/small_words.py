"""Small words that change what a statement says: "and" / "or", quantifiers, directions, roles."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Final

# Quantifiers by what they claim; "all", "every" and "each" claim the same.
_QUANTIFIERS: Final = {
    **dict.fromkeys(("all", "every", "each"), "all"),
    "most": "most",
    "many": "many",
    **dict.fromkeys(("some", "several"), "some"),
    "few": "few",
}
# Prepositions that set which way something goes or how a value is reached: "to" / "from" the
# client, raise the limit "by" 10 / "to" 10.
_DIRECTIONS: Final = frozenset({"to", "from", "by", "into", "onto", "toward", "towards"})


def connective_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one joins what the other separates: "Python and Go" / "Python or Go"."""
    if "or" not in old and "or" not in new:
        return False
    only_old, only_new = set(old) - set(new), set(new) - set(old)
    return ("and" in only_old and "or" in only_new) or ("or" in only_old and "and" in only_new)


def quantifier_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether both quantify and claim differently: "all invoices" / "most invoices"."""
    mine, theirs = _quantities(tuple(old)), _quantities(tuple(new))
    return bool(mine) and bool(theirs) and mine != theirs


@lru_cache(maxsize=16384)
def _quantities(words: tuple[str, ...]) -> frozenset[str]:
    """What the quantifiers in ``words`` claim; "at most" bounds a value and claims nothing."""
    return frozenset(
        _QUANTIFIERS[word]
        for position, word in enumerate(words)
        if word in _QUANTIFIERS
        and not (word == "most" and position and words[position - 1] == "at")
    )


def direction_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether the two differ in one word only, a preposition of direction: "Send the invoice
    to the client" / "… from the client"."""
    changed = _one_word_changed(old, new)
    return changed is not None and changed[0] in _DIRECTIONS and changed[1] in _DIRECTIONS


def roles_exchanged(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether two words apart swapped places and nothing else moved: "The user's sister lives
    with their mother" / "The user's mother lives with their sister"."""
    if len(old) != len(new) or set(old) != set(new) or sorted(old) != sorted(new):
        return False
    apart = [
        position
        for position, (mine, theirs) in enumerate(zip(old, new, strict=True))
        if mine != theirs
    ]
    if len(apart) != 2:
        return False
    first, second = apart
    # Neighbours that swap are a rewording ("schedule meetings" / "meetings … scheduled").
    return second - first > 1 and old[first] == new[second] and old[second] == new[first]


def _one_word_changed(old: Sequence[str], new: Sequence[str]) -> tuple[str, str] | None:
    if len(old) != len(new):
        return None
    changed = [(mine, theirs) for mine, theirs in zip(old, new, strict=True) if mine != theirs]
    return changed[0] if len(changed) == 1 else None
