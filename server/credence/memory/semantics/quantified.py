"""What "all", "every", "each" and "any" range over, and a part named in their place."""

from __future__ import annotations

from typing import Final

from credence.memory.semantics.statement_words import WEEKDAYS
from credence.memory.semantics.statements import stem
from credence.memory.semantics.tokens import NEGATION_WORDS, STOP_WORDS, fold_plural

_UNIVERSAL: Final = frozenset({"all", "every", "each", "any"})
# "every day", "each second Saturday": a recurrence, not a whole with parts.
_TIMES: Final = WEEKDAYS | {"day", "week", "month", "year", "morning", "evening", "night"}
_ORDINALS: Final = frozenset({"other", "second", "third", "fourth"})


def part_named_for_all(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """Whether one says "all" of a thing and the other names the thing with a word before it
    that the first lacks, which says what part: "all documents" / "client-facing documents",
    "any branch" / "feature branches"."""
    for mine, theirs in ((old, new), (new, old)):
        heads = _quantified_heads(mine)
        if not heads or not _UNIVERSAL.isdisjoint(theirs):
            continue
        my_stems = {stem(word) for word in mine}
        for position in range(1, len(theirs)):
            before = theirs[position - 1]
            if (
                stem(theirs[position]) in heads
                and before not in STOP_WORDS
                and stem(before) not in my_stems
            ):
                return True
    return False


def _quantified_heads(words: tuple[str, ...]) -> set[str]:
    """The stem of each noun a whole is claimed of: the last word of the run of content words
    after "all", "every", "each" or "any" ("all Python files" → "file"). Not "any" under a
    negation ("no meetings", "not any meetings" claim none), "of all cuisines" (the field of
    a superlative) or a recurrence ("every day", "every second Saturday")."""
    negated = not NEGATION_WORDS.isdisjoint(words)
    heads = set()
    for position, word in enumerate(words):
        opens_superlative = word == "all" and position and words[position - 1] == "of"
        if word not in _UNIVERSAL or (word == "any" and negated) or opens_superlative:
            continue
        run: list[str] = []
        for following in words[position + 1 :]:
            if following in STOP_WORDS and run:
                break
            if following not in STOP_WORDS:
                run.append(following)
        if run and run[0] not in _ORDINALS and fold_plural(run[-1]) not in _TIMES:
            heads.add(stem(run[-1]))
    return heads
