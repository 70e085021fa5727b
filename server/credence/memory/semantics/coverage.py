"""Paraphrase coverage: which meaning words of one text the other answers, and how."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Final

from credence.memory.semantics.statements import stem
from credence.memory.semantics.thesaurus import Synonyms, synonymous

# One word family by a shared opening ("allergic" / "allergy"): the shared part must be a
# real stem, most of the shorter word, and the longer must end soon after it, so "internal"
# and "international" stay two words.
MIN_FAMILY_STEM: Final = 6
MIN_FAMILY_SHARE: Final = 0.8
MAX_FAMILY_ENDING: Final = 3
# A word that opens another is of its family from this length ("indent" / "indentation").
MIN_OPENING_WORD: Final = 4
# Endings that make a smaller thing, not the same one: a novella is no novel, a booklet no book.
_DIMINUTIVES: Final = frozenset({"la", "ella", "ette", "let", "ling"})
# "fully" is an adverb of "full"; "only" and "ugly" are too short to be one.
MIN_ADVERB: Final = 5
# A reworded paraphrase keeps at least this share of each side's meaning words.
MIN_ANSWERED_SHARE: Final = 0.5


@lru_cache(maxsize=65536)
def one_family(first: str, second: str) -> bool:
    """Whether two stems are one word family: the same, or sharing an opening of at least
    ``MIN_FAMILY_STEM`` letters that is most of the shorter one."""
    if first == second:
        return True
    if not (first.isalpha() and second.isalpha()):
        return False
    if opens(first, second):
        return True
    short, long = sorted((first, second), key=len)
    shared = 0
    while shared < len(short) and short[shared] == long[shared]:
        shared += 1
    return (
        shared >= MIN_FAMILY_STEM
        and shared >= MIN_FAMILY_SHARE * len(short)
        and len(long) - shared <= MAX_FAMILY_ENDING
    )


def opens(first: str, second: str) -> bool:
    """Whether the shorter word, of at least ``MIN_OPENING_WORD`` letters, opens the longer:
    the narrow kind of word family ("indent" / "indentation")."""
    short, long = sorted((first, second), key=len)
    return (
        len(short) >= MIN_OPENING_WORD
        and long.startswith(short)
        and long[len(short) :] not in _DIMINUTIVES
    )


@lru_cache(maxsize=16384)
def adjectives_of(word: str) -> frozenset[str]:
    """The adjectives an adverb may be made from, as stems ("fully" -> "full", "directly" ->
    "direct", "easily" -> "easy"), else just ``word``."""
    if not (word.endswith("ly") and len(word) >= MIN_ADVERB):
        return frozenset({word})
    bases = {word[:-2]}
    if word.endswith("lly"):
        bases.add(word[:-1])  # "fully" from "full"
    if word.endswith("ily"):
        bases.add(word[:-3] + "y")  # "easily" from "easy"
    return frozenset(stem(base) for base in bases if len(base) >= MIN_ADVERB - 2)


def adverb_synonym(word: str, other: str, sets: Synonyms) -> bool:
    """Whether two stems are synonyms once an adverb is read as its adjective ("fully" /
    "whole" through "full")."""
    return any(
        synonymous(plain, other_plain, sets)
        for plain in adjectives_of(word)
        for other_plain in adjectives_of(other)
    )


def answers(word: str, other: str, sets: Synonyms) -> bool:
    """Whether stem ``other`` says what stem ``word`` says: the same, a synonym, one family, or
    an adverb and an adjective that are synonyms (see :func:`adverb_synonym`)."""
    return one_family(word, other) or adverb_synonym(word, other, sets)


def unanswered(first: Sequence[str], second: Sequence[str], sets: Synonyms) -> list[int]:
    """Positions in ``first`` whose word no word of ``second`` answers (see :func:`answers`)."""
    said = frozenset(second)
    return [
        position
        for position, word in enumerate(first)
        if word not in said and not any(answers(word, other, sets) for other in second)
    ]


def _one_run(positions: list[int]) -> bool:
    return bool(positions) and positions[-1] - positions[0] == len(positions) - 1


def one_slot_rewritten(first: Sequence[str], second: Sequence[str], sets: Synonyms) -> bool:
    """Whether the words only one side says form one run in each, standing at the same place
    among the words both say ("Play upbeat music" / "Play slow, calming music"): a value
    rewritten in place, the shape of a correction rather than of a paraphrase."""
    mine, theirs = unanswered(first, second, sets), unanswered(second, first, sets)
    return _in_place(first, second, mine, theirs, sets)


def _in_place(
    first: Sequence[str],
    second: Sequence[str],
    mine: list[int],
    theirs: list[int],
    sets: Synonyms,
) -> bool:
    if not (_one_run(mine) and _one_run(theirs)):
        return False
    if mine[0] == theirs[0]:
        return True
    before = mine[0] > 0 and theirs[0] > 0
    if before and answers(first[mine[0] - 1], second[theirs[0] - 1], sets):
        return True
    after = mine[-1] + 1 < len(first) and theirs[-1] + 1 < len(second)
    return after and answers(first[mine[-1] + 1], second[theirs[-1] + 1], sets)


def reworded(first: Sequence[str], second: Sequence[str], sets: Synonyms) -> bool:
    """Whether two sequences of meaning words can be one lesson in other words: each side's
    words all answered by the other's (several may answer one: "full test suite" /
    "complete suite"), or both sides reword something while keeping at least
    ``MIN_ANSWERED_SHARE`` of their words and the rewording is not one slot rewritten in place
    (see :func:`one_slot_rewritten`). Words added on one side only are a refinement, never
    this; values, scope, polarity and opposites are the caller's to rule out first."""
    if not first or not second:
        return False
    mine, theirs = unanswered(first, second, sets), unanswered(second, first, sets)
    if not mine and not theirs:
        return True
    if not mine or not theirs:
        return False
    share = min(1 - len(mine) / len(first), 1 - len(theirs) / len(second))
    return share >= MIN_ANSWERED_SHARE and not _in_place(first, second, mine, theirs, sets)
