"""Word orders that keep a statement's meaning: phrases fronted, items swapped, comparisons
turned around."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import Final

from credence.memory.semantics.lexicon import CONVERSE_OF
from credence.memory.semantics.statement_words import PAST_FORMS
from credence.memory.semantics.statements import stem
from credence.memory.semantics.tokens import STOP_WORDS
from credence.memory.semantics.wording import VERBS

# Words that open a phrase of time or condition, which may stand at either end of a statement:
# "on Fridays", "every night", "before the release", "unless it rains". Not "with" or "for",
# which as often tie a thing to the noun before them ("the meeting with the client").
_OPENERS: Final = frozenset(
    {"on", "at", "in", "every", "each", "before", "after", "during", "since", "until", "till"}
    | {"when", "whenever", "unless", "once"}
)
# Words whose reach a moved phrase would leave or enter: "only drinks coffee in the morning"
# is not "in the morning, only drinks coffee".
_SCOPED: Final = frozenset({"only", "just", "even", "also", "too", "either"})
# Relations that hold both ways, each its own converse: "Lena is married to Dev" is "Dev is
# married to Lena", "the gym is next to the library" is "the library is next to the gym".
_SYMMETRIC: Final = frozenset(
    {"married", "engaged", "related", "friends", "neighbors", "neighbours"}
    | {"cousins", "siblings", "colleagues", "roommates", "classmates", "teammates"}
    | {"same", "similar", "identical", "equal", "different", "next", "adjacent", "beside"}
    | {"near", "opposite", "across"}
)


def restated(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether ``new`` says ``old`` in its very words, only ordered otherwise: phrases moved
    from one end to the other ("… renews on January 1 each year" / "Each year on January 1,
    … renews"), two listed things swapped ("eggs and milk" / "milk and eggs"), or a comparison
    turned around ("The son is older than the daughter" / "The daughter is younger than the
    son"), or put in the passive ("The user bought the house" / "The house was bought by the
    user"). A place or time put first ("Lima is where the user lives") is said plainly before
    (:mod:`plainly`). Word sequences as :func:`wording.words_of` gives."""
    old, new = tuple(old), tuple(new)
    if old == new:
        return False
    named = owner_named(old), owner_named(new)
    if named != (old, new) and len(named[0]) == len(named[1]) and _turned_around(*named):
        return True  # "The user is younger than their brother" / "… brother is older than …"
    if _handed_over(*named) or _handed_over(named[1], named[0]):
        return True  # "The user lent Marco $200" / "Marco borrowed $200 from the user"
    grown = len(new) - len(old)
    if grown == 0:
        return (
            phrases_moved(old, new)
            or _items_swapped(old, new)
            or _turned_around(old, new)
            or _exchanged_around(old, new, _SYMMETRIC)
        )
    if abs(grown) == 2:  # "was … by" in the passive
        return _in_the_passive(old, new) or _in_the_passive(new, old)
    return False


def phrases_moved(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one side is the other with whole phrases from its end put at its front."""
    old, new = tuple(old), tuple(new)
    if sorted(old) != sorted(new) or old == new or not _SCOPED.isdisjoint(old):
        return False
    return _fronted(old, new) or _fronted(new, old)


def _fronted(trailing: tuple[str, ...], leading: tuple[str, ...]) -> bool:
    for cut in range(1, len(trailing)):
        core, moved = trailing[:cut], trailing[cut:]
        if moved[0] in _OPENERS and leading[len(moved) :] == core:
            front = leading[: len(moved)]
            if front[0] in _OPENERS and sorted(_phrases(moved)) == sorted(_phrases(front)):
                return True
    return False


def _phrases(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """``words`` cut before each opening word: "on may 3 at 11 40 pm" → two phrases."""
    cuts = [i for i, word in enumerate(words) if word in _OPENERS and i > 0]
    edges = [0, *cuts, len(words)]
    return [words[start:end] for start, end in pairwise(edges)]


def _items_swapped(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """Whether the one-word things of a list ending in a lone "and" or "or" came in another
    order, all else in place ("eggs and milk" / "milk and eggs", "Portuguese, Spanish and
    English" / "English, Spanish and Portuguese"). Not numbers ("between 9 and 5" is a range),
    nor actions ("married and had a child" tells an order)."""
    if sorted(old) != sorted(new):
        return False
    apart = [i for i, pair in enumerate(zip(old, new, strict=True)) if pair[0] != pair[1]]
    joins = [i for i, word in enumerate(old) if word in ("and", "or")]
    if len(apart) < 2 or len(joins) != 1:
        return False
    (join,) = joins
    first, last = apart[0], apart[-1]
    if last != join + 1 or first >= join:
        return False
    items = (*old[first:join], old[last])
    return (
        sorted(items) == sorted((*new[first:join], new[last]))
        and STOP_WORDS.isdisjoint(items)  # "tennis on Saturdays and golf …" is no list
        and old[first - 1 : first] != ("between",)
        and not any(character.isdigit() for character in "".join(items))
        and not any(stem(item) in VERBS for item in items)
    )


def _in_the_passive(active: tuple[str, ...], passive: tuple[str, ...]) -> bool:
    """Whether ``passive`` is ``active`` (doer, verb, done-to, the rest) said as done-to,
    "was"/"is" and the verb, "by" the doer, the rest, in the same tense."""
    if "by" not in passive or len(passive) != len(active) + 2:
        return False
    for at, verb in enumerate(active[1:-1], 1):
        doer = active[:at]
        for end in range(at + 2, len(active) + 1):
            done_to, rest = active[at + 1 : end], active[end:]
            said = passive[len(done_to) :]
            if passive[: len(done_to)] != done_to or said[2:] != ("by", *doer, *rest):
                continue
            auxiliary, participle = said[0], said[1]
            past = verb in PAST_FORMS or verb.endswith("ed")
            if auxiliary in (("was", "were") if past else ("is", "are")) and (
                stem(verb) == stem(participle)
            ):
                return True
    return False


def _turned_around(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """Whether ``new``, its one comparison word put as its converse, is ``old`` with the two
    runs either side of that word exchanged."""
    at = [i for i, word in enumerate(new) if word in CONVERSE_OF]
    if len(at) != 1 or len(old) != len(new):
        return False
    (where,) = at
    for converse in CONVERSE_OF[new[where]] & set(old):
        flipped = (*new[:where], converse, *new[where + 1 :])
        first = first_difference(old, flipped)
        # The middles count in ``old``'s places, which differ from ``new``'s when the two
        # exchanged runs differ in length ("the user's brother Sam" / "the user").
        hinge = old.index(converse)
        if any(first + start <= hinge < first + end for start, end in swap_middles(old, flipped)):
            return True
    return False


_USER: Final = ("the", "user")
_USERS: Final = ("the", "users")
# Words after which "her" is no owner but the one a verb is done to: "texts her every
# evening", "sends her a summary".
_AFTER_HER_DONE_TO: Final = frozenset({"a", "an", "the"}) | _OPENERS
_POSSESSIVE_PRONOUNS: Final = frozenset({"their", "his", "her"})
_TRAILING_VERBS: Final = frozenset({"does", "do", "did", "is", "are", "was", "were"})


# Verbs that say one handing-over from either end: "A sold B to C" is "C bought B from A".
_TAKEN_AS: Final = {
    stem(giving): frozenset(stem(taking) for taking in takings.split())
    for giving, takings in (
        ("sell", "buy purchase"),
        ("lend", "borrow"),
        ("loan", "borrow"),
        ("give", "receive get"),
        ("send", "receive get"),
        ("teach", "learn"),
    )
}
_TAKING: Final = frozenset().union(*_TAKEN_AS.values())
# An article or an owner's pronoun before the thing handed over says no more: "sold her piano"
# / "bought the piano from her"; and who it came "from" may be said again as a pronoun.
_ARTICLES_AND_OWNERS: Final = frozenset({"a", "an", "the", "his", "her", "their", "its"})
_PRONOUN_ALONE: Final = frozenset((pronoun,) for pronoun in ("him", "her", "them"))


def _handed_over(giving: tuple[str, ...], taking: tuple[str, ...]) -> bool:
    """Whether ``taking`` ("C bought B from A") says what ``giving`` ("A sold B to C", "A lent
    C B") says, in the same tense."""
    at = next((i for i, word in enumerate(taking) if stem(word) in _TAKING), None)
    if at is None or "from" not in taking[at + 1 :]:
        return False
    source = len(taking) - 1 - taking[::-1].index("from")
    taker, thing, giver = taking[:at], taking[at + 1 : source], taking[source + 1 :]
    for verb, said_by, rest in _giving_verbs(giving):
        if stem(taking[at]) not in _TAKEN_AS[stem(verb)]:
            continue
        thing, taker, rest = _bare(thing), _bare(taker), _bare(rest)
        return (
            bool(taker and thing and said_by)
            and (_bare(giver) == _bare(said_by) or giver in _PRONOUN_ALONE)
            and rest in ((*thing, "to", *taker), (*taker, *thing))
            and _past(verb) == _past(taking[at])
        )
    return False


def _bare(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(word for word in words if word not in _ARTICLES_AND_OWNERS)


def hands_exchanged(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether two statements of one handing-over exchange who gives and who takes: "The user
    lent Marco $200" / "Marco lent $200 to the user"."""
    mine, theirs = _handings(tuple(old)), _handings(tuple(new))
    return any(
        verb == other and giver == taker_b and taker == giver_b and giver != taker
        for verb, giver, taker in mine
        for other, giver_b, taker_b in theirs
    )


def _handings(words: tuple[str, ...]) -> set[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Each (verb stem, giver, taker) ``words`` may read as: "A sold B to C", or "A lent C B"
    split at every place, since which words name the taker the words alone do not tell."""
    found = set()
    for verb, giver, rest in _giving_verbs(words):
        if "to" in rest:
            to = rest.index("to")
            found.add((stem(verb), giver, rest[to + 1 :]))
        else:
            found.update((stem(verb), giver, rest[:cut]) for cut in range(1, len(rest)))
    return found


def _giving_verbs(words: tuple[str, ...]) -> Iterator[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Each giving verb of ``words`` with the words before and after it."""
    for place, word in enumerate(words):
        if stem(word) in _TAKEN_AS and place:
            yield word, words[:place], words[place + 1 :]


def _past(word: str) -> bool:
    return word in PAST_FORMS or word.endswith("ed")


def owner_named(words: Sequence[str]) -> tuple[str, ...]:
    """``words`` of a statement whose subject is the user with "their" (or "his", "her") put
    as "the user's"; of one whose subject is the user's someone, "him" (or "her" before an
    article, a number, a phrase of time or the end) put as "the user" ("The user's brother
    owes him $2,000", "… texts her every evening");
    and a verb that only repeats the comparison's ("… than the user does") dropped from the
    end."""
    words = tuple(words)
    if words[:2] == _USER:
        named = tuple(
            part
            for word in words
            for part in (("the", "users") if word in _POSSESSIVE_PRONOUNS else (word,))
        )
    elif words[:2] == _USERS and len(words) > 2:
        named = tuple(
            part
            for place, word in enumerate(words)
            for part in (_USER if _the_user_meant(words, place) else (word,))
        )
    else:
        named = words
    if len(named) > 2 and named[-1] in _TRAILING_VERBS and named[-3:-1] == _USER:
        named = named[:-1]
    return named


def _the_user_meant(words: tuple[str, ...], place: int) -> bool:
    """Whether the pronoun at ``place`` stands for the user as the one a verb is done to."""
    word = words[place]
    if word == "him":
        return True
    following = words[place + 1 : place + 2]
    return word == "her" and (
        not following or following[0] in _AFTER_HER_DONE_TO or following[0].isdigit()
    )


def _exchanged_around(old: tuple[str, ...], new: tuple[str, ...], hinges: frozenset[str]) -> bool:
    """Whether ``new`` is ``old`` with the two runs either side of its one hinge word (of
    ``hinges``) exchanged: "Lena is married to Dev" / "Dev is married to Lena"."""
    at = [i for i, word in enumerate(old) if word in hinges]
    if len(at) != 1:
        return False
    (where,) = at
    first = first_difference(old, new)
    return any(first + start <= where < first + end for start, end in swap_middles(old, new))


def first_difference(old: Sequence[str], new: Sequence[str]) -> int:
    """Where two word sequences first differ: the shorter one's length if it begins the other."""
    pairs = enumerate(zip(old, new, strict=False))
    return next((i for i, (mine, theirs) in pairs if mine != theirs), min(len(old), len(new)))


def swap_middles(old: Sequence[str], new: Sequence[str]) -> Iterator[tuple[int, int]]:
    """Each (start, end) of the words left in place between two runs whose exchange turns
    ``old`` into ``new``, counted from where the two first differ."""
    old, new = tuple(old), tuple(new)
    if old == new or sorted(old) != sorted(new):
        return
    first = first_difference(old, new)
    end = len(old) - first_difference(old[::-1], new[::-1])
    mine, theirs = old[first:end], new[first:end]
    for head in range(1, len(mine)):
        for tail in range(1, len(mine) - head):
            if theirs == mine[len(mine) - tail :] + mine[head : len(mine) - tail] + mine[:head]:
                yield head, len(mine) - tail
