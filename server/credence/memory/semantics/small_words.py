"""Small words that change what a statement says: "and" / "or", quantifiers, directions, roles."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise
from typing import Final

from credence.memory.semantics.dates import ORDINAL_WORDS
from credence.memory.semantics.lexicon import DETERMINERS, PEOPLE
from credence.memory.semantics.order import first_difference, swap_middles
from credence.memory.semantics.quantities import says_a_number
from credence.memory.semantics.statement_words import MONTHS, PAST_FORMS, WEEKDAYS
from credence.memory.semantics.statements import stem
from credence.memory.semantics.tokens import STOP_WORDS

# Quantifiers by what they claim; "all", "every" and "each" claim the same.
_QUANTIFIERS: Final = {
    **dict.fromkeys(("all", "every", "each"), "all"),
    "most": "most",
    "many": "many",
    **dict.fromkeys(("some", "several"), "some"),
    **dict.fromkeys(("few", "little"), "few"),
    **dict.fromkeys(("none", "neither"), "none"),
    "both": "all",
    **dict.fromkeys(("either", "single"), "one"),
}


def connective_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one joins what the other separates: "Python and Go" / "Python or Go"."""
    if "or" not in old and "or" not in new:
        return False
    only_old, only_new = set(old) - set(new), set(new) - set(old)
    return ("and" in only_old and "or" in only_new) or ("or" in only_old and "and" in only_new)


def quantifier_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether both quantify and claim differently: "all invoices" / "most invoices"; under a
    negation "every" is not "any" ("not every weekend" is some, "not any weekend" none)."""
    mine, theirs = _quantities(tuple(old)), _quantities(tuple(new))
    if bool(mine) and bool(theirs) and mine != theirs:
        return True
    changed = word_changed(old, new)
    negated = not _NEGATIONS.isdisjoint(old)
    return negated and changed is not None and set(changed) in ({"every", "any"}, {"all", "any"})


@lru_cache(maxsize=16384)
def _quantities(words: tuple[str, ...]) -> frozenset[str]:
    """What the quantifiers in ``words`` claim: "a few" claims some and "few" hardly any, "not
    all" claims less than all; "at most" bounds a value and claims nothing."""
    claims = set()
    for position, word in enumerate(words):
        before = words[position - 1] if position else ""
        if word not in _QUANTIFIERS or (word == "most" and before == "at"):
            continue
        if word == "little" and before in _SIZED_BY:
            continue  # "the little dog", "their little garden": a size
        if word in ("few", "little") and before == "a":
            claims.add("some")
        elif word == "all" and before == "not":
            claims.add("not all")
        else:
            claims.add(_QUANTIFIERS[word])
    return frozenset(claims)


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


def word_changed(old: Sequence[str], new: Sequence[str]) -> tuple[str, str] | None:
    """The one word ``old`` and ``new`` differ in, at the same place, or None."""
    if len(old) != len(new):
        return None
    changed = [(mine, theirs) for mine, theirs in zip(old, new, strict=True) if mine != theirs]
    return changed[0] if len(changed) == 1 else None


# How strongly a degree word says it: "mildly spicy" is not "very spicy".
_DEGREES: Final = {
    **dict.fromkeys(("mildly", "slightly", "somewhat", "fairly", "moderately", "little"), "low"),
    **dict.fromkeys(("very", "extremely", "highly", "incredibly", "super"), "high"),
    # "too small" is more than wanted, "small enough" as much as needed.
    "too": "excess",
    **dict.fromkeys(("enough", "sufficiently"), "sufficient"),
}
# Words that set a relation between two things; one swapped for another changes it: "Tuesdays
# and Thursdays" / "Tuesdays through Thursdays", "to the client" / "from the client".
_RELATIONS: Final = frozenset(
    {"to", "from", "by", "into", "onto", "toward", "towards", "against", "for"}
    | {"and", "or", "through", "thru", "until", "till", "with", "before", "after", "during"}
)


def degree_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether both grade a quality and grade it differently: "mildly" / "very" spicy."""
    mine = {_DEGREES[word] for word in old if word in _DEGREES}
    theirs = {_DEGREES[word] for word in new if word in _DEGREES}
    return bool(mine) and bool(theirs) and mine != theirs


def alternation_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one says "every other" (or "every second", "alternate") and the other plain
    "every"; "every two" and "fortnightly" say "every other" too."""
    mine, theirs = _every(old, *_ALTERNATE), _every(new, *_ALTERNATE)
    return mine != theirs and not _every(new if mine else old, *_TWO)


def _every(words: Sequence[str], after: frozenset[tuple[str, ...]], alone: frozenset[str]) -> bool:
    """Whether a word of ``after`` follows "every", or a word of ``alone`` stands anywhere."""
    return not alone.isdisjoint(words) or any(
        word == "every" and tuple(words[position + 1 : position + 2]) in after
        for position, word in enumerate(words)
    )


_ALTERNATE: Final = frozenset({("other",), ("second",)}), frozenset({"alternate"})
_TWO: Final = frozenset({("two",), ("2",)}), frozenset({"fortnight", "fortnightly"})


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
    "and" / "through", "works for" / "works with", "under the mat" / "in the mat", "is an only
    child" / "has an only child"."""
    changed = word_changed(old, new)
    if changed is None:
        return False
    mine, theirs = changed
    if (mine in _RELATIONS and theirs in _RELATIONS) or {mine, theirs} in _OPPOSED_PARTICLES:
        return True  # "on track" / "off track", "phase in" / "phase out"
    places = _PLACES.get(mine), _PLACES.get(theirs)
    if all(places) and places[0] != places[1]:
        # "in" / "on" / "at" alone often say one place ("on the team" / "in the team").
        return not {mine, theirs} <= _PLAIN_PLACES
    if (mine in _BOUNDS_IN_TIME and theirs in _PREPOSITIONS) or (
        theirs in _BOUNDS_IN_TIME and mine in _PREPOSITIONS
    ):
        return True  # "closed until Monday" / "closed on Monday", "the day of" / "day after"
    at = first_difference(old, new)
    if _placed_in_time(old, at) and _placed_in_time(new, at):
        return True  # "filed by April 15" / "filed on April 15", "for two weeks" / "in two weeks"
    return {_LINKS.get(mine), _LINKS.get(theirs)} == {"be", "have"}


_OPPOSED_PARTICLES: Final = ({"on", "off"}, {"in", "out"}, {"up", "down"})
# Words that bound a time or a way rather than place a thing in it.
_BOUNDS_IN_TIME: Final = frozenset(
    {"until", "till", "since", "from", "to", "through", "before", "after", "during"}
)
_PREPOSITIONS: Final = frozenset({"of", "on", "in", "at", "for", "by", "within"})
# Words that name a time by themselves, and lengths of time ("a week").
_TIME_WORDS: Final = frozenset({"noon", "midnight", "today", "tonight", "tomorrow", "yesterday"})
_TIME_UNITS: Final = frozenset(
    {"minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "fortnight"}
    | {"month", "months", "year", "years"}
)


def _placed_in_time(words: Sequence[str], position: int) -> bool:
    """Whether the word at ``position`` is a preposition before a time or a length of time: "by
    April 15", "for two weeks", "at 5pm", "in a month"."""
    if words[position] not in _PREPOSITIONS and words[position] not in _BOUNDS_IN_TIME:
        return False
    following = tuple(words[position + 1 : position + 3])
    if not following:
        return False
    first = following[0]
    if says_a_number(first) or first in _TIME_WORDS:
        return True
    if first in MONTHS or first.rstrip("s") in WEEKDAYS:
        return True
    second = following[1] if len(following) > 1 else ""
    if first == "the":  # "by the 3rd", "on the first"
        return second[:1].isdigit() or second in ORDINAL_WORDS
    return first in ("a", "an") and second in _TIME_UNITS


# Where one thing is against another, by the side it is on.
_PLACES: Final = {
    **dict.fromkeys(("in", "inside", "within", "at"), "in"),
    **dict.fromkeys(("on", "onto", "atop"), "on"),
    **dict.fromkeys(("under", "below", "beneath", "underneath"), "below"),
    **dict.fromkeys(("over", "above"), "above"),
    **dict.fromkeys(("behind",), "behind"),
    **dict.fromkeys(("beside", "near", "next"), "beside"),
    **dict.fromkeys(("outside",), "outside"),
}
_PLAIN_PLACES: Final = frozenset({"in", "on", "at"})
# Being something is not having it: "is an only child" / "has an only child".
_LINKS: Final = {
    **dict.fromkeys(("is", "are", "am", "was", "were", "be"), "be"),
    **dict.fromkeys(("has", "have", "had"), "have"),
}
# Words that set a starting point ("since 2019") or an end ("until 2019").
_STARTS: Final = frozenset({"since", "from"})
_ENDS: Final = frozenset({"until", "till", "til"})


def direction_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one starts where the other ends: "since 2019" / "until 2019"."""
    mine, theirs = _directed(tuple(old)), _directed(tuple(new))
    return any(theirs.get(value, side) != side for value, side in mine.items())


@lru_cache(maxsize=16384)
def _directed(words: tuple[str, ...]) -> dict[str, str]:
    """The word after each starting or ending word in ``words``, and which of the two it is."""
    found = {}
    for position, word in enumerate(words[:-1]):
        if word in _STARTS or word in _ENDS:
            found[words[position + 1]] = "start" if word in _STARTS else "end"
    return found


# "needn't" and "don't have to" lift an obligation; "mustn't" and "don't" forbid.
_LIFTED: Final = frozenset({("need", "not"), ("no", "need"), ("not", "required")})
_LIFTED_AFTER_NEGATION: Final = frozenset({("have", "to"), ("need", "to"), ("has", "to")})
_NEGATIONS: Final = frozenset({"dont", "doesnt", "didnt", "not", "never"})


def obligation_lifted(words: Sequence[str]) -> bool:
    """Whether ``words`` say a thing need not be done ("needn't", "don't have to", "not
    required"), which does not forbid it ("mustn't")."""
    return _lifted(tuple(words))


@lru_cache(maxsize=16384)
def _lifted(words: tuple[str, ...]) -> bool:
    pairs = set(pairwise(words))
    if any(pair in pairs for pair in _LIFTED) or "neednt" in words:
        return True
    triples = zip(words, words[1:], words[2:], strict=False)
    return any(
        first in _NEGATIONS and (second, third) in _LIFTED_AFTER_NEGATION
        for first, second, third in triples
    )


# Words that say a thing was tried, which does not say it was done.
_ATTEMPTS: Final = frozenset(
    {"try", "tries", "tried", "trying", "attempt", "attempts", "attempted", "attempting"}
)


def attempt_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one says a thing was tried and the other that it was done: "managed to cancel"
    / "tried to cancel", "cancelled" / "tried to cancel"."""
    return _ATTEMPTS.isdisjoint(old) != _ATTEMPTS.isdisjoint(new)


# Words that, added to a rule, hold it back rather than add to it: an exception ("except",
# "unless"), a restriction ("only"), a weaker frequency ("sometimes", "rarely", "hardly"), an
# approximation ("almost", "partly"), a lack ("lacks"), a stand-in ("acting", "former").
_QUALIFIERS: Final = frozenset(
    {"except", "excluding", "unless", "only", "sometimes", "occasionally", "rarely", "seldom"}
    | {"hardly", "barely", "scarcely", "almost", "nearly", "partly", "partially", "mostly"}
    | {"lack", "lacks", "lacked", "lacking", "acting", "former", "interim", "least"}
)


def qualifier_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one side holds the rule back with a word the other lacks: "almost missed" /
    "missed", "uses the car" / "hardly uses the car"."""
    return _qualifiers(tuple(old)) != _qualifiers(tuple(new))


@lru_cache(maxsize=16384)
def _qualifiers(words: tuple[str, ...]) -> frozenset[str]:
    """The words of ``words`` that hold a rule back; "at least" is a bound, not "least"."""
    return frozenset(
        _SAME_QUALIFIER.get(word, word)
        for position, word in enumerate(words)
        if word in _QUALIFIERS
        and not (word == "least" and words[position - 1 : position] == ("at",))
    )


# Qualifiers that hold a rule back by as much: "nearly always" is "almost always".
_SAME_QUALIFIER: Final = {
    "nearly": "almost",
    "barely": "hardly",
    "scarcely": "hardly",
    "seldom": "rarely",
    "partially": "partly",
    "excluding": "except",
}


def qualifier_added(old: Sequence[str], new: Sequence[str]) -> str:
    """The word ``new`` adds that holds ``old``'s rule back, or "": "Tests run on every push"
    / "… except to main", "The user checks Slack" / "The user rarely checks Slack", "All
    members" / "Some members"."""
    added = sorted(_qualifiers(tuple(new)) - _qualifiers(tuple(old)))
    if added:
        return added[0]
    if quantifier_differs(old, new):  # "All team members" / "Some team members"
        return next(word for word in new if word in _QUANTIFIERS)
    return ""


# Words that relate two things one way round: "Vim keybindings in VS Code" is not "VS Code
# keybindings in Vim". ("and", "or", "with" and "is" relate both ways.)
_ONE_WAY: Final = frozenset(
    {"in", "of", "for", "to", "from", "by", "on", "at", "into", "onto", "than", "over", "under"}
    | {"above", "below", "inside", "within", "against", "toward", "towards", "instead"}
    # An order in time: "lint first, then test" is not "test first, then lint".
    | {"then", "before", "after"}
)


def runs_exchanged(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether two runs of words swapped places around a word that relates them one way, all
    else in place: "Vim keybindings in VS Code" / "VS Code keybindings in Vim", "the dog bit
    the cat" / "the cat bit the dog". (Clauses reordered around "is", "KLM is the user's
    airline" / "the user's airline is KLM", are not.)"""
    old, new = tuple(old), tuple(new)
    mine = old[first_difference(old, new) :]
    return any(_relates_one_way(mine[start:end]) for start, end in swap_middles(old, new))


def _relates_one_way(between: tuple[str, ...]) -> bool:
    """Whether the words between two runs relate them one way: a one-way word ("in"), or a
    verb alone ("the dog bit the cat"), or a verb or predicate that ends the first of two
    clauses ("the husband cooks and the user does the dishes")."""
    if not _ONE_WAY.isdisjoint(between):
        return True
    verbs = [word for word in between if word not in ("the", "a", "an")]
    if len(verbs) > 2 and verbs[-1] in ("and", "but", "while", "whereas"):
        return True  # "the sister is vegetarian, but the user …": each clause its own subject
    if len(verbs) == 2 and verbs[1] in ("and", "but", "while"):
        verbs = verbs[:1]
    return len(verbs) == 1 and verbs[0] not in _BOTH_WAYS


# Words between two runs that relate them both ways: "X is Y", "X and Y", "X meets Y".
_BOTH_WAYS: Final = frozenset(
    {"is", "are", "am", "was", "were", "be", "and", "or", "nor", "with", "vs", "versus", "plus"}
    | {"meets", "met", "marries", "married", "equals", "matches", "resembles", "like", "as"}
)

_PASSIVE_AUXILIARIES: Final = frozenset(
    {"is", "are", "am", "was", "were", "be", "been", "being", "get", "gets", "got"}
)


def voice_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one says its subject had a thing done to it and the other that the subject did
    it: "The user was interviewed by a reporter" / "The user interviewed a reporter"."""
    return _done_by_subject(tuple(old), tuple(new)) or _done_by_subject(tuple(new), tuple(old))


def _done_by_subject(passive: tuple[str, ...], active: tuple[str, ...]) -> bool:
    """Whether ``active`` has the verb ``passive`` puts in the passive done by a subject other
    than the passive's agent (the noun after "by")."""
    if "by" not in passive:
        return False
    verbs = stems_of(active)
    for position, word in enumerate(passive[:-2]):
        if word not in _PASSIVE_AUXILIARIES or passive[position + 2] != "by":
            continue
        verb = stem(passive[position + 1])
        if verb not in verbs:
            continue
        done = verbs.index(verb)
        if "by" in active[done + 1 : done + 2]:
            continue  # passive on both sides
        agent, subject = _agent(passive[position + 3 :]), _subject(active[:done])
        # The subject's words but the user who owns it, all in the agent, name one doer ("the
        # user's neighbour keeps" / "is kept by their neighbour"; not "the platform team").
        if agent and subject and not (subject - {_THE_USER} or subject) <= agent:
            return True
    return False


@lru_cache(maxsize=16384)
def stems_of(words: tuple[str, ...]) -> tuple[str, ...]:
    """The stem of each of ``words``, in order, read once per text."""
    return tuple(stem(word) for word in words)


def doer_and_done_to_exchanged(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether the nouns either side of one verb traded places: "The user owes their brother
    $500" / "The user's brother owes the user $500" (not across a passive, which names the
    doer last, nor around a verb that relates both ways, "meets")."""
    old, new = tuple(old), tuple(new)
    if "by" in old or "by" in new or content_stems(old) != content_stems(new):
        return False  # the same nouns and verb on both sides, or no trade
    for position, verb in enumerate(old[1:-1], 1):
        if verb in STOP_WORDS or verb in _BOTH_WAYS or verb not in new[1:]:
            continue
        there = new.index(verb, 1)
        doer, done_to = _noun_before(old, position), _nouns_after(old, position)
        new_doer, new_done_to = _noun_before(new, there), _nouns_after(new, there)
        # The doer is the noun right before the verb; what it is done to may be named with a
        # name beside it ("owes their brother Sam" / "The user's brother Sam owes the user").
        if doer and new_doer and doer != new_doer and doer in new_done_to and new_doer in done_to:
            return True
    return False


@lru_cache(maxsize=16384)
def content_stems(words: tuple[str, ...]) -> frozenset[str]:
    """The stems of ``words`` that are not small words (cached: call it with a tuple)."""
    return frozenset(stem(word) for word in words if word not in STOP_WORDS)


def _noun_before(words: tuple[str, ...], position: int) -> str:
    before = words[position - 1]
    return "" if before in STOP_WORDS else stem(before)


def _nouns_after(words: tuple[str, ...], position: int) -> frozenset[str]:
    """The first run of nouns after ``position``, as stems ("their brother Sam" is brother and
    Sam); "them" right after it is the user, whom beliefs are about ("… lent them $2,000" /
    "… lent the user $2,000")."""
    if words[position + 1 : position + 2] == ("them",):
        return frozenset({"user"})
    rest = words[position + 1 :]
    start = next((at for at, word in enumerate(rest) if word not in STOP_WORDS), len(rest))
    end = next((at for at in range(start, len(rest)) if rest[at] in STOP_WORDS), len(rest))
    return frozenset(stem(word) for word in rest[start:end])


_WHO: Final = frozenset({"whoever", "whomever", "someone", "somebody", "anyone", "anybody"})


def _agent(after_by: tuple[str, ...]) -> frozenset[str]:
    """The noun "by" names, as stems: its words after any determiner, up to the next small
    word ("by the team before it is merged" is "team"); none for "by whoever …"."""
    words = list(after_by)
    while words and words[0] in DETERMINERS:
        words.pop(0)
    noun = []
    for word in words:
        if word in STOP_WORDS or word in _WHO:
            break
        noun.append(stem(word))
    return frozenset(noun)


_THE_USER: Final = stem("users")  # "user" or "user's": whom every belief is about


def _subject(before_verb: tuple[str, ...]) -> frozenset[str]:
    """The noun right before a verb, as stems; none when a small word stands there ("prefers
    to pay")."""
    noun = []
    for word in reversed(before_verb):
        if word in STOP_WORDS:
            break
        noun.append(stem(word))
    return frozenset(noun)


# How strongly a rule binds: "must" requires, "should" advises, "could" allows.
_STRENGTHS: Final = {
    **dict.fromkeys(("must", "mustnt", "shall"), "required"),
    **dict.fromkeys(("should", "shouldnt", "ought"), "advised"),
    **dict.fromkeys(("could", "can", "may"), "possible"),
}


def strength_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether both bind and one requires what the other advises: "should be signed" / "must
    be signed"."""
    mine = {_STRENGTHS[word] for word in old if word in _STRENGTHS}
    theirs = {_STRENGTHS[word] for word in new if word in _STRENGTHS}
    return bool(mine) and bool(theirs) and mine != theirs


# Verbs whose meaning turns on their complement: "stopped talking" ceased, "stopped to talk"
# paused in order to; "remembered locking" / "remembered to lock".
_COMPLEMENT_TURNS: Final = frozenset({"stop", "remember", "forget", "regret", "try", "mean"})


def complement_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether a verb whose meaning turns on its complement takes "-ing" on one side and "to"
    on the other: "stopped talking" / "stopped to talk"."""
    mine, theirs = _complements(tuple(old)), _complements(tuple(new))
    return any(theirs.get(pair, form) != form for pair, form in mine.items())


@lru_cache(maxsize=16384)
def _complements(words: tuple[str, ...]) -> dict[tuple[str, str], str]:
    found = {}
    for position in range(len(words) - 1):
        verb = stem(words[position])
        if verb not in _COMPLEMENT_TURNS:
            continue
        following = words[position + 1]
        if following.endswith("ing"):
            found[verb, stem(following)] = "ing"
        elif following == "to" and position + 2 < len(words):
            found[verb, stem(words[position + 2])] = "to"
    return found


# "had her car repaired", "got the brakes fixed": someone else did it.
_CAUSATIVES: Final = frozenset({"had", "has", "have", "having", "got", "get", "gets", "getting"})
# Words before "little" that make it a size ("the little dog"), not an amount ("a little").
_SIZED_BY: Final = DETERMINERS - {"a", "an"} | {"these", "those"}
_CAUSED_REACH: Final = 4


def causative_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether one says the subject had a thing done and the other that it did the thing:
    "had her car repaired" / "repaired her car"."""
    for side, other in ((tuple(old), tuple(new)), (tuple(new), tuple(old))):
        done_by_other = _caused(side) - _caused(other)
        if done_by_other and done_by_other & set(stems_of(other)):
            return True
    return False


@lru_cache(maxsize=16384)
def _caused(words: tuple[str, ...]) -> frozenset[str]:
    """The stems of what ``words`` say the subject had done by someone else."""
    caused = set()
    for position, word in enumerate(words[:-2]):
        if word not in _CAUSATIVES or words[position + 1] not in DETERMINERS:
            continue
        for later in words[position + 2 : position + 2 + _CAUSED_REACH]:
            if later.endswith("ed") or later in PAST_FORMS:
                caused.add(stem(later))
                break
    return frozenset(caused)
