"""How the pair judgement reads one text: words, stems, opposites, scope, meaning, values."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise
from typing import Final

from credence.memory.semantics.lexicon import (
    ABSOLUTE_WORDS,
    ENGLISH_FUNCTION_WORDS,
    FOREIGN_FUNCTION_WORDS,
    NEGATING_PREFIXES,
    NEVER_JOINED_FIRST,
    PARTICLES,
    PERMISSION_WORDS,
    PHRASAL,
    SCOPE_MARKERS,
    UNIT_WORDS,
    antonym_table,
)
from credence.memory.semantics.preference import swapped
from credence.memory.semantics.statement_words import NUMBER_WORDS
from credence.memory.semantics.statements import statement, stem
from credence.memory.semantics.thesaurus import (
    COMMON_VERBS,
    LIGHT_WORDS,
    ORDER_WORDS,
    PHRASE_FOLDS,
    fold_phrases,
    same_bag,
    synonym_sets,
    synonymous,
)
from credence.memory.semantics.tokens import NEGATION_WORDS, has_negation, normalise

# "in" + "put" is not a negation: a negating prefix needs a stem of at least this length.
MIN_PREFIXED_STEM: Final = 4
# One function word shared with another language ("Prefer SI units") is not a language.
MIN_FOREIGN_EVIDENCE: Final = 2
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
ANTONYMS = antonym_table(stem)
VERBS = frozenset(stem(word) for word in COMMON_VERBS)
# Endings that derive an adverb or a comparison from an adjective.
_DERIVED_ENDINGS: Final = ("ly", "est", "er")
_FOLDS = {tuple(stem(word) for word in phrase): stem(word) for phrase, word in PHRASE_FOLDS.items()}
_FOLDED = frozenset(_FOLDS.values())
_ARTICLES: Final = frozenset({"the", "a", "an"})
_LIGHT = frozenset(stem(word) for word in LIGHT_WORDS)
_ORDER = frozenset(stem(word) for word in ORDER_WORDS)
_PERMISSION = frozenset(stem(word) for word in PERMISSION_WORDS)
# Phrasal verbs in any tense: "turned off" and "turning off" fold as "turn off" does.
_PHRASAL = {(stem(verb), particle): word for (verb, particle), word in PHRASAL.items()}
_PHRASAL_VERBS = frozenset(verb for verb, _ in _PHRASAL)
_OPPOSITE_PARTICLES: Final = (("on", "off"), ("in", "out"))


@lru_cache(maxsize=16384)
def words_of(text: str) -> tuple[str, ...]:
    """Lowercased word tokens with apostrophes dropped and phrasal verbs folded to one word."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    raw = [token.replace("'", "") for token in _WORD.findall(folded)]
    out: list[str] = []
    position = 0
    while position < len(raw):
        pair = (stem(raw[position]), *raw[position + 1 : position + 2])
        if pair in _PHRASAL:
            out.append(_PHRASAL[pair])
            position += 2
            continue
        out.append(raw[position])
        position += 1
    return tuple(out)


@lru_cache(maxsize=16384)
def key(text: str) -> str:
    return normalise(text)


@lru_cache(maxsize=16384)
def is_english(text: str) -> bool:
    """True unless the text reads as another language (function words or a non-Latin script).

    The bundled sentence model reads English only; other languages are never compared by it.
    """
    tokens = words_of(text)
    if not tokens:
        return True
    letters = [ch for ch in text if ch.isalpha()]
    if letters and sum(1 for ch in letters if "LATIN" not in unicodedata.name(ch, "")) * 2 > len(
        letters
    ):
        return False
    english = sum(1 for token in tokens if token in ENGLISH_FUNCTION_WORDS)
    # Letters with diacritics are rare in English words and common in its neighbours'.
    accented = sum(1 for token in tokens if not token.isascii())
    foreign = sum(
        1
        for token in tokens
        if token in FOREIGN_FUNCTION_WORDS and token not in ENGLISH_FUNCTION_WORDS
    )
    evidence = foreign + accented
    return evidence <= english or evidence < MIN_FOREIGN_EVIDENCE


@lru_cache(maxsize=16384)
def stems(text: str) -> frozenset[str]:
    return frozenset(_stems_in_order(text))


@lru_cache(maxsize=16384)
def _stems_in_order(text: str) -> tuple[str, ...]:
    return tuple(base_form(stem(token)) for token in words_of(text))


def _one_side_only(old: str, new: str) -> tuple[frozenset[str], frozenset[str]]:
    """The stems one side holds more often than the other, counted: "The smart lock is locked"
    / "… is unlocked" keeps "lock" on both sides, yet one of the old side's two became
    "unlock"."""
    mine, theirs = _stems_in_order(old), _stems_in_order(new)
    mine_set, theirs_set = stems(old), stems(new)
    only_old, only_new = mine_set - theirs_set, theirs_set - mine_set
    if len(mine) == len(mine_set) and len(theirs) == len(theirs_set):
        return only_old, only_new  # no stem twice on either side: sets say it all
    more_old = {word for word in mine_set & theirs_set if mine.count(word) > theirs.count(word)}
    more_new = {word for word in mine_set & theirs_set if theirs.count(word) > mine.count(word)}
    return only_old | more_old, only_new | more_new


def base_form(word: str) -> str:
    """An adverb or a comparison put as the adjective the antonym lexicon lists
    ("conservatively" -> "conservative", "cheapest" -> "cheap"), else the word itself."""
    if word in ANTONYMS:
        return word
    for ending in _DERIVED_ENDINGS:
        base = stem(word[: -len(ending)]) if word.endswith(ending) else ""
        if base in ANTONYMS:
            return base
    return word


def opposed_words(old: str, new: str) -> tuple[tuple[str, str], ...]:
    """Pairs (word only in old, word only in new) that mean opposite things.

    Opposites come from a general antonym lexicon and from negating prefixes
    ("lock"/"unlock", "secure"/"insecure"). A word the statement's polarity already counts
    ("forbidden", "prohibited", "banned") is no opposite besides: "Pets are not allowed" says
    what "Pets are forbidden" says.
    """
    only_old, only_new = _one_side_only(old, new)
    only_old, only_new = only_old - _negating(old), only_new - _negating(new)
    found: set[tuple[str, str]] = set()
    for word in only_old:
        found.update((word, other) for other in ANTONYMS.get(word, frozenset()) & only_new)
        for prefix in NEGATING_PREFIXES:
            if len(word) >= MIN_PREFIXED_STEM and prefix + word in only_new:
                found.add((word, prefix + word))
            stem_part = word[len(prefix) :]
            if (
                word.startswith(prefix)
                and len(stem_part) >= MIN_PREFIXED_STEM
                and stem_part in only_new
            ):
                found.add((word, stem_part))
    found.update(_split_particles(old, new, only_old, only_new))
    return tuple(sorted(found))


def _negating(text: str) -> frozenset[str]:
    """The stems of ``text``'s words that its polarity counts as a negation."""
    return frozenset(stem(word) for word in words_of(text) if word in NEGATION_WORDS)


def _split_particles(
    old: str, new: str, only_old: frozenset[str], only_new: frozenset[str]
) -> set[tuple[str, str]]:
    """Opposite particles of a phrasal verb split by its object: "Turn notifications on" /
    "Turn notifications off" (joined, "turn on" folds to "enable" as it is read)."""
    found = {
        (first, second)
        for first, second in (*_OPPOSITE_PARTICLES, *(pair[::-1] for pair in _OPPOSITE_PARTICLES))
        if first in only_old and second in only_new
    }
    if found and _PHRASAL_VERBS & stems(old) & stems(new):
        return found
    return set()


def swapped_preference(old: str, new: str) -> bool:
    """True when ``new`` is ``old`` with the two sides of a preference or order exchanged
    (see :func:`~credence.memory.semantics.preference.swapped`)."""
    return swapped(words_of(old), words_of(new))


# What "once" counts rather than conditions ("once a week", "once per sprint").
_COUNTED_AFTER_ONCE: Final = frozenset({"a", "an", "per", "every", "each", "daily", "weekly"})
# Nouns that end in "-ing" and so open a real condition after "when" ("when morning comes").
_ING_NOUNS: Final = frozenset(
    {"morning", "evening", "spring", "nothing", "something", "anything", "everything", "thing"}
)
# Verbs after which "where" opens what is said, not a condition ("disclose where the user lives").
_TELLING: Final = frozenset(
    {"know", "knows", "tell", "say", "show", "share", "disclose", "reveal", "ask", "mention"}
)


def scope_markers(text: str) -> frozenset[str]:
    """The scope class of every scope word in ``text``, whatever it opens (see
    :func:`scope_of` for only those that narrow a rule)."""
    return frozenset(SCOPE_MARKERS[word] for word in words_of(text) if word in SCOPE_MARKERS)


@lru_cache(maxsize=16384)
def scope_of(text: str) -> frozenset[str]:
    """The scope classes ``text`` narrows a rule with: "if" and "when" set the same condition,
    "unless" and "except" the same exception, "only" its own. Not a scope: "once" that counts
    ("once a week"), "when" before a verb's -ing form (the activity the rule belongs to, "when
    writing to the legal team"), "where" after a verb of telling ("disclose where …")."""
    tokens = words_of(text)
    found = set()
    for position, word in enumerate(tokens):
        if word not in SCOPE_MARKERS:
            continue
        following = tokens[position + 1] if position + 1 < len(tokens) else ""
        previous = tokens[position - 1] if position else ""
        if word == "once" and (following in _COUNTED_AFTER_ONCE or not following):
            continue
        if word in ("when", "whenever") and _activity(following):
            continue
        if word == "where" and previous in _TELLING:
            continue
        found.add(SCOPE_MARKERS[word])
    return frozenset(found)


def scopes_apart(old: str, new: str, *, nested: bool) -> frozenset[str]:
    """The scope classes one of two texts narrows its rule with and the other does not: every
    scope word when one's words hold the other's (a clause added whole narrows the rule
    whatever opens it), else only real conditions (:func:`scope_of`)."""
    scope = scope_markers if nested else scope_of
    return scope(old) ^ scope(new)


def _activity(word: str) -> bool:
    return word.endswith("ing") and len(word) > 5 and word not in _ING_NOUNS


# How far before a permission word a negation still denies it: "is not allowed", "no one can".
_PERMISSION_NEGATION_REACH: Final = 2


@lru_cache(maxsize=16384)
def permits(text: str) -> bool:
    """Whether ``text`` grants a permission: "is fine", "can", "may" — not "is not allowed",
    "no one can", "may not". A negation elsewhere belongs to what is permitted ("claims under
    $20 can be approved without receipts" grants one)."""
    tokens = words_of(text)
    for position, token in enumerate(tokens):
        if token not in PERMISSION_WORDS:
            continue
        before = tokens[max(0, position - _PERMISSION_NEGATION_REACH) : position]
        after = tokens[position + 1 : position + 2]
        if not any(word in NEGATION_WORDS for word in (*before, *after)):
            return True
    return False


def reordered(old: str, new: str) -> bool:
    """Whether words that set an order or position differ between the two (not explained by a
    synonym): "conclusion first, then details" / "details first, end with the conclusion"."""
    mine, theirs = set(meaning(old)), set(meaning(new))
    gone, added = (mine - theirs) & _ORDER, (theirs - mine) & _ORDER
    return any(
        not any(synonymous(word, other, SYNONYMS) for other in theirs) for word in gone
    ) or any(not any(synonymous(word, other, SYNONYMS) for other in mine) for word in added)


@lru_cache(maxsize=16384)
def absolute(text: str) -> bool:
    return bool(frozenset(words_of(text)) & ABSOLUTE_WORDS)


@lru_cache(maxsize=16384)
def negated(text: str) -> bool:
    """Whether any negation word appears: "never … without …" is positive by parity, but it is
    not the same statement as one with no negation at all."""
    return has_negation(words_of(text))


@lru_cache(maxsize=16384)
def value_tokens(text: str) -> frozenset[str]:
    """Canonical tokens that carry a value: numbers, quantities, times, names, places, …"""
    shape = statement(text)
    return shape.values | frozenset(
        word.canon
        for word in shape.words
        if word.kind != "word" or any(ch.isdigit() for ch in word.canon)
    )


@lru_cache(maxsize=16384)
def meaning(text: str) -> tuple[str, ...]:
    """The words a paraphrase must keep, in order: content words and comparison symbols, with
    phrasal verbs folded to the word they mean ("talk about" -> "discuss") and light words
    ("anything", "really") left out. Compared with :func:`same_bag`, synonym for synonym."""
    return _folded_meaning(text, _FOLDS, _FOLDED)


@lru_cache(maxsize=16384)
def _idiom_meaning(text: str) -> tuple[str, ...]:
    """:func:`meaning`, with WordNet's verb phrases folded too."""
    return _folded_meaning(text, _IDIOM_FOLDS, _IDIOMS_FOLDED)


def _folded_meaning(
    text: str, folds: dict[tuple[str, ...], str], folded: frozenset[str]
) -> tuple[str, ...]:
    shape = statement(text)
    # "X is not allowed" says what "Never X" says: in a prohibition the permission word is
    # only its phrasing.
    light = _LIGHT | _PERMISSION if shape.negative else _LIGHT
    return tuple(
        word
        for word in _lasting(fold_phrases(shape.canons, folds), text)
        if (word in shape.content or word[:1] in "<>" or word in folded or word == _LONG)
        and word not in light
    )


_LAST: Final = stem("last")
_LONG: Final = stem("long")
_TAKES: Final = stem("takes")
# A canonical length of time ("#1800time" for "half an hour").
LENGTH_OF_TIME: Final = re.compile(r"^#[\d.]+time$")
# "last" as "final": "the last 30 minutes", "their last two weeks".
_FINAL = re.compile(r"\b(?:the|its|their|his|her|my|your|our|this|these|those)\s+last\b", re.I)


def _lasting(words: list[str], text: str) -> list[str]:
    """``words`` with a length of time said as long however it is said: "lasts 30 minutes"
    and "takes 30 minutes" as "is 30 minutes long". Not "the last 30 minutes" (the final
    ones), "Take 30 minutes" (an instruction) or "is in 30 minutes" (no length)."""
    out = list(words)
    verbs = (_TAKES,) if _FINAL.search(text) else (_LAST, _TAKES)
    for position, word in enumerate(out[1:-1], start=1):
        if word in verbs and LENGTH_OF_TIME.match(out[position + 1]):
            out[position] = _LONG
    return out


def same_meaning(old: str, new: str) -> bool:
    """Whether two statements hold the same words, each with itself or a synonym."""
    mine, theirs = meaning(old), meaning(new)
    if same_bag(mine, theirs, SYNONYMS):
        return True
    # Read with WordNet's verb phrases as one word only here, where the whole bag must match:
    # the readings compare a phrase's particle as a word ("moved up" / "moved back").
    my_idioms, their_idioms = _idiom_meaning(old), _idiom_meaning(new)
    if (my_idioms, their_idioms) == (mine, theirs):
        return False  # no verb phrase on either side
    return same_bag(my_idioms, their_idioms, SYNONYMS)


def is_unit(word: str) -> bool:
    """A unit of measure or a currency by name, singular or plural."""
    folded = word.casefold()
    return folded in UNIT_WORDS or (folded.endswith("s") and folded[:-1] in UNIT_WORDS)


# British and American spellings of one word: "organise"/"organize", "colour"/"color",
# "analyse"/"analyze", "centre"/"center".
_SPELLINGS: Final = (
    ("yse", "yze"),
    ("ise", "ize"),
    ("isat", "izat"),
    ("our", "or"),
    ("tre", "ter"),
)


def spelling(word: str) -> str:
    """``word`` with British spellings put in their American form."""
    for british, american in _SPELLINGS:
        word = word.replace(british, american)
    for british, american in (("is", "iz"), ("ys", "yz")):
        if word.endswith(british):
            return word[: -len(british)] + american
    if len(word) > 3 and word.endswith(("tr", "br")):
        return word[:-1] + "er"  # the stem of "centre" or "fibre", its final e cut
    return word


SYNONYMS = synonym_sets(stem, ANTONYMS, spelling)


def _phrase_folds(lemmas: Iterable[str]) -> dict[tuple[str, ...], str]:
    """WordNet's verb phrases by their stems, articles left out ("hit the sack" reads
    ("hit", "sack")), each folding to the phrase as the table names it."""
    folds = {}
    for lemma in (each for each in lemmas if "_" in each):
        words = tuple(stem(part) for part in lemma.split("_") if part not in _ARTICLES)
        if len(words) > 1:
            folds[words] = lemma
    return folds


# WordNet's verb phrases ("looked into", "hits the sack") fold to the phrase its table lists,
# whose senses it shares with single words ("research", "retire"); a hand-written fold wins.
_IDIOM_FOLDS = {**_phrase_folds(SYNONYMS.wordnet), **_FOLDS}
_IDIOMS_FOLDED = frozenset(_IDIOM_FOLDS.values())


@lru_cache(maxsize=16384)
def marked_tokens(text: str) -> frozenset[str]:
    """What a duplicate may never differ in: numbers, quantities, times, names and code-like
    tokens (canonical, so "5pm" and "17:00" agree), and unit words named without a number."""
    return frozenset(
        word.canon for word in statement(text).words if word.kind != "word" or is_unit(word.surface)
    )


def differing_values(old: str, new: str) -> tuple[frozenset[str], frozenset[str]]:
    """The marked tokens (see :func:`marked_tokens`) of each text that the other does not hold
    in any form: "Comic Sans" opening one sentence and inside the other is one name."""
    return without_named_days(
        marked_tokens(old) - statement(new).vocabulary,
        marked_tokens(new) - statement(old).vocabulary,
    )


# Calendar words that name a set of days: "on weekends" says "on a Saturday or Sunday".
DAY_SETS: Final = {
    "weekend": frozenset({"saturday", "sunday"}),
    "weekday": frozenset({"monday", "tuesday", "wednesday", "thursday", "friday"}),
}


def without_named_days(
    gone: frozenset[str], added: frozenset[str]
) -> tuple[frozenset[str], frozenset[str]]:
    """``gone`` and ``added`` without a day-set word on one side and all its days on the other
    ("weekend" / "saturday", "sunday"): the same days, not a changed value."""
    for word, days in DAY_SETS.items():
        if word in gone and days <= added:
            gone, added = gone - {word}, added - days
        elif word in added and days <= gone:
            gone, added = gone - days, added - {word}
    return gone, added


@lru_cache(maxsize=16384)
def numbered_compounds(text: str) -> frozenset[str]:
    """Hyphenated words that hold a number ("two-space", "4-day", "five-a-side"), each with
    its number words put in digits so "two-week" and "2-week" agree."""
    found = set()
    for word in statement(text).words:
        parts = word.canon.split("-")
        if len(parts) > 1 and any(part.isdigit() or part in NUMBER_WORDS for part in parts):
            found.add(
                "-".join(
                    str(NUMBER_WORDS[part]) if part in NUMBER_WORDS else stem(part)
                    for part in parts
                )
            )
    return frozenset(found)


# Who a personal pronoun names; "you" is left out (it addresses whoever follows the rule).
_PERSONS: Final = {
    **dict.fromkeys(("i", "me", "my", "mine"), "me"),
    **dict.fromkeys(("we", "us", "our", "ours"), "us"),
    **dict.fromkeys(("they", "them", "their", "theirs", "theyre"), "them"),
    **dict.fromkeys(("he", "him", "his"), "him"),
    **dict.fromkeys(("she", "her", "hers"), "her"),
}


def _persons(text: str) -> frozenset[str]:
    return frozenset(_PERSONS[word] for word in words_of(text) if word in _PERSONS)


def hard_difference(old: str, new: str) -> str:
    """Why ``old`` and ``new`` can never be duplicates, or "": a differing value (number,
    quantity, time, name), a differing named or code-like token or unit, an antonym that no
    negation on the other side cancels ("dislikes X" / "doesn't like X" say one thing), or
    personal pronouns that name nobody in common."""
    marked = frozenset().union(*differing_values(old, new))
    if marked:
        return "a value differs: " + ", ".join(sorted(marked))
    compounds = numbered_compounds(old), numbered_compounds(new)
    if all(compounds) and compounds[0] != compounds[1]:
        return "a value differs: " + ", ".join(sorted(compounds[0] ^ compounds[1]))
    if opposed_words(old, new) and statement(old).negative == statement(new).negative:
        return "an opposite word"
    persons = _persons(old), _persons(new)
    if all(persons) and persons[0].isdisjoint(persons[1]):
        # "Email the report to us" / "… to them": pronouns are fillers to the comparison,
        # but two that name nobody in common are two recipients.
        return "another person: " + ", ".join(sorted(persons[0] | persons[1]))
    return ""


# A word and what separates it from the next: a hyphen or spaces join a compound written apart.
_WORD_AND_GAP = re.compile(r"([^\W\d_]+)(-|\s+)?", re.UNICODE)


def joined_compounds(old: str, new: str) -> tuple[str, str]:
    """The two texts with a compound written apart on one side ("time zone", "stand-up") and
    whole on the other ("timezone", "standup") written whole on both; a compound written with a
    hyphen on one side and a space on the other is joined on both. Words that change meaning
    when joined never are ("every day" is not "everyday", "may be" not "maybe")."""

    def join(side: str, other: str) -> str:
        joinable = _joined_forms(side)
        if joinable.isdisjoint(_whole_words(other)) and joinable.isdisjoint(_joined_forms(other)):
            return side
        whole, written_apart = _whole_words(other), _written_apart(other)
        chosen: list[tuple[str, tuple[int, int]]] = []
        for joined, hyphen, span in _compounds_apart(side):
            if (joined in whole or (joined, not hyphen) in written_apart) and not (
                chosen and chosen[-1][1][1] > span[0]
            ):
                chosen.append((joined, span))
        for joined, (start, end) in reversed(chosen):
            side = side[:start] + joined + side[end:]
        return side

    return join(old, new), join(new, old)


@lru_cache(maxsize=16384)
def _whole_words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.casefold()))


@lru_cache(maxsize=16384)
def _joined_forms(text: str) -> frozenset[str]:
    return frozenset(joined for joined, _, _ in _compounds_apart(text))


@lru_cache(maxsize=16384)
def _written_apart(text: str) -> frozenset[tuple[str, bool]]:
    return frozenset((joined, hyphen) for joined, hyphen, _ in _compounds_apart(text))


@lru_cache(maxsize=16384)
def _compounds_apart(text: str) -> tuple[tuple[str, bool, tuple[int, int]], ...]:
    """Each two neighbouring words of ``text`` split by a hyphen or spaces that could be one
    compound: (the two joined, casefolded; whether a hyphen split them; the span they cover)."""
    words = list(_WORD_AND_GAP.finditer(text))
    found: list[tuple[str, bool, tuple[int, int]]] = []
    for first, second in pairwise(words):
        head, tail = first.group(1).casefold(), second.group(1).casefold()
        hyphen = first.group(2) == "-"
        # "O negative" / "O-negative", "T shirt" / "T-shirt": one capital may open one.
        letter = len(head) == 1 and first.group(1).isupper()
        if (
            first.group(2) is None
            or len(tail) < 2
            or (len(head) < 2 and not letter)
            or (head in NEVER_JOINED_FIRST and not letter)
            or (tail in PARTICLES and not hyphen)
        ):
            continue
        found.append((head + tail, hyphen, (first.start(), second.start() + len(tail))))
    return tuple(found)
