"""What a statement is about: when a changed name names the thing, not its value."""

from __future__ import annotations

from typing import Final

from credence.memory.semantics.lexicon import FEELING_VERBS
from credence.memory.semantics.statements import Change, Statement, Word, aligned_spans, stem
from credence.memory.semantics.wording import words_of


def another_subject(changes: list[Change]) -> bool:
    """Two or more named slots changed at once ("The iOS app is written in Swift" / "The
    Android app is written in Kotlin"): two statements about two things, not a correction.
    Numbers, quantities and times changed together stay a value change."""
    return len(changes) > 1 and all(
        not change.kind.startswith(("quantity", "number", "time")) for change in changes
    )


# Words that open a noun phrase, and prepositions that name what a rule is about.
NOUN_OPENERS: Final = frozenset({"the", "a", "an", "our", "my", "your", "their", "this", "that"})
_ABOUT: Final = frozenset({"for", "about", "of", "regarding"})
_OPENERS: Final = frozenset((word,) for word in NOUN_OPENERS)
_FEELINGS: Final = frozenset(stem(word) for word in FEELING_VERBS)


def subject_slot(old: str, a: Statement, b: Statement) -> str:
    """The changed name when it names what the statement is *about* rather than its value, or
    "": a name after "for"/"about"/"of" ("Invoices for Acme go to Maria"), or a modifier in
    the opening noun phrase ("The Berlin office closes at 6pm"). Numbers and times are values
    wherever they stand."""
    for (start, end), _ in aligned_spans(a, b):
        span = a.words[start:end]
        if not span or any(word.kind.startswith(("quantity", "number", "time")) for word in span):
            continue
        before = start - 1
        while before >= 0 and a.words[before].canon in NOUN_OPENERS:
            before -= 1
        if before >= 0 and a.words[before].canon in _ABOUT:
            return surface_of(span)
        opening = before < 0 and (start > 0 or words_of(old)[:1] in _OPENERS)
        if opening and end < len(a.words) and a.words[end].canon in a.content:
            return surface_of(span)
        if start == 0 and holds_a_taste(a, end):
            return surface_of(span)
    return ""


def holds_a_taste(a: Statement, end: int) -> bool:
    """Whether the words up to ``end`` open ``a`` as the holder of a taste ("Alice prefers
    meetings before noon"): another holder is another person, not a correction."""
    return end < len(a.words) and a.words[end].canon in _FEELINGS


def apart_around_the_subject(changes: list[Change], a: Statement, b: Statement) -> str:
    """The first change when two changes stand apart around a word both say ("The user's
    weekday alarm is set for 6:30" / "… weekend alarm … 8:30", "The user's morning run is
    5 km" / "… evening run is 8 km"): the first names which thing, the second its value, so
    most likely two things, not one corrected twice ("… to Alice at 9am" / "… to Bob at 10am"
    have only "at" between them)."""
    spans = [mine for mine, _ in aligned_spans(a, b)]
    if len(changes) < 2 or len(spans) < 2:
        return ""
    (_, first_end), (last_start, _) = spans[0], spans[-1]
    shared = a.content & b.content
    between = a.words[first_end:last_start]
    return changes[0].old if any(word.canon in shared for word in between) else ""


def surface_of(words: tuple[Word, ...]) -> str:
    """The words as they were written, joined by spaces."""
    return " ".join(word.surface for word in words)
