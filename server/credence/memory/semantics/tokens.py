"""Word-level text keys: the duplicate key, content tokens, negation and overlap."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Final

# Apostrophes join ("don't" -> "dont") so contractions stay one token and match their
# apostrophe-less spelling; every other punctuation mark separates words.
APOSTROPHES = re.compile(r"['\u2018\u2019\u02bc\u0060\u00b4]")
_NON_WORD = re.compile(r"[^\w\s]|_")
_WHITESPACE = re.compile(r"\s+")
_HAS_ALNUM = re.compile(r"[^\W_]")

NEGATION_WORDS: frozenset[str] = frozenset(
    {
        "never",
        "not",
        "no",
        "none",
        "nothing",
        "nobody",
        "nowhere",
        "neither",
        "nor",
        "dont",
        "doesnt",
        "didnt",
        "isnt",
        "arent",
        "wasnt",
        "werent",
        "havent",
        "hasnt",
        "hadnt",
        "wont",
        "wouldnt",
        "cant",
        "cannot",
        "couldnt",
        "shouldnt",
        "mustnt",
        "neednt",
        "stop",
        "stops",
        "stopped",
        "stopping",
        "avoid",
        "avoids",
        "avoided",
        "avoiding",
        "refuse",
        "refuses",
        "refused",
        "refusing",
        "refrain",
        "refrains",
        "refrained",
        "refraining",
        "abstain",
        "abstains",
        "abstained",
        "abstaining",
        "prevent",
        "prevents",
        "prevented",
        "preventing",
        "without",
        # What is forbidden is not to be done: "Screens at dinner are forbidden" is "No
        # screens at dinner"; "off-limits" as "off limits" (negating_verb) is. The verbs stay
        # the opposites of "allow": "The landlord forbade pets" contradicts "… allowed pets".
        "forbidden",
        "prohibited",
        "banned",
        "off-limits",
    }
)

# Function words plus the filler of imperative lessons ("always", "please", "make sure to",
# "use"): they carry no topic, and counting them would make unrelated lessons overlap.
STOP_WORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "so",
        "as",
        "than",
        "too",
        "very",
        "just",
        "also",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "about",
        "above",
        "after",
        "again",
        "against",
        "before",
        "below",
        "beneath",
        "underneath",
        "between",
        "during",
        "through",
        "under",
        "until",
        "up",
        "down",
        "out",
        "off",
        "over",
        "once",
        "here",
        "there",
        "when",
        "whenever",
        "where",
        "why",
        "how",
        "because",
        "while",
        "since",
        "per",
        "via",
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "us",
        "our",
        "ours",
        "you",
        "your",
        "yours",
        "yourself",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "it",
        "its",
        "they",
        "them",
        "their",
        "theirs",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "doing",
        "done",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "ought",
        "all",
        "any",
        "both",
        "each",
        "every",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "same",
        "own",
        "only",
        "always",
        "please",
        "thanks",
        "thank",
        "ok",
        "okay",
        "yes",
        "yeah",
        "hey",
        "hi",
        "actually",
        "really",
        "use",
        "uses",
        "used",
        "using",
        "make",
        "makes",
        "made",
        "sure",
        "try",
        "get",
        "gets",
        "got",
        "let",
        "lets",
        "like",
        "one",
        "thing",
        "things",
        "way",
        "etc",
        "eg",
        "ie",
    ]
)

NO_LONGER = "longer"

# "No later than 9" / "not more than 3": "no" or "not" before one of these and "than" bounds a
# value (the symbol says which way) and negates nothing. "No longer" alone still negates.
BOUND_COMPARATIVES: dict[str, str] = {
    **dict.fromkeys(("more", "longer", "later", "bigger", "larger", "higher"), "<="),
    **dict.fromkeys(("heavier", "older", "greater"), "<="),
    **dict.fromkeys(("less", "fewer", "earlier", "shorter", "smaller", "lower"), ">="),
    "younger": ">=",
}


def bounds_a_value(tokens: list[str] | tuple[str, ...], position: int) -> bool:
    """Whether the "no"/"not" at ``position`` opens a bound ("no later than"), not a negation."""
    return (
        tokens[position] in ("no", "not")
        and position + 2 < len(tokens)
        and tokens[position + 1] in BOUND_COMPARATIVES
        and tokens[position + 2] == "than"
    )


# Forms of "be" and "get" before which "used to" means accustomed ("is used to the cold").
_ACCUSTOMED_AFTER: Final = frozenset(
    {"be", "is", "are", "am", "was", "were", "been", "being", "get", "gets", "got", "getting"}
)
# Words that negate the verb after "to": "fails to finish", "is unable to finish", "is yet to
# finish".
_NEGATING_TO: Final = frozenset({"fail", "fails", "failed", "failing", "unable", "yet"})


def negating_verb(tokens: list[str] | tuple[str, ...], position: int) -> bool:
    """Whether the token at ``position`` opens "used to" (a past habit, no longer so), "fail
    to" ("fails to finish" is "does not finish"), "unable to", "yet to" ("is yet to finish"),
    or a phrase of avoiding ("steer clear of", "stay away from", "off limits"), each read as a
    negation."""
    following = tokens[position + 1] if position + 1 < len(tokens) else ""
    return (
        past_habit(tokens, position)
        or (tokens[position] in _NEGATING_TO and following == "to")
        or (tokens[position] in _KEEPING and following in ("clear", "away"))
        or (tokens[position] == "off" and following == "limits")
    )


# "steer clear of", "stay away from", "keep away from": avoiding.
_KEEPING: Final = frozenset(
    {"steer", "steers", "steered", "steering", "stay", "stays", "stayed", "staying"}
    | {"keep", "keeps", "kept", "keeping"}
)


def past_habit(tokens: list[str] | tuple[str, ...], position: int) -> bool:
    """Whether the "used" at ``position`` opens "used to": what was so and is no longer ("The
    user used to live in Berlin"), read as a negation; not "is used to" (accustomed)."""
    return (
        tokens[position] == "used"
        and position + 1 < len(tokens)
        and tokens[position + 1] == "to"
        and (position == 0 or tokens[position - 1] not in _ACCUSTOMED_AFTER)
    )


def has_negation(tokens: list[str] | tuple[str, ...]) -> bool:
    """Whether any of ``tokens`` is a negation word that does not open a bound, or a "used
    to" or "fail to" (:func:`negating_verb`)."""
    return any(
        (token in NEGATION_WORDS and not bounds_a_value(tokens, position))
        or negating_verb(tokens, position)
        for position, token in enumerate(tokens)
    )


def normalise(text: str) -> str:
    """Return the duplicate key: NFKC, case-folded, punctuation stripped, whitespace collapsed.

    Apostrophes are removed so "Don't" and "dont" agree, except one that makes a plural owner
    ("the sisters' kids" is not "the sister's kids"); any other punctuation becomes a space so
    "re-run" and "re run" agree. Marks that carry meaning ("+", "%", "$", "#", and a minus
    before a number: "-18°C" is not "18°C") are kept.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = APOSTROPHES.sub(_plural_owner_or_nothing, folded)
    folded = _SIGNED.sub(MINUS, folded)
    folded = _NON_WORD.sub(_punctuation_to_space, folded)
    return _WHITESPACE.sub(" ", folded).strip()


def _plural_owner_or_nothing(match: re.Match[str]) -> str:
    """An apostrophe after a plural's "s" that ends the word ("sisters'") kept as "'"."""
    text, at = match.string, match.start()
    plural_owner = (
        at >= 2
        and text[at - 1] == "s"
        and text[at - 2].isalnum()
        and not text[at + 1 : at + 2].isalnum()
    )
    return PLURAL_OWNER if plural_owner else ""


def _punctuation_to_space(match: re.Match[str]) -> str:
    char = match.group(0)
    return " " if _is_punctuation(char) else char


# The mark a plural owner keeps in a key; words read from a key drop it.
PLURAL_OWNER: Final = "'"
# A number's sign, kept in a key as the minus sign (a symbol, not punctuation): "-18" / "−18".
MINUS: Final = "−"
# The marks that may sign a number, and where one stands: not inside a word or a range ("5-10").
MINUS_SIGNS: Final = "-−"
SIGN_BEFORE: Final = rf"(?<![\w.])[{MINUS_SIGNS}]"
_SIGNED: Final = re.compile(rf"{SIGN_BEFORE}(?=\d)")
# Punctuation that carries meaning: "5%" is not "5", "C#" is not "C", "sisters'" not "sister's".
_MEANINGFUL_MARKS: Final = frozenset("%#") | {PLURAL_OWNER}


@lru_cache(maxsize=4096)
def _is_punctuation(char: str) -> bool:
    return unicodedata.category(char).startswith("P") and char not in _MEANINGFUL_MARKS


def older_keys(key: str) -> tuple[str, ...]:
    """The keys earlier releases stored for the text whose key is ``key``: before 2026-12-05
    they dropped "%" and "#" as punctuation, and before 2026-12-06 a plural owner's apostrophe
    and a number's minus. Stored keys are looked up by all of them."""
    unmarked = key.replace(PLURAL_OWNER, "")
    dropped = _WHITESPACE.sub(" ", unmarked.replace("%", " ").replace("#", " ")).strip()
    unsigned = (_SIGNED.sub(" ", older) for older in (key, unmarked, dropped))
    older = (unmarked, dropped, *(_WHITESPACE.sub(" ", k).strip() for k in unsigned))
    return tuple(dict.fromkeys(k for k in older if k != key))


def words(text: str) -> list[str]:
    """Return the normalised words of ``text`` in order (stop and negation words included)."""
    return _split_key(normalise(text))


def _split_key(key: str) -> list[str]:
    return key.replace(PLURAL_OWNER, "").split()


def content_tokens(text: str) -> frozenset[str]:
    """Return the topic words of ``text``: stop words and negation markers removed, plurals folded.

    Negations are dropped so that "Never retry uploads" and "Retry uploads" share every token:
    polarity is judged separately by :func:`is_negative`.
    """
    return _content_tokens_of(words(text))


def _content_tokens_of(tokens: list[str]) -> frozenset[str]:
    kept: set[str] = set()
    previous = ""
    for token in tokens:
        skip = (
            token in STOP_WORDS
            or token in NEGATION_WORDS
            or (token == NO_LONGER and previous == "no")
            or (len(token) == 1 and token.isalpha())
            or not (token.isalnum() or _HAS_ALNUM.search(token))
        )
        previous = token
        if not skip:
            kept.add(fold_plural(token))
    return frozenset(kept)


def word_at(tokens: list[str], position: int) -> str:
    """The token at ``position``, or "" past either end."""
    return tokens[position] if 0 <= position < len(tokens) else ""


@lru_cache(maxsize=65536)
def fold_plural(token: str) -> str:
    # Only the regular English plural: stronger stemming merges words that differ in meaning.
    if len(token) <= 3 or not token.endswith("s") or token.endswith(("ss", "us", "is")):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "xes", "ches", "shes", "zes")):
        return token[:-2]
    return token[:-1]


def is_negative(text: str) -> bool:
    """Return True when ``text`` carries a negation marker (never, don't, stop, avoid, …)."""
    return has_negation(words(text))


def analyse(text: str) -> tuple[str, frozenset[str], bool]:
    """Return ``(normalise(text), content_tokens(text), is_negative(text))`` in one pass."""
    key = normalise(text)
    tokens = _split_key(key)
    return key, _content_tokens_of(tokens), has_negation(tokens)


def jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    """Return |a ∩ b| / |a ∪ b|; two empty sets share no evidence, so they score 0.0."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)
