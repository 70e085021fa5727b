"""Value slots structure alone misses: a name opening the sentence, a value under a paraphrase."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Final

from credence.memory.semantics.statement_words import KIN
from credence.memory.semantics.statements import Change, Statement, Word
from credence.memory.semantics.thesaurus import COMMON_VERBS, Synonyms, same_bag

# Words after a sentence's subject that show it is one ("Sofia is …", "Jira has …").
_FINITE_TEXT: Final = (
    "is are was were has have had will would should shall must can could may might"
)
_FINITE: Final = frozenset(f"{_FINITE_TEXT} might does do did owns".split())
# A subject name is short: "Sofia", "Plain text", "Mexican Spanish".
MAX_NAME_WORDS: Final = 3
# What stays equal around the swapped name must be a statement of its own.
MIN_SHARED_CONTENT: Final = 2


def opening_swap(
    old_words: tuple[str, ...], new_words: tuple[str, ...], a: Statement, b: Statement
) -> Change | None:
    """The name that opens both sentences, swapped for another with the rest unchanged, or None.

    "Sofia is the product owner for the app" / "Liam is the product owner for the app": the
    same role given to another person (or tool, format, locale). A capitalised opening word
    is a name only when it is not a common verb (an imperative opens with one: "Store …" /
    "Record …") and what follows it reads as the sentence's verb ("is", "owns", "tracks").
    ``old_words``/``new_words`` are the raw lowercased words of each text.
    """
    shared = _common_suffix(a.canons, b.canons)
    a_end, b_end = len(a.canons) - shared, len(b.canons) - shared
    if not (0 < a_end <= MAX_NAME_WORDS and 0 < b_end <= MAX_NAME_WORDS):
        return None
    if set(a.canons[:a_end]) & set(b.canons[:b_end]):
        return None  # "Tom prefers mornings" / "Sara prefers afternoons": two changes
    if len(a.content & b.content) < MIN_SHARED_CONTENT:
        return None
    old_name, new_name = a.words[:a_end], b.words[:b_end]
    if not (_reads_as_subject(old_name, old_words) and _reads_as_subject(new_name, new_words)):
        return None
    return Change(old=_surface(old_name), new=_surface(new_name), kind="name")


def _common_suffix(first: tuple[str, ...], second: tuple[str, ...]) -> int:
    """How many canonical words the two sequences end with in common."""
    count = 0
    while count < min(len(first), len(second)) and first[-1 - count] == second[-1 - count]:
        count += 1
    return count


def _reads_as_subject(name: tuple[Word, ...], raw: tuple[str, ...]) -> bool:
    first = name[0]
    if not first.surface[:1].isupper() or first.surface.casefold() in COMMON_VERBS:
        return False
    if not raw or raw[0] != first.surface.casefold():
        return False  # something ("The", "Always") stands before the name
    width = sum(len(word.surface.split()) for word in name)
    following = raw[width] if width < len(raw) else ""
    third_person = following.endswith("s") and not following.endswith("ss")
    return following in _FINITE or third_person


def _surface(words: tuple[Word, ...]) -> str:
    return " ".join(word.surface for word in words)


def value_swap(
    old_marked: AbstractSet[str],
    new_marked: AbstractSet[str],
    a: Statement,
    b: Statement,
    old_meaning: Sequence[str],
    new_meaning: Sequence[str],
) -> tuple[Change, tuple[list[str], list[str]]] | None:
    """One value swapped for another of its kind under a paraphrase, or None.

    "The flight to Lisbon departs at 7:45 pm" / "The Lisbon flight leaves at 07:45": exactly
    one marked token (number, time, name, unit, …) on each side differs, both of one kind.
    Returns the change and the two remaining bags of meaning words, which the caller must find
    equal synonym for synonym (see :func:`synonyms_agree`).
    """
    gone, added = old_marked - new_marked, new_marked - old_marked
    if len(gone) != 1 or len(added) != 1:
        return None
    (old_value,), (new_value,) = gone, added
    old_word = next((word for word in a.words if word.canon == old_value), None)
    new_word = next((word for word in b.words if word.canon == new_value), None)
    if old_word is None or new_word is None or _kin(old_word.kind) != _kin(new_word.kind):
        return None
    rest = (
        [word for word in old_meaning if word != old_value],
        [word for word in new_meaning if word != new_value],
    )
    return Change(old=old_word.surface, new=new_word.surface, kind=old_word.kind), rest


def synonyms_agree(rest: tuple[list[str], list[str]], sets: Synonyms) -> bool:
    """Whether the words around a swapped value say the same, synonym for synonym."""
    return bool(rest[0]) and same_bag(rest[0], rest[1], sets)


def _kin(kind: str) -> str:
    # A file format and a product name are both named formats ("CSV" / "Excel").
    kind = "name" if kind == "format" else kind
    return KIN.get(kind, kind)


def unit_change(a: Statement, b: Statement) -> Change | None:
    """The word after an equal number swapped for another ("20 km" / "20 miles"): a unit."""
    if len(a.words) != len(b.words):
        return None
    differ = [
        position
        for position, (x, y) in enumerate(zip(a.words, b.words, strict=True))
        if x.canon != y.canon
    ]
    if len(differ) != 1 or differ[0] == 0:
        return None
    # The unit follows its number, at most one word later ("20 square metres").
    if not any(
        word.kind == "number" or word.kind.startswith("quantity")
        for word in a.words[max(0, differ[0] - 2) : differ[0]]
    ):
        return None
    old, new = a.words[differ[0]], b.words[differ[0]]
    return Change(old=old.surface, new=new.surface, kind="unit")
