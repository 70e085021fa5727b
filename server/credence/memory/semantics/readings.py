"""Why two texts that share their words still say different things: the last duplicate guard."""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import pairwise
from typing import Final

from credence.memory.semantics.aspects import (
    aspect_differs,
    hedged,
    recurrence_differs,
    tense_shift,
    wish_differs,
)
from credence.memory.semantics.bounds import COMPLEMENT, bounded_value, complemented
from credence.memory.semantics.coverage import answers
from credence.memory.semantics.lexicon import PEOPLE
from credence.memory.semantics.order import first_difference, hands_exchanged, owner_named
from credence.memory.semantics.shares import share_differs
from credence.memory.semantics.small_words import (
    alternation_differs,
    attempt_differs,
    causative_differs,
    complement_differs,
    connective_differs,
    content_stems,
    degree_differs,
    direction_differs,
    doer_and_done_to_exchanged,
    in_or_out_differs,
    obligation_lifted,
    people_counted_differently,
    qualifier_differs,
    quantifier_differs,
    relation_swapped,
    roles_exchanged,
    runs_exchanged,
    stems_of,
    strength_differs,
    voice_differs,
    word_changed,
)
from credence.memory.semantics.statement_words import MONTHS, PREPOSITIONS, WEEKDAYS
from credence.memory.semantics.statements import statement, stem
from credence.memory.semantics.thesaurus import COMMON_VERBS
from credence.memory.semantics.tokens import STOP_WORDS
from credence.memory.semantics.wording import (
    LENGTH_OF_TIME,
    SYNONYMS,
    meaning,
    permits,
    same_meaning,
    scopes_apart,
    words_of,
)

# "the user's boss's assistant", "the sisters' kids": who owns what.
_POSSESSOR = re.compile(r"(\w+)['’]s\b|(\w+s)['’](?!\w)")
# "the user's father": a person someone has, and whose.
_KIN_OWNED = re.compile(r"(\w+)['’]s?\s+(\w+)")
_KIN: Final = PEOPLE | {"mother", "father", "mom", "mum", "dad", "husband", "wife", "partner"}
_WORD_OR_COMMA = re.compile(r"\w[\w'’.\-]*|,")
_SEPARATORS: Final = frozenset({",", "and", "or"})
# Contractions that own nothing ("it's", "that's"), and the user, whom every belief is about.
_NOT_OWNERS: Final = frozenset(
    {"it", "that", "there", "here", "what", "who", "he", "she", "let", "user"}
)


def another_reading(old: str, new: str) -> str:
    """Why ``old`` and ``new``, though worded alike, say different things, or "": a scope only
    one narrows the rule with ("… in English only"), a comparison the other way ("older than" /
    "younger than"), a bound, a permission, a tense ("is" / "was"), a hedge ("might be"), how
    many or how often ("and" / "or", "all" / "most", "every other"), how much ("mildly" /
    "very"), a relation word ("to" / "from"), "in" against "out of", swapped roles, a person
    counted otherwise ("brother" / "brothers"), where "only" stands, an owner dropped ("the
    boss's assistant" / "the assistant") or a compound cut to its head ("mother-in-law" /
    "mother")."""
    nested = set(words_of(old)) <= set(words_of(new)) or set(words_of(new)) <= set(words_of(old))
    differ = scopes_apart(old, new, nested=nested)
    # A condition that holds no word the other side lacks only rephrases it ("… half empty" /
    # "… when it is half empty"); "only" and "unless" change the rule by themselves.
    if differ and not (differ == {"if"} and same_meaning(old, new)):
        return "a scope differs"
    comparisons = _comparisons(old), _comparisons(new)
    # Only when both sides compare: "over lunch" and "under any circumstances" compare nothing.
    if all(comparisons) and comparisons[0] != comparisons[1]:
        return "a comparison differs"
    mine, theirs = words_of(old), words_of(new)
    if _bound_only_on_one_side(old, new) or _bound_only_on_one_side(new, old):
        return "a bound differs"
    if (
        permits(old) != permits(new)
        or obligation_lifted(mine) != obligation_lifted(theirs)
        or strength_differs(mine, theirs)
    ):
        return "a permission differs"
    if tense_shift(mine, theirs):
        return "a tense differs"
    if (
        aspect_differs(mine, theirs)
        or attempt_differs(mine, theirs)
        or complement_differs(mine, theirs)
        or causative_differs(mine, theirs)
        or wish_differs(mine, theirs)
    ):
        return "whether it was done differs"
    if hedged(mine) != hedged(theirs):
        return "a certainty differs"
    if (
        connective_differs(mine, theirs)
        or quantifier_differs(mine, theirs)
        or alternation_differs(mine, theirs)
        or people_counted_differently(_possessives_cut(old), _possessives_cut(new))
        or recurrence_differs(mine, theirs)
        or share_differs(mine, theirs)
    ):
        return "how many or how often differs"
    if degree_differs(mine, theirs) or qualifier_differs(mine, theirs):
        return "how much differs"
    if (
        relation_swapped(mine, theirs)
        or direction_differs(mine, theirs)
        or in_or_out_differs(mine, theirs)
        or roles_exchanged(meaning(old), meaning(new))
        or roles_exchanged(stems_of(mine), stems_of(theirs))
        or runs_exchanged(mine, theirs)
        # "The user's brother is older than the user" / "The user is older than their brother".
        or runs_exchanged(owner_named(mine), owner_named(theirs))
        or hands_exchanged(mine, theirs)  # "lent Marco $200" / "Marco lent $200 to the user"
        or voice_differs(mine, theirs)
        or doer_and_done_to_exchanged(mine, theirs)
        or _cause_and_effect_exchanged(old, new)
        or _from_now_on_one_side(old, new)
    ):
        return "a relation or role differs"
    if (
        _only_moved(mine, theirs)
        or _owner_dropped(old, new)
        or _person_of_theirs_added(old, new)
        or _owned_thing_put_in(mine, theirs)
        or _quotes_differ(old, new)
        or _head_of_compound(old, new)
        or _swapped_for_a_plain_word(mine, theirs, old, new)
        or _list_item_dropped(old, new)
        or _word_added(mine, theirs)
        or _owners_rearranged(old, new)
        or _name_extended(old, new)
        or _kind_modifier_differs(mine, theirs)
        or _one_of_several(mine, theirs)
        or _kin_of_theirs_put_in(mine, theirs)
        or _owner_and_owned_traded(old, new)
        or _phrase_dropped(mine, theirs)
    ):
        return "what is meant differs"
    return ""


def _possessives_cut(text: str) -> tuple[str, ...]:
    """:func:`words_of` with each "'s" taken off its owner: "the user's daughter's school"
    names one daughter, where "daughters" would read as several."""
    return words_of(_POSSESSOR.sub(lambda owner: owner.group(1) or owner.group(2), text))


# "within a day" may be said "in a day"; "within 30 days of receipt" is no time from now.
_FROM_NOW: Final = frozenset({"in", "within"})


def _from_now_on_one_side(old: str, new: str) -> bool:
    """Whether one says a length of time from now where the other says how long a thing
    lasts: "The break is in half an hour" / "The break is half an hour long"."""
    mine, theirs = _lengths_of_time(old), _lengths_of_time(new)
    return any(
        "in" in (mine[length], theirs[length]) and not {mine[length], theirs[length]} <= _FROM_NOW
        for length in mine.keys() & theirs.keys()
    )


def _lengths_of_time(text: str) -> dict[str, str]:
    """Each length of time ``text`` names, with the word before it ("in" for "in a week"); not
    one that describes a noun ("works in two-week sprints")."""
    words = statement(text).words
    return {
        word.canon: words[position - 1].canon if position else ""
        for position, word in enumerate(words)
        if LENGTH_OF_TIME.match(word.canon) and "-" not in word.surface
    }


# Words before a noun that make it another thing, not a narrower one: a half marathon is no
# marathon, an ex-partner no partner, a vice president no president. ("former", "acting" and
# "interim" are qualifiers, small_words.qualifier_differs, which this reading comes after.)
_KIND_MODIFIERS: Final = frozenset(
    {"half", "ex", "late", "vice", "deputy", "assistant", "step", "future", "honorary", "fake"}
    | {"mock", "alleged", "potential", "prospective", "semi", "mini", "co", "non", "part"}
    | {"junior", "senior", "associate", "sub", "pre", "post"}
)


def _kind_modifier_differs(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Whether one side has such a word before a word both sides hold, and the other does not
    ("training for a half marathon" / "training for a marathon")."""
    for side, other in ((mine, theirs), (theirs, mine)):
        for position, (word, following) in enumerate(pairwise(side)):
            if (
                word in _KIND_MODIFIERS
                and word not in other
                and following in other
                and following not in STOP_WORDS
                and side[max(position - 2, 0) : position] != ("and", "a")  # "three and a half"
            ):
                return True
    return False


_POSSESSIVE_PRONOUNS: Final = frozenset({"their", "his", "her", "my", "our"})


def _kin_of_theirs_put_in(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Whether one side names a person of someone's ("their daughter") the other has no word
    for: "avoids gluten because they have celiac disease" / "… because their daughter has"."""
    for side, other in ((mine, theirs), (theirs, mine)):
        for word, person in pairwise(side):
            kin = person in _KIN or person.rstrip("s") in _KIN
            if (
                word in _POSSESSIVE_PRONOUNS
                and kin
                and person not in other
                and not any(answers(stem(person), stem(said), SYNONYMS) for said in other)
            ):
                return True
    return False


def _owner_and_owned_traded(old: str, new: str) -> bool:
    """Whether who owns whom traded places around one role: "Carla is the user's manager" /
    "The user is Carla's manager" (the same word after each owner)."""
    for side, other in ((old, new), (new, old)):
        side_words, other_words = words_of(side), words_of(other)
        if "users" not in other_words or "users" in side_words:
            continue
        roles = {after for before, after in pairwise(other_words) if before == "users"}
        for owner in _owners(side) - _owners(other):
            owned = {after for before, after in pairwise(side_words) if before == owner + "s"}
            if owner in other_words and owned & roles:
                return True
    return False


def _one_of_several(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Whether "the" and "a" trade places before a role held in something, all else in place:
    "the founder of Acme" is the only one, "a founder of Acme" one of several."""
    changed = word_changed(mine, theirs)
    if changed is None or {changed[0], changed[1]} not in ({"the", "a"}, {"the", "an"}):
        return False
    at = first_difference(mine, theirs)
    return mine[at + 2 : at + 3] in (("of",), ("at",))


def _only_moved(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Whether "only" qualifies another word on each side: "only eats meat" / "eats only
    meat"."""
    after = {mine[i + 1] for i in range(len(mine) - 1) if mine[i] == "only"}
    others = {theirs[i + 1] for i in range(len(theirs) - 1) if theirs[i] == "only"}
    return bool(after) and bool(others) and after != others


def _swapped_for_a_plain_word(
    mine: tuple[str, ...], theirs: tuple[str, ...], old: str, new: str
) -> bool:
    """Whether one word that carries meaning was swapped, and nothing else, for a word that is
    no synonym of it and carries none of its own ("rents their apartment" / "owns their
    apartment": "owns" is read as "has")."""
    changed = word_changed(mine, theirs)
    if changed is None or meaning(old) == meaning(new):  # "euros" / "EUR": one meaning
        return False
    first, second = stem(changed[0]), stem(changed[1])
    if (first in meaning(old)) == (second in meaning(new)):
        return False  # both plain, or both meaning words (judged before this guard)
    return not answers(first, second, SYNONYMS)


def _person_of_theirs_added(old: str, new: str) -> bool:
    """Whether one names a person of someone's where the other names that someone alone:
    "belongs to the user" / "belongs to the user's father"."""
    for side, other in ((old, new), (new, old)):
        other_words = set(words_of(other))
        for owner, person in _KIN_OWNED.findall(side):
            owner, person = owner.casefold(), person.casefold()
            kin = person in _KIN or person.rstrip("s") in _KIN
            if kin and owner in other_words and person not in other_words:
                return True
    return False


# Words in quotes, which stand for themselves: "the word 'simply'" is not "the word 'simple'".
_QUOTED = re.compile(r"(?:(?<=\s)|^)[\"“‘']([^\"”’'\n]{1,60})[\"”’'](?!\w)")


def _quotes_differ(old: str, new: str) -> bool:
    """Whether both quote and quote differently (one side alone may quote what the other
    says plainly: "sign off 'Best, Sam'" / "sign off with Best, Sam")."""
    mine, theirs = _quoted(old), _quoted(new)
    return bool(mine) and bool(theirs) and mine != theirs


@lru_cache(maxsize=16384)
def _quoted(text: str) -> frozenset[str]:
    """What ``text`` quotes, each as written (case aside)."""
    return frozenset(quote.casefold() for quote in _QUOTED.findall(text))


# How many words a thing put in after its owner may have: "the user's UK clients".
_OWNED_WORDS: Final = 3


def _owned_thing_put_in(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Whether one is the other with a thing of someone's put where that someone stood, all
    else in place: "write for the user" / "write for the user's UK clients"."""
    longer, shorter, at = _apart(mine, theirs)
    if at >= len(shorter) or longer[at] != shorter[at] + "s":
        return False  # the owner must stand where the other has it, possessive
    added = len(longer) - len(shorter)
    put_in = longer[at + 1 : at + 1 + added]
    return (
        0 < added <= _OWNED_WORDS
        and not any(word in STOP_WORDS for word in put_in)
        and longer[at + 1 + added :] == shorter[at + 1 :]
    )


def _apart(
    mine: tuple[str, ...], theirs: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """The longer of two word sequences, the shorter, and where they first differ."""
    longer, shorter = (mine, theirs) if len(mine) > len(theirs) else (theirs, mine)
    return longer, shorter, first_difference(longer, shorter)


def _list_item_dropped(old: str, new: str) -> bool:
    """Whether one is the other with one item of a list taken out: "laundry, vacuuming and the
    recycling" / "laundry and the recycling", "peanuts, shellfish and eggs" / "peanuts and
    shellfish"."""
    mine, theirs = _listed(old), _listed(new)
    longer, shorter, _ = _apart(mine, theirs)
    if len(longer) != len(shorter) and _pair_cut_to_one(longer, shorter):
        return True
    if len(longer) == len(shorter) or "," not in longer or not {"and", "or"} & set(shorter):
        return False
    kept = tuple(word for word in shorter if word not in _SEPARATORS)
    # An item starts after a separator; it may end before words the items share ("swimming,
    # piano and chess lessons").
    return any(
        tuple(word for word in longer[: start + 1] + longer[end:] if word not in _SEPARATORS)
        == kept
        for start, word in enumerate(longer)
        if word in _SEPARATORS
        for end in range(start + 2, len(longer) + 1)
    )


def _pair_cut_to_one(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    """Whether ``shorter`` is ``longer`` with one of two things joined by "and" or "or" taken
    out, the joining word with it: "allergic to cats and dogs" / "allergic to cats"."""
    cut = len(longer) - len(shorter)
    return any(
        longer[:start] + longer[start + cut :] == shorter
        for at, word in enumerate(longer)
        if word in ("and", "or")
        for start in (at, at + 1 - cut)
        if start >= 0 and start + cut <= len(longer) and cut >= 2
    )


# Particles that make a verb another verb: "rents" / "rents out", "gave" / "gave up".
_PARTICLES: Final = frozenset({"out", "up", "off", "away", "back", "down", "over"})
# Words that move a time: "until the holidays" / "until after the holidays", "has two cats
# and a dog" / "has two cats and had a dog".
_MOVING_A_TIME: Final = frozenset({"after", "before", "had", "was", "were"})


def _word_added(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Whether one is the other with a word added that changes it: a particle after a word
    ("rents the flat" / "rents out the flat", "gave up coffee") or a word that moves a time
    ("until the holidays" / "until after the holidays", "and a dog" / "and had a dog")."""
    longer, shorter, at = _apart(mine, theirs)
    if len(longer) != len(shorter) + 1:
        return False
    if at == 0 or longer[:at] + longer[at + 1 :] != shorter:
        return False
    added, before = longer[at], longer[at - 1]
    particle = added in _PARTICLES and before not in _PARTICLES | {"the", "a", "an"}
    return particle or added in _MOVING_A_TIME


# A name: capitalised words in a row ("iPhone" counts), with the numbers and capitalised
# words that follow ("Visual Studio Code", "iPhone 14 Pro").
_NAME = re.compile(r"\b[a-z]*[A-Z]\w*(?:[ \t]+(?:[A-Z]\w*|\d[\w.]*))*")
# The fewest words a name has before another grown from it counts as another name.
_NAME_WORDS: Final = 2


def _name_extended(old: str, new: str) -> bool:
    """Whether one names a thing the other names with more words, all else the same: "Visual
    Studio" / "Visual Studio Code", "iPhone 14" / "iPhone 14 Pro"."""
    mine, theirs = _names(old), _names(new)
    for shorter, longer in ((mine, theirs), (theirs, mine)):
        for name in shorter:
            grown = [other for other in longer if other != name and _extends(other, name)]
            if grown and not (set(shorter) - {name}) ^ (set(longer) - set(grown)):
                return True
    return False


@lru_cache(maxsize=16384)
def _names(text: str) -> tuple[tuple[str, ...], ...]:
    """The names in ``text``, each as its words: not a small word or a verb that opens the
    sentence (capitalised anyway), nor a number before a name, nor a date ("March 14")."""
    found = []
    for match in _NAME.finditer(text):
        words = match.group(0).split()
        if match.start() == 0 and (len(words) == 1 or _plain(words[0])):
            words.pop(0)
        while words and words[0][0].isdigit():
            words.pop(0)
        if words and words[0].casefold() not in MONTHS and words[0].casefold() not in WEEKDAYS:
            found.append(tuple(words))
    return tuple(found)


def _plain(word: str) -> bool:
    folded = word.casefold()
    return folded in STOP_WORDS or folded in COMMON_VERBS


def _extends(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    """Whether ``longer`` is ``shorter`` with words before or after it; a one-word name grown
    is often the same one in full ("Ana" / "Ana Silva", "Chase" / "Chase Bank")."""
    size = len(shorter)
    if size < _NAME_WORDS or len(longer) <= size:
        return False
    return longer[:size] == shorter or longer[-size:] == shorter


# "the user's boss's wife": owners in a row, each owning the next.
_OWNER_CHAIN = re.compile(r"(?:\w+['’]s?\s+){2,}\w+")
_OWNED = re.compile(r"['’]s?\b")


def _owners_rearranged(old: str, new: str) -> bool:
    """Whether a row of owners holds the same people in another order or one of them twice:
    "the user's boss's wife" / "the user's wife's boss", "the user's boss's name" / "the user's
    boss's boss's name"."""
    mine, theirs = _owner_chains(old), _owner_chains(new)
    return any(chain != other and set(chain) == set(other) for chain in mine for other in theirs)


@lru_cache(maxsize=16384)
def _owner_chains(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(words_of(_OWNED.sub("", chain)) for chain in _OWNER_CHAIN.findall(text.casefold()))


@lru_cache(maxsize=16384)
def _listed(text: str) -> tuple[str, ...]:
    """The words of ``text`` with its commas, which separate the items of a list."""
    return tuple(word.rstrip(".") for word in _WORD_OR_COMMA.findall(text.casefold()))


def _owner_dropped(old: str, new: str) -> bool:
    """Whether one names an owner the other never mentions: "the user's boss's assistant" /
    "the user's assistant"."""
    for side, other in ((old, new), (new, old)):
        if _owners(side) - set(words_of(other)) - _owners(other):
            return True
    return False


@lru_cache(maxsize=16384)
def _owners(text: str) -> frozenset[str]:
    owners = (one or several for one, several in _POSSESSOR.findall(text))
    return frozenset(owner.casefold() for owner in owners) - _NOT_OWNERS


def _head_of_compound(old: str, new: str) -> bool:
    """Whether one side's compound of three or more parts is cut to its head on the other:
    "mother-in-law" / "mother", "editor-in-chief" / "editor"."""
    for side, other in ((old, new), (new, old)):
        other_words = set(words_of(other))
        for word in meaning(side):
            head, *rest = word.split("-")
            if (
                len(rest) > 1  # "mother-in-law"; two parts are often one word ("long-haul")
                and head in other_words
                and word not in meaning(other)
                and not (set(rest) - STOP_WORDS) & other_words  # "in July" keeps no "law"
            ):
                return True
    return False


def _bound_only_on_one_side(old: str, new: str) -> bool:
    """Whether ``old`` puts a lower bound on a value ``new`` states bare: "more than once a
    week" / "once a week", "at least 3 backups" / "3 backups". (An upper bound is often put
    without a symbol: "limit it to two cups a day".)"""
    words, others = meaning(old), meaning(new)
    if _comparisons(new):
        return False
    return any(
        symbol in (">", ">=") and bounded_value(words, symbol) in others
        for symbol in words
        if symbol in COMPLEMENT
    )


@lru_cache(maxsize=16384)
def _comparisons(text: str) -> Counter[str]:
    """The comparison symbols ``text``'s meaning holds ("older than" is ">", "at most" "<="),
    a negative text's as their complements ("never over $50" says "at most $50")."""
    found = [word for word in meaning(text) if word in COMPLEMENT]
    return Counter(complemented(found) if statement(text).negative else found)


# The most words a phrase of detail holds, its preposition included ("from retailers",
# "for the whole frontend team").
_MAX_PHRASE: Final = 5
_PARTS_OF_THE_DAY: Final = frozenset(
    stem(word) for word in ("morning", "afternoon", "evening", "night")
)


def _phrase_dropped(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """Whether the new one is the old with a phrase a preposition opens taken out and no word
    of its own put in: "Archive newsletters from retailers" / "Archive all newsletters" says it
    of more things than the belief did, however alike the two read. (A phrase put in is a
    refinement, read before this guard.)"""
    if len(new) >= len(old):
        return False  # nothing taken out
    kept = content_stems(new)
    if not kept <= {stem(word) for word in old}:
        return False  # the new one says something of its own: a rewording
    for tag, start, end, _, _ in SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        phrase = old[start:end]
        nouns = content_stems(phrase)
        # Wholly gone, not moved ("before breakfast" / "before eating breakfast"), and not a
        # part of the day, which a clock time's "am" may say instead.
        if (
            tag in ("delete", "replace")
            and 1 < len(phrase) <= _MAX_PHRASE
            and phrase[0] in PREPOSITIONS
            and nouns
            and not nouns & kept
            and not nouns <= _PARTS_OF_THE_DAY
        ):
            return True
    return False


def _cause_and_effect_exchanged(old: str, new: str) -> bool:
    """Whether what one gives as the cause the other gives as the effect: "moved to Leeds
    because their partner got a job there" / "their partner got a job in Leeds because the user
    moved there", "Because of back pain, the user uses a standing desk" / "Because of the
    standing desk, the user has back pain"."""
    mine, theirs = _cause_and_effect(old), _cause_and_effect(new)
    if mine is None or theirs is None:
        return False
    (effect, cause), (their_effect, their_cause) = mine, theirs
    straight = len(effect & their_effect) + len(cause & their_cause)
    crossed = len(effect & their_cause) + len(cause & their_effect)
    return crossed > straight


def _cause_and_effect(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The content stems of what ``text`` gives as the effect and as the cause, when it says
    "… because …" or "Because …, …"; None when it gives no cause."""
    words = _listed(text)
    if words[:1] == ("because",) and "," in words:
        at = words.index(",")
        effect, cause = words[at + 1 :], words[1:at]
    elif "because" in words[1:]:
        at = words.index("because", 1)
        effect, cause = words[:at], words[at + 1 :]
    else:
        return None
    return _stems_between_commas(effect), _stems_between_commas(cause)


def _stems_between_commas(words: tuple[str, ...]) -> frozenset[str]:
    return content_stems(tuple(word for word in words if word != ","))
