"""When and how surely a statement holds, read from its words: its tense, its hedges and how
often it recurs."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Final

from credence.memory.semantics.lexicon import DETERMINERS
from credence.memory.semantics.statement_words import IRREGULAR_VERBS, PAST_FORMS, WEEKDAYS
from credence.memory.semantics.statements import stem

_PAST_AUXILIARIES: Final = frozenset({"was", "were", "wasnt", "werent", "had", "hadnt", "did"})
_PRESENT_AUXILIARIES: Final = frozenset(
    {"is", "are", "am", "isnt", "arent", "has", "have", "hasnt", "havent", "does", "doesnt"}
    | {"can", "cant", "cannot"}
)
_MODALS: Final = frozenset({"should", "would", "could", "must", "might", "may"})
# Words after which a bare base is a noun ("the archive"), not a verb.
_BEFORE_A_NOUN: Final = DETERMINERS | {"these", "those", "each", "every", "any", "some", "no"}
# A past form right after these is a passive or a perfect ("are reviewed", "has owned"), not
# the past tense.
_BEFORE_PARTICIPLES: Final = frozenset(
    {"is", "are", "am", "be", "been", "being", "was", "were", "has", "have", "had"}
    | {"get", "gets", "got", "getting"}
)
# How many words before a past form a "be" or "have" still makes it a participle.
_PARTICIPLE_REACH: Final = 2
_ONGOING_AUXILIARIES: Final = frozenset({"is", "are", "am", "was", "were"})
# Verbs that put what follows "to" ahead: "plans to adopt".
_INTENDING: Final = frozenset(
    {"plan", "plans", "planning", "intend", "intends", "intending", "going", "hope", "hopes"}
    | {"want", "wants", "aim", "aims", "expect", "expects", "decided", "decides"}
)
_PERFECT_AUXILIARIES: Final = frozenset({"has", "have", "had"})
# Participles spelled as their base: "has quit", "has put", "has cut".
_PARTICIPLES_AS_BASE: Final = frozenset(
    {"quit", "put", "set", "cut", "let", "hit", "shut", "cost", "hurt", "spread", "split"}
    | {"burst", "cast", "upset", "broadcast", "forecast", "rid", "shed", "come", "become", "run"}
)
# Words that put a statement as possible rather than so.
HEDGES: Final = frozenset(
    {"might", "maybe", "perhaps", "possibly", "probably", "likely", "unlikely", "apparently"}
    | {"considering", "contemplating"}
)


def tense_shift(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one of two texts' words (lower-cased tokens) says what was so and the other
    what is or will be: "is" / "was", "has" / "had", "owns" / "owned", "will move" / "moved",
    "wants to learn" / "learned", "should run" / "should have run", "would have bought" /
    "bought"."""
    tenses = _auxiliary_tense(tuple(old)), _auxiliary_tense(tuple(new))
    if all(tenses) and tenses[0] != tenses[1]:
        return True
    modals = _modals(tuple(old)), _modals(tuple(new))
    if any(modals[1].get(modal, perfect) != perfect for modal, perfect in modals[0].items()):
        return True  # "should run" / "should have run"
    sides = ((old, new), (new, old))
    if any(_looks_back(mine) and _MODALS.isdisjoint(theirs) for mine, theirs in sides):
        return True  # "would have bought" (it did not happen) / "bought"
    if _future_of_present(tuple(old), tuple(new)) or _future_of_present(tuple(new), tuple(old)):
        return True  # "runs on Kubernetes" / "will run on Kubernetes"
    only_old, only_new = set(old) - set(new), set(new) - set(old)
    return any(
        _base(mine) == _base(theirs)
        and (
            (_past(mine, old) and _now(theirs, new, old))
            or (_past(theirs, new) and _now(mine, old, new))
        )
        for mine in only_old
        for theirs in only_new
    )


def _now(word: str, words: Sequence[str], other: Sequence[str]) -> bool:
    """Whether ``word`` is a verb now or to come (:func:`_present_or_future`), or a bare base
    that ``other`` puts in the past between the same two words, the first no determiner: "the
    parents live in" / "the parents lived in", not "the archive files" / "the archived files"
    nor "an oil change every" / "its oil changed"."""
    if _present_or_future(word, words):
        return True
    if word.endswith("ed") or word in PAST_FORMS:
        return False
    at = list(words).index(word)
    around = _neighbours(words, at)
    return (
        bool(around[0])
        and around[0] not in _BEFORE_A_NOUN
        and any(
            _neighbours(other, place) == around and _base(each) == _base(word)
            for place, each in enumerate(other)
        )
    )


def _neighbours(words: Sequence[str], at: int) -> tuple[str, str]:
    """The words either side of position ``at`` ("" past either end)."""
    return (words[at - 1] if at else "", words[at + 1] if at + 1 < len(words) else "")


# Verbs that put what follows "to" as wanted or planned, not so: "wants to read Arabic".
_WANTING: Final = frozenset(
    {"want", "wants", "wanted", "wish", "wishes", "wished", "hope", "hopes", "hoped", "plan"}
    | {"plans", "planned", "intend", "intends", "intended", "aim", "aims", "aspires"}
)
# Any word that says a thing is wanted, in whatever construction.
_WISHING: Final = _WANTING | {"like", "goal", "goals", "keen", "eager", "wanting"}
# Words between "wants to" and the verb wanted: "wants to be able to read".
_BEFORE_THE_WANTED: Final = frozenset({"to", "be", "able"})


def wish_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one says a thing is wanted or planned that the other says is so: "is able to
    read Arabic" / "wants to be able to read Arabic", "adopted a dog" / "plans to adopt a
    dog". (Both wanting it, "wants to" / "hopes to", is no difference.)"""
    mine, theirs = _wanted(tuple(old)), _wanted(tuple(new))
    if bool(mine) == bool(theirs):
        return False
    wanted, other = (mine, tuple(new)) if mine else (theirs, tuple(old))
    if not _WISHING.isdisjoint(other):
        return False  # wanted in other words: "would like to", "is something the user wants"
    return any(
        _base(word) in wanted and _stated(other, position) for position, word in enumerate(other)
    )


def _stated(words: tuple[str, ...], position: int) -> bool:
    """Whether the verb at ``position`` says a thing is so: "reads", "adopted", "is able to
    read", "can read"; not a bare base, which may be an instruction ("wake the user")."""
    word, before = words[position], words[max(0, position - 2) : position]
    return (
        word.endswith(("s", "ed"))
        or word in IRREGULAR_VERBS
        or before == ("able", "to")
        or before[-1:] in (("can",), ("could",))
    )


@lru_cache(maxsize=16384)
def _wanted(words: tuple[str, ...]) -> frozenset[str]:
    """The verbs ``words`` put as wanted or planned, as stems."""
    found = set()
    for position, word in enumerate(words[:-1]):
        if word in _WANTING and words[position + 1] == "to":
            rest = [each for each in words[position + 1 :] if each not in _BEFORE_THE_WANTED]
            if rest:
                found.add(_base(rest[0]))
    return frozenset(found)


def aspect_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one says a thing is under way or planned and the other that it is done: "is
    moving" / "has moved", "plans to adopt" / "has adopted", "will migrate" / "has migrated"."""
    mine, theirs = _aspects(tuple(old)), _aspects(tuple(new))
    # Under way and planned are both not yet done; either against done differs.
    return any(
        verb in theirs and "done" in (aspect, theirs[verb]) and aspect != theirs[verb]
        for verb, aspect in mine.items()
    )


@lru_cache(maxsize=16384)
def _aspects(words: tuple[str, ...]) -> dict[str, str]:
    """Each verb in ``words`` said as under way ("is moving"), planned ("will move", "plans
    to move") or done ("has moved")."""
    found = {}
    for position in range(1, len(words)):
        before, word = words[position - 1], words[position]
        intended = before == "to" and position > 1 and words[position - 2] in _INTENDING
        if word.endswith("ing") and before in _ONGOING_AUXILIARIES:
            found[_base(word)] = "under way"
        elif before == "will" or intended:
            found[_base(word)] = "planned"
        elif before in _PERFECT_AUXILIARIES and _participle(word):
            found[_base(word)] = "done"
    return found


def _participle(word: str) -> bool:
    """Whether ``word`` reads as a past participle after "has": "moved", "written", "quit"."""
    return word.endswith("ed") or word in IRREGULAR_VERBS or word in _PARTICIPLES_AS_BASE


def _future_of_present(present: tuple[str, ...], future: tuple[str, ...]) -> bool:
    """Whether ``future`` says "will" before the base of a verb ``present`` has in the third
    person ("runs" / "will run") and ``present`` has no "will"."""
    if "will" in present or "will" not in future:
        return False
    coming = {
        _base(future[position + 1]) for position, word in enumerate(future[:-1]) if word == "will"
    }
    return any(word.endswith("s") and _base(word) in coming for word in present)


def hedged(words: Sequence[str]) -> bool:
    """Whether the words put what they say as possible rather than so ("might", "probably",
    "thinking about moving")."""
    if not HEDGES.isdisjoint(words):
        return True
    return any(
        word == "thinking" and words[position + 1] in ("about", "of")
        for position, word in enumerate(words[:-1])
    )


def _looks_back(words: Sequence[str]) -> bool:
    """Whether a modal's perfect stands in ``words``: "would have bought", "could have gone"
    ("should have at most two" has no participle: "have" is the verb)."""
    return any(
        word in _MODALS and words[position + 1] == "have" and _participle(words[position + 2])
        for position, word in enumerate(words[:-2])
    )


@lru_cache(maxsize=16384)
def _modals(words: tuple[str, ...]) -> dict[str, bool]:
    """Each modal in ``words`` and whether "have" follows it ("should have run" looks back)."""
    return {
        word: position + 1 < len(words) and words[position + 1] == "have"
        for position, word in enumerate(words)
        if word in _MODALS
    }


@lru_cache(maxsize=16384)
def _auxiliary_tense(words: tuple[str, ...]) -> str:
    past = not _PAST_AUXILIARIES.isdisjoint(words)
    present = not _PRESENT_AUXILIARIES.isdisjoint(words)
    return "" if past == present else ("past" if past else "present")


@lru_cache(maxsize=16384)
def _base(word: str) -> str:
    return stem(word)  # irregular forms meet their base there: "kept" is "keep"


def _present_or_future(word: str, words: Sequence[str]) -> bool:
    """Whether ``word`` is surely a verb now or to come where it stands: a third-person form
    ("owns", "goes"), a base after "will" or "to" ("will move", "wants to learn"), or an -ing
    form after "is" ("is training"). A bare base may be a noun ("the archive" / "archived
    files"), so it says nothing."""
    position = list(words).index(word)
    before = words[position - 1] if position else ""
    return (
        word.endswith("s")
        or before in ("will", "to")
        or (word.endswith("ing") and before in ("is", "are", "am"))
    )


def _past(word: str, words: Sequence[str]) -> bool:
    """Whether ``word`` is a verb in the simple past where it stands in ``words``."""
    if word not in PAST_FORMS and not (word.endswith("ed") and len(word) > len("used")):
        return False
    position = list(words).index(word)
    if _describes_a_noun(words, position):
        return False
    before = words[max(0, position - _PARTICIPLE_REACH) : position]
    return _BEFORE_PARTICIPLES.isdisjoint(before)


_COPULAS: Final = frozenset({"is", "are", "was", "were"})


def _describes_a_noun(words: Sequence[str], position: int) -> bool:
    """Whether the past form at ``position`` describes the noun after it, between an owner or
    a determiner and that noun's verb: "the user's preferred airline is KLM" ("users" is
    "user's" here, apostrophes gone), not "the user preferred KLM"."""
    before = words[position - 1] if position else ""
    after = words[position + 1 : position + 3]
    owner = before in _BEFORE_A_NOUN or before.endswith("s")
    return owner and len(after) == 2 and after[1] in _COPULAS


_WEEKDAYS: Final = WEEKDAYS - {"weekday", "weekend"}  # the seven days by name


# Words that make a day named once a day every week.
_RECURRING: Final = frozenset({"weekly", "every", "each", "always", "usually", "never"})


def recurrence_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one names a day once and the other every week: "closed on Monday" / "closed on
    Mondays" ("every Monday" and "on Mondays" say the same)."""
    mine, theirs = _weekdays(tuple(old)), _weekdays(tuple(new))
    return any(theirs.get(day, weekly) != weekly for day, weekly in mine.items())


_PARTS_OF_DAYS: Final = frozenset(
    (part,) for part in ("mornings", "afternoons", "evenings", "nights", "lunchtimes")
)


@lru_cache(maxsize=16384)
def _weekdays(words: tuple[str, ...]) -> dict[str, bool]:
    """Each weekday ``words`` name, and whether they name it every week ("on Mondays", "every
    Monday", "on a Monday", "the weekly meeting is on Monday", "on Saturday mornings")."""
    found = {}
    recurring = not _RECURRING.isdisjoint(words)
    for position, word in enumerate(words):
        if word in _WEEKDAYS:
            found[word] = (
                recurring
                or (position > 0 and words[position - 1] in ("every", "each", "a"))
                or words[position + 1 : position + 2] in _PARTS_OF_DAYS
            )
        elif word.endswith("s") and word[:-1] in _WEEKDAYS:
            found[word[:-1]] = True
    return found
