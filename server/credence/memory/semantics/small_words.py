"""Small words that change what a statement says: "and" / "or", quantifiers, directions, roles."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Final

from credence.memory.semantics.lexicon import PEOPLE

# Quantifiers by what they claim; "all", "every" and "each" claim the same.
_QUANTIFIERS: Final = {
    **dict.fromkeys(("all", "every", "each"), "all"),
    "most": "most",
    "many": "many",
    **dict.fromkeys(("some", "several"), "some"),
    "few": "few",
}


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


def roles_exchanged(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether two words apart swapped places and nothing else moved: "The user's sister lives
    with their mother" / "The user's mother lives with their sister"."""
    if len(old) != len(new) or set(old) != set(new) or sorted(old) != sorted(new):
        return False
    apart = [i for i, pair in enumerate(zip(old, new, strict=True)) if pair[0] != pair[1]]
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


# How strongly a degree word says it: "mildly spicy" is not "very spicy".
_DEGREES: Final = {
    **dict.fromkeys(("mildly", "slightly", "somewhat", "fairly", "moderately", "little"), "low"),
    **dict.fromkeys(("very", "extremely", "highly", "incredibly", "super", "too"), "high"),
}
# Words that set a relation between two things; one swapped for another changes it: "Tuesdays
# and Thursdays" / "Tuesdays through Thursdays", "to the client" / "from the client".
_RELATIONS: Final = frozenset(
    {"to", "from", "by", "into", "onto", "toward", "towards", "against", "for"}
    | {"and", "or", "through", "thru", "until", "till"}
)


def degree_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether both grade a quality and grade it differently: "mildly" / "very" spicy."""
    mine = {_DEGREES[word] for word in old if word in _DEGREES}
    theirs = {_DEGREES[word] for word in new if word in _DEGREES}
    return bool(mine) and bool(theirs) and mine != theirs


def alternation_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one says "every other" (or "every second") and the other plain "every"."""
    return _alternates(old) != _alternates(new)


def _alternates(words: Sequence[str]) -> bool:
    return any(
        word == "every" and tuple(words[position + 1 : position + 2]) in (("other",), ("second",))
        for position, word in enumerate(words)
    )


def in_or_out_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one puts a thing "in" what the other puts it "out of": "in network" / "out of
    network", "in stock" / "out of stock"."""
    return bool(_outside(old) & _inside(new)) or bool(_outside(new) & _inside(old))


def _outside(words: Sequence[str]) -> set[str]:
    return {words[i + 2] for i in range(len(words) - 2) if tuple(words[i : i + 2]) == ("out", "of")}


def _inside(words: Sequence[str]) -> set[str]:
    return {words[i + 1] for i in range(len(words) - 1) if words[i] == "in"}


def people_counted_differently(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether a person is one on one side and several on the other: "brother" / "brothers"."""
    mine, theirs = _people(old), _people(new)
    return any(theirs.get(person, plural) != plural for person, plural in mine.items())


def _people(words: Sequence[str]) -> dict[str, bool]:
    found = {}
    for word in words:
        if word in PEOPLE:
            found[word] = False
        elif word.endswith("s") and word[:-1] in PEOPLE:
            found[word[:-1]] = True
        elif word == "children":
            found["child"] = True
    return found


def relation_swapped(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether the two differ in one word only, a word that relates two things: "to" / "from",
    "and" / "through"."""
    changed = _one_word_changed(old, new)
    return changed is not None and changed[0] in _RELATIONS and changed[1] in _RELATIONS


# Words that, added to a rule, hold it back rather than add to it: an exception ("except",
# "unless"), a restriction ("only"), a weaker frequency ("sometimes", "rarely", "hardly"), an
# approximation ("almost", "partly"), a lack ("lacks"), a stand-in ("acting", "former").
_QUALIFIERS: Final = frozenset(
    {"except", "excluding", "unless", "only", "sometimes", "occasionally", "rarely", "seldom"}
    | {"hardly", "barely", "scarcely", "almost", "nearly", "partly", "partially", "mostly"}
    | {"lack", "lacks", "lacked", "lacking", "acting", "former", "interim"}
)


def qualifier_added(old: Sequence[str], new: Sequence[str]) -> str:
    """The word ``new`` adds that holds ``old``'s rule back, or "": "Tests run on every push"
    / "… except to main", "The user checks Slack" / "The user rarely checks Slack", "All
    members" / "Some members"."""
    added = sorted(_QUALIFIERS & (set(new) - set(old)))
    if added:
        return added[0]
    if quantifier_differs(old, new):  # "All team members" / "Some team members"
        return next(word for word in new if word in _QUANTIFIERS)
    return ""
