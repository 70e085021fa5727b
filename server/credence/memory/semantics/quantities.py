"""Quantities in canonical form: numbers in any spelling, units, clock times, periods, rates."""

from __future__ import annotations

import re
from typing import Final

from credence.memory.semantics.dates import ORDINAL_WORDS, read_date
from credence.memory.semantics.statement_words import (
    BARE_CLOCK,
    CLOCK,
    FRACTIONS,
    MAGNITUDES,
    MULTIPLES,
    NUMBER_SCALES,
    NUMBER_WORDS,
    ONE_LETTER_UNITS,
    ORDINAL,
    PERIOD_LEADS,
    PERIOD_NOUNS,
    PERIODS,
    PREFIX_UNITS,
    QUANTITY,
    RANGE,
    RATIO,
    THOUSANDS,
    TIMES,
    UNIT_OFFSETS,
    UNITS,
)
from credence.memory.semantics.tokens import MINUS_SIGNS, fold_plural, word_at


def _read_ratio(lowered: list[str], position: int) -> tuple[str, str, int] | None:
    """A ratio at ``position``, in order ("1:2" is not "2:1"): "3:1", or "3 to 1" before
    "ratio"."""
    if RATIO.match(lowered[position]):
        return f"#{lowered[position]}", "number", 1
    said = lowered[position : position + 4]
    if (
        len(said) == 4
        and said[0].isdigit()
        and said[1] == "to"
        and said[2].isdigit()
        and said[3] in ("ratio", "ratios")
    ):
        return f"#{said[0]}:{said[2]}", "number", 3
    return None


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


_TENS: Final = frozenset(range(20, 100, 10))
_YEARS: Final = frozenset({"year", "years", "yr", "yrs"})
_AGED: Final = re.compile(r"^(\w+)-(year|month|week|day)s?-old$")


def _number_words(lowered: list[str], start: int) -> tuple[float, int] | None:
    """Parse "five", "twenty five", "two hundred" at ``start``: (value, tokens used)."""
    total, current, used = 0.0, 0.0, 0
    for word in lowered[start:]:
        tens, _, units = word.partition("-")
        if word in NUMBER_WORDS:
            current += NUMBER_WORDS[word]
        elif NUMBER_WORDS.get(tens, 0) in _TENS and 0 < NUMBER_WORDS.get(units, 0) < 10:
            current += NUMBER_WORDS[tens] + NUMBER_WORDS[units]  # "thirty-four"
        elif word in NUMBER_SCALES and (current or used == 0):
            scale = NUMBER_SCALES[word]
            current = (current or 1.0) * scale
            if scale >= 1000:
                total, current = total + current, 0.0
        elif word == "and" and used and start + used + 1 < len(lowered):
            if lowered[start + used + 1] not in NUMBER_WORDS:
                break
        else:
            break
        used += 1
    if not used or lowered[start] == "and":
        return None
    return total + current, used


def _quantity(value: float, unit: str | None) -> tuple[str, str]:
    """Canonical token and kind for a number with an optional unit."""
    if unit is None:
        return f"#{_format_number(value)}", "number"
    dimension, factor = UNITS[unit]
    value = (value + UNIT_OFFSETS.get(unit, 0.0)) * factor
    return f"#{_format_number(round(value, 6))}{dimension}", f"quantity:{dimension}"


def clock_canon(hour: int, minute: int, half: str | None) -> str | None:
    """The canonical clock time ("@13:05") of an hour and minute, in the half of the day
    ``half`` ("a" or "p") names or on the 24-hour clock when None; None when out of range."""
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "p" else 0)
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return f"@{hour:02d}:{minute:02d}"


def _read_clock_word(low: str) -> str | None:
    """The canonical clock time one lowered token spells ("14:00", "2pm", "noon"), if any."""
    clock = CLOCK.match(low) or BARE_CLOCK.match(low)
    if clock:
        half = clock.group(3) if clock.re is CLOCK else None
        canon = clock_canon(int(clock.group(1)), int(clock.group(2) or 0), half)
        if canon:
            return canon
    if low in ("noon", "midday", "midnight"):
        return "@12:00" if low != "midnight" else "@00:00"
    return None


def _number_joined_to_unit(low: str) -> tuple[str, str] | None:
    """ "30-minute", "two-week", "10-year", "one-and-a-half-hour": a number hyphenated to its
    unit, as a quantity."""
    number, dash, unit = low.rpartition("-")
    if not dash or unit not in UNITS or unit in ONE_LETTER_UNITS:
        return None
    half = 0.5 if number.endswith("-and-a-half") else 0.0
    number = number.removesuffix("-and-a-half")
    said = _number_words([number], 0)
    if said is not None:
        return _quantity(said[0] + half, unit)
    plain = QUANTITY.match(number)
    return _quantity(float(number) + half, unit) if plain and plain.group(2) is None else None


def read_value(lowered: list[str], position: int) -> tuple[str, str, int] | None:
    """A number, quantity or clock time at ``position``: (canonical, kind, tokens used); a
    minus before a number is its sign ("-18°C" is not "18°C")."""
    low = lowered[position]
    if low[:1] not in MINUS_SIGNS or not low[1:2].isdigit():
        return _unsigned_value(lowered, position)
    unsigned = _unsigned_value([*lowered[:position], low[1:], *lowered[position + 1 :]], position)
    if unsigned is None or not unsigned[0].startswith("#"):
        return unsigned  # a clock time or a date has no sign
    return f"#-{unsigned[0][1:]}", unsigned[1], unsigned[2]


def _hyphenated_age(token: str) -> tuple[str, str, int] | None:
    """ "seven-year-old" as the age "7 years old" reads as (see _with_unit), else None."""
    aged = _AGED.match(token)
    if aged is None or not (aged.group(1).isdigit() or aged.group(1) in NUMBER_WORDS):
        return None
    said, unit = aged.group(1), aged.group(2)
    age = _format_number(float(said) if said.isdigit() else NUMBER_WORDS[said])
    return f"#{age}" + ("" if unit == "year" else f"{unit}s"), "number", 1


def _unsigned_value(lowered: list[str], position: int) -> tuple[str, str, int] | None:
    low = lowered[position]
    clock_time = _read_clock_word(low)
    if clock_time:
        return _with_day_half(lowered, position, clock_time)
    worded = (
        _hyphenated_age(low)
        or _minutes_past_or_to(lowered, position)
        or _read_ratio(lowered, position)
    )
    if worded is not None:
        return worded
    date = read_date(lowered, position)
    if date is not None:
        return date[0], "time", date[1]
    spoken = _spoken_number(lowered, position)
    if spoken is not None:
        return spoken
    prefix_unit = None
    start = position
    if low in PREFIX_UNITS and position + 1 < len(lowered):
        prefix_unit, position = low, position + 1
        low = lowered[position]
    unit = None
    ranged = RANGE.match(low)
    if ranged:
        return _range(ranged, lowered, position, start, prefix_unit)
    joined = _number_joined_to_unit(low) if prefix_unit is None else None
    if joined is not None:
        return (*joined, 1)
    match = QUANTITY.match(low.replace(",", ""))
    if match:
        value, attached = float(match.group(1)), match.group(2)
        if attached in ("am", "pm"):
            canon = clock_canon(int(value), 0, attached[0]) if value.is_integer() else None
            return (canon, "time", 1) if canon else None
        scaled = _scaled(lowered, position, value, attached)
        if scaled is None:
            return None
        value, unit, used = scaled
    else:
        said = _said_number(lowered, position)
        if said is None:
            return None
        value, used = said
    digits = match.group(1) if match is not None and used == 1 else ""
    canon, kind, used = _with_unit(lowered, start, position + used, value, unit, prefix_unit)
    if kind == "number" and _version_like(digits):
        # "Python 3.10" is not "Python 3.1": a bare decimal that ends in 0 is kept as written.
        canon = f"#{digits}"
    return canon, kind, used


def _scaled(
    lowered: list[str], position: int, value: float, attached: str | None
) -> tuple[float, str | None, int] | None:
    """A number written in digits with what is joined to it ("5GB", "10k", "1.8m") or the
    scale word after it ("2 million"): (value, unit, tokens used), or None when what is
    joined is no unit."""
    if attached == "m" and _measured_at(lowered, position + 1):
        return value, "metre", 1  # "1.8m tall"; "$2m" and "10m users" are millions
    if attached == THOUSANDS or attached in MAGNITUDES:
        return value * MAGNITUDES[attached], None, 1
    if attached is not None:
        return (value, attached, 1) if attached in UNITS else None
    if word_at(lowered, position + 1) in NUMBER_SCALES:
        return value * NUMBER_SCALES[lowered[position + 1]], None, 2  # "$2 million"
    return value, None, 1


def _version_like(digits: str) -> bool:
    return "." in digits and digits.endswith("0")


def _with_unit(
    lowered: list[str],
    start: int,
    after: int,
    value: float,
    unit: str | None,
    prefix_unit: str | None,
) -> tuple[str, str, int]:
    """The value read so far completed by what follows it: "and a half", "times", a unit word,
    "am"/"pm" or "per cent"."""
    if lowered[after : after + 3] == ["and", "a", "half"]:
        value, after = value + 0.5, after + 3  # "one and a half hours"
    if unit is None and prefix_unit is None and word_at(lowered, after) == TIMES:
        return f"#{_format_number(value)}x", "number", after + 1 - start
    said_clock = _said_clock(lowered, after, value) if unit is None and not prefix_unit else None
    if said_clock is not None:
        return said_clock[0], "time", said_clock[1] - start
    if unit is None and prefix_unit is None and after < len(lowered):
        following = lowered[after]
        if following in ("am", "pm", "a.m", "p.m") and value.is_integer():
            canon = clock_canon(int(value), 0, following[0])
            if canon:
                return canon, "time", after + 1 - start
        national = _NATIONAL_DOLLARS.get(following)
        if national is not None and word_at(lowered, after + 1) in _DOLLARS:
            unit, after = national, after + 2  # "420 US dollars" is $420; Canadian ones are CAD
        elif following in UNITS and following not in ONE_LETTER_UNITS:
            unit, after = following, after + 1
        elif following == "m" and _measured_at(lowered, after + 1):
            unit, after = "metre", after + 1  # "1.8 m tall"
        elif following == "per" and after + 1 < len(lowered) and lowered[after + 1] == "cent":
            unit, after = "percent", after + 2
    if (unit or prefix_unit) and lowered[after : after + 3] == ["and", "a", "half"]:
        value, after = value + 0.5, after + 3  # "an hour and a half"
    if unit is not None and word_at(lowered, after) == "old":
        # An age: "7 years old" is "is 7"; "7 months old" another age, not a length of time.
        age = f"#{_format_number(value)}" + ("" if unit in _YEARS else unit)
        return age, "number", after + 1 - start
    canon, kind = _quantity(value, unit or prefix_unit)
    smaller = _smaller_part(lowered, after, unit) if unit is not None else None
    if unit is not None and smaller is not None:
        dimension, factor = UNITS[unit]
        total = value * factor + smaller[0]
        return f"#{_format_number(round(total, 6))}{dimension}", kind, smaller[1] - start
    return canon, kind, after - start


# Words that say a length was measured, after which "m" is metres: "1.8 m tall".
_MEASURES: Final = frozenset({"tall", "long", "high", "wide", "deep", "away"})


def _measured_at(lowered: list[str], position: int) -> bool:
    return word_at(lowered, position) in _MEASURES


_DOLLARS: Final = frozenset({"dollar", "dollars"})
_NATIONAL_DOLLARS: Final = {"us": "usd", "american": "usd", "canadian": "cad", "australian": "aud"}
# Measures a smaller unit may go on from ("2 hours 30 minutes"); after feet, "in" is inches.
_COMPOUND_DIMENSIONS: Final = frozenset({"time", "metre", "gram"})
_INCHES_AFTER_FEET: Final = frozenset({"ft", "foot", "feet"})


def _smaller_part(lowered: list[str], after: int, unit: str) -> tuple[float, int] | None:
    """A smaller unit of the same measure that goes on from one just read ("2 hours 30
    minutes", "4 ft 6 in", "7 lb 8 oz", "3 hours and 15 minutes"): (its value in the base
    unit, the position after it), or None."""
    dimension, factor = UNITS[unit]
    if dimension not in _COMPOUND_DIMENSIONS:
        return None
    position = after + (word_at(lowered, after) == "and")
    said = _digits(lowered, position) or _number_words(lowered, position)
    if said is None:
        return None
    value, used = said
    following = word_at(lowered, position + used)
    if following == "in" and unit in _INCHES_AFTER_FEET:
        following = "inches"
    part = UNITS.get(following)
    if part is None or part[0] != dimension or part[1] >= factor:
        return None
    return value * part[1], position + used + 1


def _said_number(lowered: list[str], position: int) -> tuple[float, int] | None:
    """A number in words at ``position`` ("twenty five", "a week", "a dozen"): (value, used)."""
    spelled = _number_words(lowered, position)
    if spelled is not None:
        return spelled
    if lowered[position] not in ("a", "an"):
        return None
    if _next_is_time_unit(lowered, position):
        return 1.0, 1
    if lowered[position + 2 : position + 5] == ["and", "a", "half"]:
        return 1.5, 1  # "a pill and a half"; "an hour and a half" is read with its unit
    if word_at(lowered, position + 1) in NUMBER_SCALES:
        return float(NUMBER_SCALES[lowered[position + 1]]), 2  # "a dozen", "a thousand"
    return None


# "nine in the morning" is 09:00, "seven in the evening" 19:00, "nine o'clock" 09:00.
_DAY_HALVES: Final = {
    ("in", "the", "morning"): "a",
    ("in", "the", "afternoon"): "p",
    ("in", "the", "evening"): "p",
    ("at", "night"): "p",
}


def _with_day_half(lowered: list[str], position: int, clock_time: str) -> tuple[str, str, int]:
    """A clock time in digits with the half of the day said after it: "7:45 in the morning" is
    07:45, "6:30 in the evening" 18:30 (one written with am or pm keeps its own)."""
    bare = BARE_CLOCK.match(lowered[position])
    for words, half in _DAY_HALVES.items():
        if bare and tuple(lowered[position + 1 : position + 1 + len(words)]) == words:
            canon = clock_canon(int(bare.group(1)), int(bare.group(2) or 0), half)
            if canon:
                return canon, "time", 1 + len(words)
    return clock_time, "time", 1


def _said_clock(lowered: list[str], after: int, value: float) -> tuple[str, int] | None:
    """A whole hour said with its half of the day: (canonical clock time, position after)."""
    if not value.is_integer():
        return None
    if word_at(lowered, after) == "oclock":
        after += 1  # "eight o'clock in the evening": the hour, then its half of the day
        if not _said_half(lowered, after):
            canon = clock_canon(int(value), 0, None)
            return (canon, after) if canon else None
    half = _said_half(lowered, after)
    if half is None:
        return None
    words, suffix = half
    canon = clock_canon(int(value), 0, suffix)
    return (canon, after + len(words)) if canon else None


def _said_half(lowered: list[str], after: int) -> tuple[tuple[str, ...], str] | None:
    """The half of the day said at ``after`` ("in the evening", "at night"): its words and
    suffix."""
    for words, half in _DAY_HALVES.items():
        if tuple(lowered[after : after + len(words)]) == words:
            return words, half
    return None


# Minutes said by name before "past" or "to" an hour.
_NAMED_MINUTES: Final = {"quarter": 15, "half": 30}
_PAST: Final = frozenset({"past", "after"})
_TO: Final = frozenset({"to", "till", "before"})


def _minutes_past_or_to(lowered: list[str], position: int) -> tuple[str, str, int] | None:
    """A clock time said as minutes past or to an hour: "quarter past seven" is 07:15, "a
    quarter to seven" 06:45, "half past six in the evening" 18:30, "twenty minutes to four"
    03:40."""
    start = position
    if word_at(lowered, position) in ("a", "an"):
        position += 1
    named = word_at(lowered, position)
    if named in _NAMED_MINUTES:
        minutes, position = _NAMED_MINUTES[named], position + 1
    else:
        said = _number_words(lowered, position) or _digits(lowered, position)
        if said is None or word_at(lowered, position + said[1]) not in ("minutes", "minute"):
            return None
        minutes, position = int(said[0]), position + said[1] + 1
    direction = word_at(lowered, position)
    if (
        direction not in _PAST | _TO
        or not 0 < minutes < 60
        or (named == "half" and direction in _TO)
    ):
        return None
    hour_said = _number_words(lowered, position + 1) or _digits(lowered, position + 1)
    if hour_said is None or hour_said[1] != 1 or not 1 <= hour_said[0] <= 12:
        return None
    hour, after = int(hour_said[0]), position + 2
    if direction in _TO:
        hour, minutes = (hour - 2) % 12 + 1, 60 - minutes  # "quarter to one" is 12:45
    after += word_at(lowered, after) == "oclock"
    half = _said_half(lowered, after)
    canon = clock_canon(hour, minutes, half[1] if half else None)
    if canon is None:
        return None
    return canon, "time", after + (len(half[0]) if half else 0) - start


def _digits(lowered: list[str], position: int) -> tuple[float, int] | None:
    word = word_at(lowered, position)
    return (float(word), 1) if word.isdigit() else None


_STREETS: Final = frozenset({"street", "st", "avenue", "ave", "road", "rd", "boulevard", "blvd"})


def _spoken_number(lowered: list[str], position: int) -> tuple[str, str, int] | None:
    """Numbers said in words that are not counts: "twice" (two times), an ordinal ("14th"),
    "half an hour", "half a dozen", "a quarter of an hour", "three quarters of an hour", "half
    of" (50 %)."""
    low = lowered[position]
    if low in MULTIPLES:
        return f"#{MULTIPLES[low]}x", "number", 1
    # "the first day of each month" is "the first of each month".
    day_of = 2 if lowered[position + 1 : position + 3] == ["day", "of"] else 1
    ordinal = ORDINAL.match(low)
    if ordinal:
        return f"#{ordinal.group(1)}th", "number", day_of
    # "the first of each month", "the fifteenth of March": a day of the month, as "1st" is.
    after_the = word_at(lowered, position - 1) == "the"
    dated = after_the and word_at(lowered, position + day_of) == "of"
    # A rank before a noun: "the fourth floor", "in third grade", "a third grader" (not "a third
    # of", a fraction); "the second floor", but "first" is too often no rank ("the first thing
    # in the morning", "the first focus").
    following = word_at(lowered, position + 1)
    before_a_noun = following.isalpha() and following != "of"
    ranked = (
        word_at(lowered, position - 1) in ("the", "in", "a")
        and ORDINAL_WORDS.get(low, 0) > 2
        and (after_the or before_a_noun)
    ) or (low == "second" and word_at(lowered, position - 1) in ("the", "in") and before_a_noun)
    # "Fifth Avenue" is "5th Avenue": an ordinal names a street's number.
    ranked = ranked or following in _STREETS
    if low in ORDINAL_WORDS and (dated or ranked):
        return f"#{ORDINAL_WORDS[low]}th", "number", day_of if dated else 1
    start = position
    times = 1.0
    if low in ("a", "an") and word_at(lowered, position + 1) in FRACTIONS:
        position += 1
    elif low in NUMBER_WORDS and fold_plural(word_at(lowered, position + 1)) in FRACTIONS:
        # "three quarters of an hour", "one fifth of the profits"
        times, position = float(NUMBER_WORDS[low]), position + 1
    fraction = FRACTIONS.get(fold_plural(lowered[position]))
    if fraction is None:
        return None
    fraction *= times
    after = position + 1
    of = word_at(lowered, after) == "of"
    if word_at(lowered, after + of) in ("a", "an"):
        measure = word_at(lowered, after + of + 1)
        used = after + of + 2 - start
        if measure in UNITS and measure not in ONE_LETTER_UNITS:
            canon, kind = _quantity(fraction, measure)  # "half an hour"
            return canon, kind, used
        if measure in NUMBER_SCALES:  # "half a dozen"
            return f"#{_format_number(fraction * NUMBER_SCALES[measure])}", "number", used
    if of:  # "half of the budget", "a quarter of each paycheck": a share
        canon, kind = _quantity(fraction * 100, "percent")
        return canon, kind, after - start
    if word_at(lowered, after) in ("a", "an"):  # "half a pill": the thing counted stays a word
        return f"#{_format_number(fraction)}", "number", after + 1 - start
    return None


def _range(
    ranged: re.Match[str], lowered: list[str], position: int, start: int, prefix_unit: str | None
) -> tuple[str, str, int]:
    """A range "3-5 days" as one value token, both ends in the base unit."""
    after = position + 1
    unit = prefix_unit
    if unit is None and after < len(lowered) and lowered[after] in UNITS:
        unit, after = lowered[after], after + 1
    low_end, _ = _quantity(float(ranged.group(1)), unit)
    high_end, kind = _quantity(float(ranged.group(2)), unit)
    return f"{low_end}..{high_end[1:]}", kind, after - start


def _next_is_time_unit(lowered: list[str], position: int) -> bool:
    if position + 1 >= len(lowered):
        return False
    following = lowered[position + 1]
    # "twice a day" and "$600 a month" are rates, not one day or one month.
    return following in UNITS and UNITS[following][0] == "time" and not _rate_at(lowered, position)


def _rate_lead(previous: str) -> bool:
    """Whether a word before "a <period>" makes it a rate: a count, an amount or a unit."""
    return (
        previous in ("once", "twice", "thrice", "times")
        or previous[:1].isdigit()
        or previous in NUMBER_WORDS
        or previous in UNITS
    )


# How far back a count still makes "a <period>" a rate: "two cups of coffee a day".
_COUNT_REACH: Final = 4
# Words after which "a day" is how long, not how often: "for a day", "takes a day".
_DURATION_LEADS: Final = frozenset(
    {"for", "in", "within", "after", "over", "under", "than", "half", "take", "takes", "last"}
)


def _rate_at(lowered: list[str], position: int) -> bool:
    """Whether "a" at ``position``, before a period, makes a rate: after a count, an amount or
    a unit ("twice a day", "$600 a month"), or after a counted thing ("two pills a day")."""
    previous = lowered[position - 1] if position else ""
    before = lowered[max(0, position - _COUNT_REACH) : position]
    return _rate_lead(previous) or _counted_before(before)


def says_a_number(word: str) -> bool:
    """Whether ``word`` is a number, in digits or in words ("12", "12th", "twelve")."""
    return word[:1].isdigit() or word in NUMBER_WORDS


def _counted_before(before: list[str]) -> bool:
    """Whether a count opens the words just before "a <period>" ("two pills a day", "three
    cups of coffee a day") with no word of duration right before it ("two tasks in a day")."""
    if not before or before[-1] in _DURATION_LEADS or before[-1] in (",", ";"):
        return False
    return any(says_a_number(word) for word in before)


def read_period(lowered: list[str], position: int) -> tuple[str, int] | None:
    """A recurrence: "daily", "every day", "once a day", "per day" -> one period token."""
    low = lowered[position]
    if low in PERIODS:
        return f"/{PERIODS[low]}", 1
    used = 0
    while position + used < len(lowered) and lowered[position + used] in PERIOD_LEADS:
        used += 1
    if used and position + used < len(lowered):
        noun = PERIOD_NOUNS.get(fold_plural(lowered[position + used]))
        rate = low in ("a", "an") and _rate_at(lowered, position)
        if noun is not None and (used > 1 or low in ("every", "each", "per") or rate):
            return f"/{noun}", used + 1
    if low == "the" and _day_of(lowered, position):
        noun = PERIOD_NOUNS.get(word_at(lowered, position + 1))
        if noun is not None:
            return f"/{noun}", 2  # "the first of the month" is of every month
    return None


def _day_of(lowered: list[str], position: int) -> bool:
    """Whether a day of the month and "of" stand before ``position``: "the 1st of" / "the
    first of"."""
    if word_at(lowered, position - 1) != "of":
        return False
    day = word_at(lowered, position - 2)
    return bool(ORDINAL.match(day)) or day in ORDINAL_WORDS
