"""The pair judgement: how a proposed statement relates to one in memory, decided by structure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from credence.memory.semantics.acronyms import acronyms_written_alike
from credence.memory.semantics.aspects import tense_shift
from credence.memory.semantics.bounds import complemented, same_limit, the_bound
from credence.memory.semantics.coverage import answers, opens, reworded
from credence.memory.semantics.lexicon import complementary_pairs
from credence.memory.semantics.order import restated
from credence.memory.semantics.plainly import ones_written_alike, plainly_worded
from credence.memory.semantics.preference import said_from_the_other_end, sides_exchanged
from credence.memory.semantics.quantified import part_named_for_all
from credence.memory.semantics.readings import another_reading
from credence.memory.semantics.slots import opening_swap, synonyms_agree, unit_change, value_swap
from credence.memory.semantics.small_words import qualifier_added, stems_of
from credence.memory.semantics.statement_words import PREPOSITIONS
from credence.memory.semantics.statements import (
    Change,
    Statement,
    Word,
    aligned_spans,
    holds_value_change,
    is_negation,
    shares_core,
    statement,
    stem,
    value_changes,
)
from credence.memory.semantics.subjects import (
    NOUN_OPENERS,
    another_subject,
    apart_around_the_subject,
    holds_a_taste,
    subject_slot,
    surface_of,
)
from credence.memory.semantics.thesaurus import synonymous
from credence.memory.semantics.wording import (
    NEGATING_PREFIXES,
    SYNONYMS,
    VERBS,
    absolute,
    base_form,
    differing_values,
    hard_difference,
    is_english,
    is_unit,
    joined_compounds,
    key,
    meaning,
    negated,
    opposed_words,
    permits,
    reordered,
    same_meaning,
    scope_markers,
    scopes_apart,
    spelling,
    swapped_preference,
    value_tokens,
    words_of,
)

RelationKind = Literal["duplicate", "contradiction", "refinement", "compatible", "unrelated"]
ContradictionKind = Literal[
    "value_change", "polarity", "antonym", "swapped_preference", "scoped_exception"
]

# Cosines of all-MiniLM-L6-v2, chosen on the development set (harness/corpora/dev): pairs
# below COMPARE_COSINE are too far apart to be the same lesson in any form; DUPLICATE_COSINE is
# the floor for "the same lesson in other words" once structure has found no difference that
# matters; a negation is a contradiction above POLARITY_COSINE when the two share their core.
COMPARE_COSINE: Final = 0.55
DUPLICATE_COSINE: Final = 0.78
POLARITY_COSINE: Final = 0.75
# Two prohibitions that say the same in other words ("Don't recommend crypto investments" /
# "Never suggest cryptocurrency as something to invest in") sit a little lower.
PROHIBITION_COSINE: Final = 0.74
UNRELATED_COSINE: Final = 0.30
# A paraphrase that rewords more than one slot and keeps at least half its words (see
# :func:`reworded`) once no value, scope, polarity or opposite differs: chosen on the
# development sets, where no pair that close and so reworded was a correction.
REWORDED_COSINE: Final = 0.65
# Two sentences this close that differ in one short span only (at most MAX_SLOT_WORDS words
# a side) fill one slot with two values ("… as a PDF" / "… as a Google Docs link").
ONE_SLOT_COSINE: Final = 0.8
MAX_SLOT_WORDS: Final = 4


_COORDINATORS: Final = frozenset({"and", "but", "or"})
_COMPLEMENTARY: Final = complementary_pairs(stem)


class Relation(msgspec.Struct, frozen=True):
    """How ``new`` relates to ``old``: a kind, a score and the evidence a reviewer sees.

    ``contradiction`` names the kind of conflict when ``kind`` is ``contradiction``;
    ``changes`` holds the aligned value slots (old → new); ``settled`` is False when structure
    could not decide (another language, a bare one-word substitution): such a pair is never a
    duplicate and goes to a reviewer, and an LLM judge may look at it.
    """

    kind: RelationKind
    score: float
    contradiction: ContradictionKind | None = None
    changes: tuple[Change, ...] = ()
    evidence: str = ""
    settled: bool = True


def _substitution(a: Statement, b: Statement) -> tuple[str, str] | None:
    """The one content word each side swaps when their content is otherwise equal, else None
    (function words may differ: "to the logs" / "in the logs")."""
    only_a, only_b = a.content - b.content, b.content - a.content
    if len(only_a) != 1 or len(only_b) != 1 or len(a.content) != len(b.content):
        return None
    (old_canon,), (new_canon,) = only_a, only_b
    if answers(old_canon, new_canon, SYNONYMS):
        return None  # a synonym, one word family, or an adverb and its adjective's synonym
    if spelling(old_canon) == spelling(new_canon):
        return None  # one word spelt two ways: "organise" / "organize", "colour" / "color"
    if opens(old_canon, new_canon):
        return None  # one word family: "indent" / "indentation"
    old_word = next(word for word in a.words if word.canon == old_canon)
    new_word = next(word for word in b.words if word.canon == new_canon)
    return old_word.surface, new_word.surface


def relate(old: str, new: str, cosine: float) -> Relation:
    """Judge how the proposed ``new`` relates to ``old`` in memory, given their cosine.

    Structure decides the kind: value slots (:func:`value_changes`), a swapped preference,
    antonyms, polarity and scope; the cosine only decides whether the two are close enough to
    compare and, when structure finds no difference that matters, whether they say the same
    thing. Invariant: a pair that differs in any value, name, unit, polarity or scope is never
    a duplicate: at worst it goes to a reviewer, unsettled.
    """
    old, new = plainly_worded(old), plainly_worded(new)
    # By initials only where the model reads the two as one statement: "hospital radiology"
    # has the letters of "HR" too.
    old, new = acronyms_written_alike(old, new, by_initials=cosine >= DUPLICATE_COSINE)
    old, new = ones_written_alike(*joined_compounds(old, new))
    if restated(words_of(old), words_of(new)):
        return Relation("duplicate", max(cosine, DUPLICATE_COSINE), evidence="the same, reordered")
    turn = said_from_the_other_end(words_of(old), words_of(new))
    if turn is not None:
        # Checked here in full (every word, value and tense), so past the guard below.
        return _from_the_other_end(old, new, turn, cosine)
    relation = _relate(old, new, cosine)
    if relation.kind == "duplicate" and key(old) != key(new):
        if sides_exchanged(words_of(old), words_of(new)):
            # "likes hiking more than swimming" / "prefers swimming to hiking"
            return Relation(
                "contradiction", cosine, "swapped_preference", evidence="the preference is reversed"
            )
        why = hard_difference(old, new) or another_reading(old, new)
        if why:
            return Relation("compatible", cosine, evidence=why, settled=False)
    return relation


def _relate(old: str, new: str, cosine: float) -> Relation:
    """The relation before the duplicate invariant is enforced (see :func:`relate`)."""
    if key(old) == key(new) and key(old):
        return Relation("duplicate", 1.0, evidence="the same text")
    if not (is_english(old) and is_english(new)):
        return Relation(
            "compatible" if cosine >= UNRELATED_COSINE else "unrelated",
            cosine,
            evidence="not English: the offline model cannot compare it",
            settled=False,
        )
    a, b = statement(old), statement(new)
    if swapped_preference(old, new) or (
        a.negative == b.negative
        and (cosine >= COMPARE_COSINE or shares_core(a, b))
        and sides_exchanged(words_of(old), words_of(new))
    ):
        return Relation(
            "contradiction", cosine, "swapped_preference", evidence="the preference is reversed"
        )
    if (
        a.negative == b.negative
        and same_meaning(old, new)
        and cosine >= COMPARE_COSINE
        and not opposed_words(old, new)
    ):
        return Relation("duplicate", max(cosine, DUPLICATE_COSINE), evidence="synonyms")
    changes = value_changes(a, b)
    if changes:
        evidence = "; ".join(f"{change.old} → {change.new}" for change in changes)
        if another_subject(changes):
            return Relation("compatible", cosine, evidence=f"another subject: {evidence}")
        subject = subject_slot(old, a, b) or apart_around_the_subject(changes, a, b)
        if subject:
            # Most likely a rule about another thing; a reviewer sees it, flagged.
            return Relation(
                "compatible", cosine, evidence=f"another subject? {evidence}", settled=False
            )
        return Relation("contradiction", cosine, "value_change", tuple(changes), evidence)
    unit = unit_change(a, b)
    if unit is not None:
        return Relation(
            "contradiction", cosine, "value_change", (unit,), f"{unit.old} → {unit.new}"
        )
    close = cosine >= COMPARE_COSINE or shares_core(a, b)
    opposed = opposed_words(old, new)
    if a.negative != b.negative and _adds_a_clause(old, new):
        return Relation("refinement", cosine, evidence="adds a clause")
    if a.negative != b.negative:
        return _opposite_polarity(old, new, a, b, cosine, close, opposed)
    if opposed and close:
        evidence = "; ".join(f"{left} ↔ {right}" for left, right in opposed)
        if _other_subject(old, new, opposed):
            # "The cat eats wet food" / "The dog eats dry kibble": two things, two facts.
            return Relation(
                "compatible", cosine, evidence=f"another subject? {evidence}", settled=False
            )
        return Relation("contradiction", cosine, "antonym", evidence=evidence)
    if close and absolute(old) and permits(new) and not permits(old):
        return Relation(
            "contradiction", cosine, "scoped_exception", evidence="an exception to a rule"
        )
    return _same_polarity(old, new, a, b, cosine)


def _from_the_other_end(old: str, new: str, turn: tuple[str, str], cosine: float) -> Relation:
    """``new`` says ``old``'s relation from its other end ("A before B" / "B after A"; ``turn``
    is new's relation word and old's). The same statement when, the relation word turned
    back, every word, small words too, pairs with one of ``old``'s (so no tense, hedge or
    quantifier differs) and no value differs; else a reviewer looks, though nothing is
    reversed."""
    word, converse = turn
    turned = re.sub(rf"\b{re.escape(word)}\b", converse, new, count=1, flags=re.I)
    mine, theirs = words_of(old), words_of(turned)
    why = hard_difference(old, turned) or ("a tense differs" if tense_shift(mine, theirs) else "")
    mine, theirs = _eventless(mine), _eventless(theirs)
    if (
        cosine >= DUPLICATE_COSINE
        and len(mine) == len(theirs) == _matched(stems_of(mine), stems_of(theirs))
        and not why
    ):
        return Relation("duplicate", cosine, evidence="the same, said from the other end")
    evidence = "; ".join(("said from the other end", *([why] if why else [])))
    return Relation("compatible", cosine, evidence=evidence, settled=False)


# Words that only say an event happens or a thing is there, which a sentence turned around may
# add ("walks the dog before breakfast" / "has breakfast after walking the dog", "is above a
# bakery" / "there is a bakery below").
_EVENT_VERBS: Final = frozenset({"has", "have", "eats", "eat", "happens", "happen", "there"})


def _eventless(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(word for word in words if word not in _EVENT_VERBS)


def _other_subject(old: str, new: str, opposed: tuple[tuple[str, str], ...]) -> bool:
    """Whether, before the opposite words, each sentence names another thing that no synonym
    explains ("The cat eats wet food" / "The dog eats dry kibble"): the opposites then
    describe two things, not one thing reversed. Verbs and comparison symbols do not count."""
    mine, theirs = meaning(old), meaning(new)
    left = {word for word, _ in opposed}
    right = {word for _, word in opposed}
    at_old = next((i for i, word in enumerate(mine) if base_form(word) in left), None)
    at_new = next((i for i, word in enumerate(theirs) if base_form(word) in right), None)
    if at_old is None or at_new is None:
        return False
    gone = [word for word in mine[:at_old] if word not in theirs and _names_a_thing(word)]
    added = [word for word in theirs[:at_new] if word not in mine and _names_a_thing(word)]
    gone = [word for word in gone if not any(synonymous(word, x, SYNONYMS) for x in added)]
    added = [word for word in added if not any(synonymous(word, x, SYNONYMS) for x in gone)]
    return bool(gone) and bool(added)


def _names_a_thing(word: str) -> bool:
    return word[:1] not in "<>" and word not in VERBS


# Words that join a clause of its own after a whole statement ("…, and avoid …").
_CLAUSE_JOINS: Final = frozenset({"and", "also", "then", "plus"})


def _adds_a_clause(old: str, new: str) -> bool:
    """Whether ``new`` says ``old`` word for word, then joins a clause of its own ("Use
    descriptive names" / "Use descriptive names, and avoid single letters"): a negation in that
    clause does not reverse ``old``. A clause that sets a scope ("… unless …") is not one."""
    mine, theirs = words_of(old), words_of(new)
    if len(theirs) <= len(mine) + 1 or theirs[: len(mine)] != mine:
        return False
    return theirs[len(mine)] in _CLAUSE_JOINS and not scope_markers(new) - scope_markers(old)


def _opposite_polarity(
    old: str,
    new: str,
    a: Statement,
    b: Statement,
    cosine: float,
    close: bool,
    opposed: tuple[tuple[str, str], ...],
) -> Relation:
    bound = _negated_bound(old, new, a)
    if bound == "same" and cosine >= DUPLICATE_COSINE:
        return Relation("duplicate", cosine, evidence="the same bound, negated")
    if bound is not None:
        # "Keep lines under 72" / "No line longer than 72": a bound put the other way round,
        # at most differing in whether its end is included; never the opposite advice.
        return Relation("compatible", cosine, evidence="a bound put the other way", settled=False)
    if opposed:
        if cosine >= DUPLICATE_COSINE and _negated_twice(old, new, opposed):
            return Relation("duplicate", cosine, evidence="the same, negated in other words")
        # "Never disable X" / "Enable X": two reversals agree, but not surely; a human looks.
        return Relation("compatible", cosine, evidence="double reversal", settled=False)
    if holds_value_change(a, b):
        # "Never deploy on Fridays" / "Deploy on Mondays": another value, not the opposite.
        return Relation("compatible" if close else "unrelated", cosine)
    same_core = shares_core(a, b)
    if not (is_negation(a, b) or (same_core and cosine >= POLARITY_COSINE)):
        if close and same_core and (scope_markers(new) - scope_markers(old) or permits(new)):
            return _exception(cosine)
        return Relation("compatible" if close else "unrelated", cosine)
    if scope_markers(new) - scope_markers(old) or (permits(new) and not permits(old)):
        return _exception(cosine)
    return Relation("contradiction", cosine, "polarity", evidence="the opposite advice")


def _negated_bound(old: str, new: str, a: Statement) -> Literal["same", "near"] | None:
    """Whether the negative side bounds a value the other side bounds the other way round:
    "same" when its complement says what the other says, word for word ("Never leave the dog
    alone for more than four hours" / "… for at most four hours"); "near" when they limit the
    same value on the same side in other words or with the end included on one side only
    ("under 72" / "no longer than 72"); else None."""
    negative, positive = (old, new) if a.negative else (new, old)
    mine, theirs = meaning(negative), meaning(positive)
    if the_bound(mine) is None or the_bound(theirs) is None:
        return None
    flipped = complemented(mine)
    if len(flipped) == len(theirs) == _matched(flipped, theirs):
        return "same"
    return "near" if same_limit(mine, theirs) else None


def _negated_twice(old: str, new: str, opposed: tuple[tuple[str, str], ...]) -> bool:
    """Whether a negating prefix or a complementary antonym on one side and a negation word on
    the other say one thing ("The user dislikes emoji" / "The user doesn't like emojis", "never
    forgets" / "always remembers"): every opposed pair is a word and its prefixed form or two
    words with nothing between them, and the other meaning words match one to one."""
    if not all(
        _prefixed_pair(first, second) or frozenset((first, second)) in _COMPLEMENTARY
        for first, second in opposed
    ):
        return False
    gone = {first for first, _ in opposed}
    added = {second for _, second in opposed}
    mine = [word for word in meaning(old) if word not in gone]
    theirs = [word for word in meaning(new) if word not in added]
    return len(mine) == len(theirs) == _matched(mine, theirs)


def _prefixed_pair(first: str, second: str) -> bool:
    short, long = sorted((first, second), key=len)
    return any(long == prefix + short for prefix in NEGATING_PREFIXES)


def _exception(cosine: float) -> Relation:
    return Relation("contradiction", cosine, "scoped_exception", evidence="an exception to a rule")


def _same_polarity(old: str, new: str, a: Statement, b: Statement, cosine: float) -> Relation:
    if cosine < COMPARE_COSINE and not shares_core(a, b):
        return Relation("unrelated" if cosine < UNRELATED_COSINE else "compatible", cosine)
    swapped = _substitution(a, b)
    opening = opening_swap(words_of(old), words_of(new), a, b)
    if opening is not None and not same_meaning(old, new):
        evidence = f"{opening.old} → {opening.new}"
        spans = aligned_spans(a, b)
        if spans and spans[0][0][0] == 0 and holds_a_taste(a, spans[0][0][1]):
            return Relation(
                "compatible", cosine, evidence=f"another subject? {evidence}", settled=False
            )
        return Relation("contradiction", cosine, "value_change", (opening,), evidence)
    if swapped is not None and is_unit(swapped[0]) and is_unit(swapped[1]):
        unit = Change(old=swapped[0], new=swapped[1], kind="unit")
        return Relation(
            "contradiction", cosine, "value_change", (unit,), f"{unit.old} → {unit.new}"
        )
    # Only true values count here (numbers, times, names, units): a paraphrase that swaps
    # ordinary words is judged below by the substitution and duplicate rules.
    values = differing_values(old, new)
    values_differ = bool(values[0] or values[1])
    # A clause added or dropped whole narrows or widens the rule, whatever word opens it
    # ("… when writing to the legal team"); reworded, only a real condition counts.
    nested = a.content <= b.content or b.content <= a.content
    scope_differs = bool(scopes_apart(old, new, nested=nested))
    if (
        a.negative
        and b.negative
        and a.content < b.content
        and len(b.content - a.content) == 1
        and not (values_differ or scope_differs)
        and cosine >= DUPLICATE_COSINE
    ):
        # "Never send drafts" / "Don't send draft versions": one more ordinary word in a
        # prohibition at most narrows it, and the rule in memory already forbids it.
        return Relation("duplicate", cosine, evidence="the same prohibition")
    swap = value_swap(values[0], values[1], a, b, meaning(old), meaning(new))
    if swap is not None and synonyms_agree(swap[1], SYNONYMS):
        change = swap[0]
        if scope_differs and absolute(old):
            return _exception(cosine)  # "Always answer in English" / "When …, in Spanish"
        return Relation(
            "contradiction", cosine, "value_change", (change,), f"{change.old} → {change.new}"
        )
    if (a.content < b.content and _adds_detail(new, a, b)) or (
        a.content <= b.content and (values_differ or scope_differs)
    ):
        if held := qualifier_added(words_of(old), words_of(new)):  # less of the rule, not more
            return Relation("compatible", cosine, evidence=f"holds it back: {held}", settled=False)
        if why := another_reading(old, new):  # "Both parents" / "Either parent"
            return Relation("compatible", cosine, evidence=f"adds detail, but {why}", settled=False)
        return Relation("refinement", cosine, evidence="adds detail")
    if swap is not None and scope_differs and absolute(old):
        return _exception(cosine)
    if values_differ or scope_differs:
        return _another_value(old, a, b, cosine)
    if a.bag == b.bag:
        return Relation("duplicate", max(cosine, DUPLICATE_COSINE), evidence="the same words")
    if swapped is not None:
        # One word swapped and nothing else: a synonym, an antonym no lexicon lists, or
        # another name. Structure cannot tell, so it is never a duplicate; a human looks.
        return Relation(
            "compatible",
            cosine,
            evidence=f"{swapped[0]} → {swapped[1]}: a synonym, an opposite or another name",
            settled=False,
        )
    return _in_other_words(old, new, a, b, cosine)


def _in_other_words(old: str, new: str, a: Statement, b: Statement, cosine: float) -> Relation:
    """The last judgement, when no value, scope, polarity or opposite differs: the same lesson
    in other words when close enough and reworded throughout, else compatible."""
    floor = PROHIBITION_COSINE if a.negative and b.negative else DUPLICATE_COSINE
    if cosine >= floor and _share_enough(old, new) and negated(old) == negated(new):
        if reordered(old, new):
            return Relation(
                "compatible", cosine, evidence="an order or position differs", settled=False
            )
        said_again = Relation("duplicate", cosine, evidence="the same lesson in other words")
        return _unless_refilled(said_again, old, new, a, b)
    if (
        cosine >= REWORDED_COSINE
        and negated(old) == negated(new)
        and not reordered(old, new)
        and reworded(meaning(old), meaning(new), SYNONYMS)
    ):
        said_again = Relation("duplicate", cosine, evidence="the same lesson, reworded")
        return _unless_refilled(said_again, old, new, a, b)
    return Relation("compatible", cosine)


def _unless_refilled(
    duplicate: Relation, old: str, new: str, a: Statement, b: Statement
) -> Relation:
    """``duplicate``, unless the two differ in one span refilled with other words ("by email"
    / "by text message"): another value or another subject, never the same lesson; or unless
    one names a part where the other says all of it ("all documents" / "client-facing
    documents"). A human looks."""
    if part_named_for_all(words_of(old), words_of(new)):
        return Relation("compatible", duplicate.score, evidence="a scope differs", settled=False)
    refilled = _refilled_slot(old, a, b, duplicate.score)
    if refilled is None:
        return duplicate
    return Relation("compatible", duplicate.score, evidence=refilled.evidence, settled=False)


def _adds_detail(new: str, a: Statement, b: Statement) -> bool:
    """Whether the words ``b`` adds to ``a`` are detail a reviewer should weigh: a value, more
    than one word, a word a preposition opens ("Use yarn for the frontend") or one that
    modifies a word both share ("Write integration tests"). One other added word only
    rephrases: a verb or a noun's head ("should be written with pytest", "draft versions")."""
    added = b.content - a.content
    if len(added) != 1 or added & value_tokens(new):
        return True
    (word,) = added
    at = next(position for position, each in enumerate(b.words) if each.canon == word)
    after_preposition = at > 0 and _opens_phrase(b.words[:at])
    following = b.words[at + 1] if at + 1 < len(b.words) else None
    modifies_shared = (
        following is not None and following.kind == "word" and following.canon in a.content
    )
    # "speaks Spanish and is learning French": an ongoing verb opening a coordinated clause
    # says something new of what follows it ("opens at 8 and closes at 10" says no more).
    opens_clause = (
        at > 0 and b.words[at - 1].canon in _COORDINATORS and b.words[at].surface.endswith("ing")
    )
    return after_preposition or modifies_shared or opens_clause


def _opens_phrase(words: tuple[Word, ...]) -> bool:
    """Whether the words before a position end in a preposition and its determiners."""
    position = len(words) - 1
    while position >= 0 and words[position].canon in NOUN_OPENERS:
        position -= 1
    return position >= 0 and words[position].canon in PREPOSITIONS


def _share_enough(old: str, new: str) -> bool:
    """Whether the two share two meaning words (one when a side has only one): the same, a
    synonym or one word family ("invest" / "investments"). One shared word is often only
    the subject ("The user is vegetarian" / "The user eats meat")."""
    mine, theirs = meaning(old), meaning(new)
    return _matched(mine, theirs) >= max(1, min(2, len(mine), len(theirs)))


def _matched(mine: Sequence[str], theirs: Sequence[str]) -> int:
    """How many of ``mine`` pair one to one with ``theirs``: the same word, a synonym or one
    word family."""
    left = list(theirs)
    count = 0
    for word in mine:
        partner = next(
            (
                other
                for other in left
                if other == word or synonymous(word, other, SYNONYMS) or opens(word, other)
            ),
            None,
        )
        if partner is not None:
            left.remove(partner)
            count += 1
    return count


def _another_value(old: str, a: Statement, b: Statement, cosine: float) -> Relation:
    """A close pair where a value or scope differs: judged by its one refilled slot when it has
    one, else flagged for a reviewer (unsettled when close) rather than seen by nobody."""
    if cosine >= ONE_SLOT_COSINE:
        refilled = _refilled_slot(old, a, b, cosine)
        if refilled is not None:
            return refilled
    close = cosine >= DUPLICATE_COSINE
    return Relation("compatible", cosine, evidence="a value or scope differs", settled=not close)


def _refilled_slot(old: str, a: Statement, b: Statement, cosine: float) -> Relation | None:
    """The relation of two sentences identical but for one short span each side fills with
    other words, no synonym of each other ("… as a PDF" / "… as a Google Docs link"): the same
    slot given another value, or, when the span names what the sentence is about, another
    subject (flagged). None when they differ otherwise."""
    if a.negative != b.negative:
        return None
    spans = aligned_spans(a, b)
    if len(spans) != 1:
        return None
    (a_start, a_end), (b_start, b_end) = spans[0]
    if not (0 < a_end - a_start <= MAX_SLOT_WORDS and 0 < b_end - b_start <= MAX_SLOT_WORDS):
        return None
    mine, theirs = a.words[a_start:a_end], b.words[b_start:b_end]
    if len(mine) == len(theirs) == 1:
        return None  # a bare one-word swap: a synonym no thesaurus lists, or not (unsettled)
    if any(word.kind.startswith(("number", "quantity", "time")) for word in (*mine, *theirs)):
        return None  # numbers, quantities and times are compared as values, not as words
    if any(word.canon in b.content for word in mine) or any(
        word.canon in a.content for word in theirs
    ):
        return None  # a word moved, not a slot refilled
    if _matched([w.canon for w in mine], [w.canon for w in theirs]):
        return None  # a synonym or one word family
    change = Change(old=surface_of(mine), new=surface_of(theirs), kind="value")
    evidence = f"{change.old} → {change.new}"
    if subject_slot(old, a, b):
        return Relation(
            "compatible", cosine, evidence=f"another subject? {evidence}", settled=False
        )
    return Relation("contradiction", cosine, "value_change", (change,), evidence)
