"""Structural comparison: canonical statements, token alignment and value slots."""

from __future__ import annotations

import difflib
import re
import unicodedata
from functools import lru_cache
from typing import Final

import msgspec

from credence.memory.semantics.hours import ranges_in_one_half
from credence.memory.semantics.quantities import read_period, read_value
from credence.memory.semantics.statement_words import (
    ABBREVIATIONS,
    CHOICE_WORDS,
    DAY_PARTS,
    FILLERS,
    FORMATS,
    GROUP_NOUNS,
    HAS_DIGIT,
    IDENTIFIER_SHAPE,
    IRREGULAR_PLURALS,
    IRREGULAR_VERBS,
    KIN,
    LANGUAGES,
    LONGEST_PHRASE,
    MAX_SPAN,
    MAX_SPANS,
    MONTHS,
    MOVE_WORDS,
    NUMBER_WORDS,
    PHRASES,
    PLACES,
    RAW_TOKEN,
    REGION_SHAPE,
    SUBORDINATORS,
    UNITS,
    WEEKDAYS,
    same_value_name,
)
from credence.memory.semantics.thesaurus import COMMON_VERBS
from credence.memory.semantics.tokens import (
    APOSTROPHES,
    NEGATION_WORDS,
    NO_LONGER,
    STOP_WORDS,
    fold_plural,
    negating_verb,
    word_at,
)


class Word(msgspec.Struct, frozen=True, array_like=True):
    """One canonical token: what is compared, what the reader wrote, and its value kind."""

    canon: str
    surface: str
    kind: str  # "word", "quantity:<dimension>", "number", "time", or "name"


class Statement(msgspec.Struct, frozen=True):
    """A lesson in canonical form: ordered words, their bag, content set and polarity.

    ``canons`` are the canonical strings in order; ``bag`` the same sorted (equal bags are the
    same lesson in other words); ``content`` the canonical tokens that carry topic;
    ``values`` those that can hold a slot value (see :func:`slot_kind`).
    """

    words: tuple[Word, ...]
    negative: bool
    canons: tuple[str, ...]
    bag: tuple[str, ...]
    content: frozenset[str]
    vocabulary: frozenset[str]  # every canonical token
    values: frozenset[str]  # canonical tokens that can hold a slot value on their own


class Change(msgspec.Struct, frozen=True):
    """One aligned span that differs between two statements, with the slot kind of both."""

    old: str
    new: str
    kind: str


_VOWEL_RUNS = re.compile(r"[aeiouy]+")


def _stem(word: str) -> str:
    # Light and symmetric: "compressed", "compressing" and "compresses" meet at one stem.
    if "-" in word and all(part.isalpha() for part in word.split("-")):
        head, _, last = word.rpartition("-")
        return f"{head}-{_stem(last)}"  # "force-pushing" meets "force-push"
    if word in IRREGULAR_VERBS:
        return _stem(IRREGULAR_VERBS[word])
    if word in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[word]
    if word.endswith("s") and word[:-1] in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[word[:-1]]  # "children's", its apostrophe gone
    if not word.isalpha() or len(word) <= 3:
        return word
    word = fold_plural(word)
    if word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) >= 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    elif word.endswith("ell") and len(_VOWEL_RUNS.findall(word)) > 1:
        word = word[:-1]  # "cancelled", "travelling" (British): "cancel", "travel"; not "spell"
    if word.endswith("ie") and len(word) > 4:
        word = word[:-2] + "y"  # "movie" meets "movies", whose "ies" the plural rule made "y"
    elif len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _acronym(surface: str) -> bool:
    return len(surface) > 1 and surface.isupper() and surface.isalpha()


def stem(word: str) -> str:
    """The light stem canonical statements compare words by ("compressed" -> "compress")."""
    return _stem(word)


# A temperature's scale however it is written after its number ("21 °C", "21°c", "21 degrees
# Celsius", "68 degrees F", "sixty-eight degrees Fahrenheit"), put as the scale's name, which
# UNITS reads.
_NUMBER_WORD = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
TEMPERATURE_SCALE: Final = re.compile(
    rf"(\d|\b(?:{_NUMBER_WORD})(?:-(?:{_NUMBER_WORD}))?)\s*(?:°\s*|degrees?\s+)"
    r"(?:(c|celsius|centigrade)|(f|fahrenheit))\b",
    re.IGNORECASE,
)


def _scale_named(match: re.Match[str]) -> str:
    return f"{match.group(1)} {'Celsius' if match.group(2) else 'Fahrenheit'}"


_OTHER: Final = frozenset({"other", "second"})
_LENGTH_UNITS: Final = frozenset({"hour", "day", "week", "month", "year"})


def _every_other_as_two(lowered: list[str]) -> list[str]:
    """``lowered`` with "every other day" (or "every second week", "on alternate days") read
    as "every two days", the period it names, and "every second Friday" or "on alternate
    Fridays" as "every other Friday"."""
    out = list(lowered)
    for position in range(1, len(out) - 1):
        if fold_plural(out[position + 1]) in WEEKDAYS:
            # "every second Friday" and "on alternate Fridays" are "every other Friday".
            if out[position] == "second" and out[position - 1] == "every":
                out[position] = "other"
            elif out[position] == "alternate" and out[position - 1] == "on":
                out[position - 1 : position + 1] = ["every", "other"]
            continue
        if fold_plural(out[position + 1]) not in _LENGTH_UNITS:
            continue
        if out[position] in _OTHER and out[position - 1] == "every":
            out[position] = "two"
        elif out[position] == "alternate" and out[position - 1] == "on":
            out[position - 1 : position + 1] = ["every", "two"]
    return out


# Days of the week shortened; "Wed", "Sat" and "Sun" only capitalised inside a sentence, since
# they are also words.
_WEEKDAY_SHORT: Final = {
    **dict.fromkeys(("mon",), "monday"),
    **dict.fromkeys(("tue", "tues"), "tuesday"),
    **dict.fromkeys(("thu", "thur", "thurs"), "thursday"),
    **dict.fromkeys(("fri",), "friday"),
}
_WEEKDAY_WORDS: Final = {"wed": "wednesday", "sat": "saturday", "sun": "sunday"}


def _weekday(low: str, surface: str, position: int) -> str | None:
    """The day of the week ``low`` shortens, or None."""
    if low in _WEEKDAY_SHORT:
        return _WEEKDAY_SHORT[low]
    return _WEEKDAY_WORDS.get(low) if position and surface[:1].isupper() else None


_WEEKDAY: Final = "weekday"
_THROUGH: Final = frozenset({"through", "thru", "to", "until", "till", "-"})


def _working_week(lowered: list[str], position: int) -> bool:
    """Whether "Monday through Friday" (or "Mon to Fri") stands at ``position``: weekdays."""
    days = lowered[position : position + 3]
    return (
        len(days) == 3
        and _WEEKDAY_SHORT.get(days[0], days[0]) == "monday"
        and days[1] in _THROUGH
        and _WEEKDAY_SHORT.get(days[2], days[2]) == "friday"
    )


# Titles shortened before a name: "Dr. Amara Singh" (but "Elm Dr." is a drive).
_TITLES: Final = {"dr": "doctor", "prof": "professor"}


# Words of an address shortened after a street's name ("42 Maple St.", "Elm Dr."), which
# before a name are "Saint" and "Doctor".
_STREET_WORDS: Final = {"st": "street", "dr": "drive"}


def _title(low: str, raw: list[str], position: int) -> str | None:
    """The title ``low`` shortens when a capitalised name follows it, or the street word it
    shortens after a capitalised name that does not open the sentence; else None."""
    following = raw[position + 1] if position + 1 < len(raw) else ""
    if following[:1].isupper() and low in _TITLES:
        return _TITLES[low]
    named_before = position > 1 and raw[position - 1][:1].isupper()
    return _STREET_WORDS.get(low) if named_before else None


_THERE_IS: Final = frozenset({"is", "are", "was", "were"})


def _existential(lowered: list[str]) -> bool:
    """Whether the statement opens with an existential "there is" ("there's", "there are")."""
    return lowered[0] == "theres" or (lowered[0] == "there" and word_at(lowered, 1) in _THERE_IS)


# An acronym's possessive: "the API's limit" is the API's, not the APIs' ("APIs" is a plural
# an acronym is not folded from).
_ACRONYM_POSSESSIVE: Final = re.compile(r"\b([A-Z][A-Z0-9]+)['’]s\b")
# A year cut to two digits ("in '21"); read as POSIX reads "%y": 69-99 are the 1900s.
_SHORT_YEAR: Final = re.compile(r"(?<![\w'’])['’](\d{2})(?![\w'’])")
_CENTURY_PIVOT: Final = 69
# "water/day", "2 L/day": a slash before a period says "per".
_SLASH_PERIOD: Final = re.compile(
    r"(?<=\w)/(?=(?:day|week|month|year|hour|hr|wk|mo|yr)\b(?![./\-]\w))", re.I
)


# A North American phone number in any of its spellings: "(555) 214-7789", "555.214.7789",
# "+1 555 214 7789"; read as its ten digits.
_PHONE: Final = re.compile(
    r"(?<![\w.+-])(?:\+?1[\s.-]?)?\(?(\d{3})\)?[\s.-]?(\d{3})[\s.-](\d{4})(?![\w-])"
)


# "200 W. Fifth St.": a compass letter between a house number and a street name.
_COMPASS: Final = re.compile(r"(?<=\d\s)([NSEW])\.?(?=\s+[A-Z0-9])")
_COMPASS_WORDS: Final = {"N": "North", "S": "South", "E": "East", "W": "West"}


def _full_year(short: re.Match[str]) -> str:
    digits = short.group(1)
    return ("19" if int(digits) >= _CENTURY_PIVOT else "20") + digits


def _raw_tokens(text: str) -> tuple[str, list[tuple[int, int]]]:
    folded = unicodedata.normalize("NFKC", text)
    folded = _SLASH_PERIOD.sub(" per ", _SHORT_YEAR.sub(_full_year, folded))
    folded = _PHONE.sub(r"\1\2\3", folded)
    folded = _COMPASS.sub(lambda letter: _COMPASS_WORDS[letter[1]], folded)
    folded = APOSTROPHES.sub("", _ACRONYM_POSSESSIVE.sub(r"\1", folded))
    folded = TEMPERATURE_SCALE.sub(_scale_named, folded)
    return folded, [match.span() for match in RAW_TOKEN.finditer(folded)]


@lru_cache(maxsize=16384)
def statement(text: str) -> Statement:
    """Return ``text`` in canonical form for paraphrase and value-change comparison.

    Numbers in any spelling ("5GB", "5 GB", "five gigabytes") become one quantity token in base
    units; comparatives ("over", "more than", "larger than") one symbol; "every day", "daily"
    and "per day" one period; frequency adverbs ("always", "reliably") and fillers vanish;
    words are lightly stemmed; "Before X, do Y" is reordered to "do Y before X". Negation
    markers leave the sequence and set the polarity by their parity: "Never refund without a
    receipt" forbids what "Refund without a receipt" allows.
    """
    folded, spans = _raw_tokens(text)
    raw = [folded[start:end] for start, end in spans]
    lowered = _every_other_as_two([token.casefold() for token in raw])

    def written(first: int, used: int) -> str:
        return folded[spans[first][0] : spans[first + used - 1][1]]

    words: list[Word] = []
    negative = False
    position = 0
    count = len(raw)
    while position < count:
        low = lowered[position]
        surface = raw[position]
        # Phrases first: "no more than" is a bound, not a negation.
        matched = _match_phrase(lowered, position)
        if matched is not None:
            symbol, used = matched
            if symbol:
                words.append(Word(symbol, written(position, used), "word"))
            position += used
            continue
        if _working_week(lowered, position):
            words.append(Word(_WEEKDAY, written(position, 3), "time"))
            position += 3
            continue
        if low == NO_LONGER and position and lowered[position - 1] == "no":
            position += 1  # "no longer" is one negation, counted at its "no"
            continue
        if low in NEGATION_WORDS or negating_verb(lowered, position):
            negative = not negative
            position += 1 if low in NEGATION_WORDS else 2
            continue
        parsed = read_value(lowered, position)
        if parsed is not None:
            canon, kind, used = parsed
            words.append(Word(canon, written(position, used), kind))
            position += used
            continue
        period = read_period(lowered, position)
        if period is not None:
            canon, used = period
            words.append(Word(canon, written(position, used), "time"))
            position += used
            continue
        if position == 0 and _existential(lowered):
            position += 1  # "There is a park nearby" says "A park is nearby"
            continue
        named = same_value_name(low, surface)
        if named is None and low in FILLERS:
            position += 1
            continue
        if low in (",", ";"):
            words.append(Word(low, low, "break"))
            position += 1
            continue
        expanded = (
            named
            or ABBREVIATIONS.get(low)
            or _title(low, raw, position)
            or _weekday(low, surface, position)
            or low
        )
        # An acronym is no plural: "HTTPS" is not "HTTP", "AWS" not "AW".
        canon = low if _acronym(surface) and expanded == low else _stem(expanded)
        low = expanded
        words.append(Word(canon, surface, _shape_kind(surface, low, position)))
        position += 1
    ordered = _reorder_clauses(_fold_recurrences(ranges_in_one_half(words)))
    canons = tuple(word.canon for word in ordered)
    return Statement(
        words=ordered,
        negative=negative,
        canons=canons,
        bag=tuple(sorted(canons)),
        content=frozenset(c for c in canons if c and c not in STOP_WORDS and c[0] not in "<>"),
        vocabulary=frozenset(canons),
        values=frozenset(
            word.canon
            for position, word in enumerate(ordered)
            if slot_kind(ordered, position, position + 1) is not None
        ),
    )


# A recurrence's period in seconds, as the time units count them (a month is a twelfth of a
# year); "night" has no length and stays a word of its own.
_PERIOD_SECONDS: Final = {
    noun: seconds for noun, (dimension, seconds) in UNITS.items() if dimension == "time"
}
# "quarterly": three months. No unit, or "a quarter of an hour" would be one.
_PERIOD_SECONDS["quarter"] = 3 * _PERIOD_SECONDS["month"]
_EVERY: Final = frozenset(_stem(word) for word in ("every", "each"))
_ONCE: Final = _stem("once")
_TIMES = re.compile(r"#(\d+(?:\.\d+)?)x")
_DURATION = re.compile(r"#(\d+(?:\.\d+)?)time")


def _period(seconds: float, surface: str) -> Word:
    value = round(float(seconds), 3)
    return Word(f"/{int(value) if value.is_integer() else value}s", surface, "time")


def _fold_recurrences(words: list[Word]) -> list[Word]:
    """One period token per recurrence, in seconds: "weekly", "once a week" and "every 7 days"
    are one (/604800s); "four times a day" is "every 6 hours" (/21600s); "once every two
    weeks" is "every 14 days"."""
    out: list[Word] = []
    for word in words:
        previous = out[-1] if out else None
        period = None
        if word.kind == "time" and word.canon[1:] in _PERIOD_SECONDS:
            period = _period(_PERIOD_SECONDS[word.canon[1:]], word.surface)
        elif word.kind == "quantity:time" and previous is not None and previous.canon in _EVERY:
            duration = _DURATION.fullmatch(word.canon)
            if duration is not None:
                out.pop()
                period = _period(float(duration.group(1)), f"{previous.surface} {word.surface}")
        if period is not None and out:
            times = _TIMES.fullmatch(out[-1].canon) if out[-1].kind == "number" else None
            count = float(times.group(1)) if times is not None else 0.0
            if count > 0:
                said = f"{out.pop().surface} {period.surface}"
                period = _period(float(period.canon[1:-1]) / count, said)
            elif out[-1].canon == _ONCE:
                out.pop()
        out.append(period or word)
    return out


def _match_phrase(lowered: list[str], position: int) -> tuple[str, int] | None:
    for length in range(min(LONGEST_PHRASE, len(lowered) - position), 0, -1):
        phrase = tuple(lowered[position : position + length])
        symbol = PHRASES.get(phrase)
        if symbol is not None and not (phrase == _UP_TO and _particle_up(lowered, position)):
            return symbol, length
    return None


_UP_TO: Final = ("up", "to")
# Verbs whose particle "up" is no bound before "to": "backed up to the drive", "signed up to".
_UP_VERBS: Final = frozenset({"back", "sign", "set", "hook", "link", "open", "catch", "live"})


def _particle_up(lowered: list[str], position: int) -> bool:
    """Whether the "up" at ``position`` belongs to the verb before it ("backed up to the
    external drive"), not a bound ("up to 5 GB")."""
    return position > 0 and stem(lowered[position - 1]) in _UP_VERBS


# Language names that are also everyday words: written in lower case they are the word ("should
# go to Priya", "a swift reply"), not the language.
_EVERYDAY_LANGUAGE_NAMES: Final = frozenset({"go", "swift", "rust"})


def _shape_kind(surface: str, low: str, position: int) -> str:
    """``name`` for tokens shaped like a proper noun, identifier or handle; else ``word``."""
    if surface[:1] in "@#" and len(surface) > 1:
        return "name"
    if fold_plural(low) in WEEKDAYS or low in MONTHS or fold_plural(low) in DAY_PARTS:
        return "time"
    if low in LANGUAGES and not (low in _EVERYDAY_LANGUAGE_NAMES and surface.islower()):
        return "language"
    if low in FORMATS or (low.startswith(".") and low[1:] in FORMATS):
        return "format"
    # "Test backups monthly" opens with an instruction's verb, not the test environment.
    if (low in PLACES and not (position == 0 and low in COMMON_VERBS)) or REGION_SHAPE.match(low):
        return "place"
    if (IDENTIFIER_SHAPE.search(low) and HAS_DIGIT.search(low)) or "." in low or "+" in low:
        return "name"
    if position and surface[:1].isupper():
        return "name"
    if len(surface) >= 2 and any(ch.isupper() for ch in surface[1:]):
        return "name"  # PostgreSQL, GitHub, AWS
    return "word"


def _reorder_clauses(words: list[Word]) -> tuple[Word, ...]:
    """Move a leading subordinate clause behind its main clause and drop clause breaks."""
    if words and words[0].canon in SUBORDINATORS:
        for position, word in enumerate(words):
            if word.kind == "break":
                words = words[position + 1 :] + words[:position]
                break
    return tuple(word for word in words if word.kind != "break")


def slot_kind(words: tuple[Word, ...], start: int, end: int) -> str | None:
    """The value kind of ``words[start:end]``, or None when the span is not one value.

    A span is a value when its tokens are a number or quantity (kind names the dimension),
    a time, a language, a file format, a place, or a name by shape; an ordinary word is a
    name when the word before it makes it the chosen instrument ("use X", "with X") or the
    word after it names a group ("the X team").
    """
    span = [word for word in words[start:end] if word.canon not in (">", "<", ">=", "<=")]
    if not span or end - start > MAX_SPAN:
        return None
    kinds = {word.kind for word in span}
    quantities = {kind for kind in kinds if kind.startswith("quantity:") or kind == "number"}
    if quantities:
        if len(quantities) > 1 or not kinds <= quantities | {"word"}:
            return None
        return quantities.pop()
    if len(kinds) == 1 and (kind := next(iter(kinds))) != "word":
        return kind
    if len(span) == 1 and span[0].surface.isalpha() and span[0].canon not in STOP_WORDS - {"use"}:
        before = words[start - 1].canon if start else ""
        before_that = words[start - 2].canon if start > 1 else ""
        after = words[end].canon if end < len(words) else ""
        if after in GROUP_NOUNS or before in CHOICE_WORDS:
            return "name"
        if before == "to" and before_that in MOVE_WORDS:
            return "name"
    return None


def aligned_spans(a: Statement, b: Statement) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The spans where ``a`` and ``b`` differ, as aligned ``((a_start, a_end), (b_start, b_end))``.

    Alignment is difflib's longest-matching-block alignment over canonical tokens; an insertion
    or deletion is a span that is empty on one side.
    """
    matcher = difflib.SequenceMatcher(None, a.canons, b.canons, autojunk=False)
    return [
        ((a_start, a_end), (b_start, b_end))
        for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes()
        if tag != "equal"
    ]


def value_changes(a: Statement, b: Statement) -> list[Change] | None:
    """The value slots that differ between two statements saying the same thing, or None.

    Both statements must have one polarity and agree everywhere except at most two short
    aligned spans, each holding a value of one kind on both sides, with shared content around
    them. ``a`` is the old statement, ``b`` the new one.
    """
    if a.negative != b.negative or not _may_hold_values(a, b):
        return None
    spans = aligned_spans(a, b)
    if not spans or len(spans) > MAX_SPANS:
        return None
    changed = 0
    changes = []
    for (a_start, a_end), (b_start, b_end) in spans:
        if not (a_end - a_start and b_end - b_start):
            return None
        kind = slot_kind(a.words, a_start, a_end)
        if kind is None or not _same_kind(kind, slot_kind(b.words, b_start, b_end)):
            return None
        changed += max(a_end - a_start, b_end - b_start)
        changes.append(
            Change(
                old=_surface(a.words[a_start:a_end]),
                new=_surface(b.words[b_start:b_end]),
                kind=kind,
            )
        )
    shared = len(a.words) - sum(a_end - a_start for (a_start, a_end), _ in spans)
    shared_content = a.content & b.content
    if not shared_content or shared < changed:
        return None
    return changes


def _may_hold_values(a: Statement, b: Statement) -> bool:
    # Cheap necessary condition before aligning: each side owns a token that can be a value.
    return _owns_value(a, b) and _owns_value(b, a)


def _owns_value(a: Statement, b: Statement) -> bool:
    return any(
        value not in b.vocabulary or a.canons.count(value) > b.canons.count(value)
        for value in a.values
    )


def holds_value_change(a: Statement, b: Statement) -> bool:
    """True when any aligned differing span holds values of one kind on both sides.

    Such a pair is never a near-duplicate, whatever its embedding cosine says.
    """
    if not _may_hold_values(a, b):
        return False
    for (a_start, a_end), (b_start, b_end) in aligned_spans(a, b):
        if a_end - a_start and b_end - b_start:
            kind = slot_kind(a.words, a_start, a_end)
            if kind is not None and _same_kind(kind, slot_kind(b.words, b_start, b_end)):
                return True
    return False


def is_negation(a: Statement, b: Statement) -> bool:
    """True when two statements say the same thing with opposite polarity."""
    return a.negative != b.negative and bool(a.words) and a.bag == b.bag


def is_paraphrase(a: Statement, b: Statement) -> bool:
    """True when both statements have one polarity and the same bag of canonical tokens."""
    return a.negative == b.negative and bool(a.words) and a.bag == b.bag


def shares_core(a: Statement, b: Statement) -> bool:
    """True when two statements are about the same action on the same object.

    Their content overlap must cover at least half of the smaller statement: sharing one word
    ("refund … receipt" / "receipts are stored …") is a shared topic, not a shared action.
    """
    small = min(len(a.content), len(b.content))
    return small > 0 and len(a.content & b.content) * 2 >= small


def _same_kind(kind: str, other: str | None) -> bool:
    return other is not None and KIN.get(kind, kind) == KIN.get(other, other)


def _surface(words: tuple[Word, ...]) -> str:
    return " ".join(word.surface for word in words)
