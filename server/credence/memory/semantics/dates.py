"""Calendar dates however they are written: "2025-03-15", "March 15, 2025", "the 15th of March"."""

from __future__ import annotations

import re
from typing import Final

from credence.memory.semantics.statement_words import MONTHS_IN_ORDER, ORDINAL
from credence.memory.semantics.tokens import word_at

_ISO_DATE: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_SLASHED_DATE: Final = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")
_MONTHS_IN_A_YEAR: Final = 12
# A month by its name, or by its abbreviation beside a day ("Aug. 31, 2026", "31 Aug 2026");
# "may" is already whole, and "mar" and "jun" are no words to mistake.
_MONTH_NUMBERS: Final = {
    spelling: number
    for number, name in enumerate(MONTHS_IN_ORDER, start=1)
    for spelling in {name, name[:3]}
} | {"sept": 9}
_MAY: Final = 5
_YEARS: Final = range(1900, 2200)
# Ordinals said in words, as the days of a month are named ("the first of each month").
_ORDINALS = """first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth
thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"""
_FIRST_TWENTY: Final = dict(zip(_ORDINALS.split(), range(1, 21), strict=True))
# "twenty-second", "thirty-first", "forty-fifth": a tens word joined to an ordinal below ten.
ORDINAL_WORDS: Final = (
    _FIRST_TWENTY
    | {"thirtieth": 30, "fortieth": 40, "fiftieth": 50}
    | {
        f"{tens}-{unit}": tens_value + unit_value
        for tens, tens_value in (("twenty", 20), ("thirty", 30), ("forty", 40))
        for unit, unit_value in list(_FIRST_TWENTY.items())[:9]
    }
)


def read_date(lowered: list[str], position: int) -> tuple[str, int] | None:
    """A calendar date at ``position``: (canonical ``@YYYY-MM-DD``, or ``@--MM-DD`` without a
    year, and tokens used). A slashed date is read only when one order of day and month is a
    date ("08/31/2025", "31/08/2025"): the order is the writer's locale, which one sentence
    does not tell, so "03/04/2025" is left alone."""
    token = lowered[position]
    if not (token[:1].isdigit() or token in _MONTH_NUMBERS or token in ORDINAL_WORDS):
        return None  # most words: read_value asks about every one
    iso = _ISO_DATE.match(token)
    if iso is not None:
        year, month, day = (int(part) for part in iso.groups())
        return _dated(year, month, day, 1)
    slashed = _SLASHED_DATE.match(token)
    if slashed is not None:
        return _slashed(*(int(part) for part in slashed.groups()))
    if token in _MONTH_NUMBERS:
        return _month_first(lowered, position)
    return _day_first(lowered, position)


def _month_first(lowered: list[str], position: int) -> tuple[str, int] | None:
    """ "March 15", "March 15th, 2025"."""
    month = _MONTH_NUMBERS[lowered[position]]
    day = _day(word_at(lowered, position + 1))
    if day is None:
        return None
    year, used = _year_after(lowered, position + 2)
    if month == _MAY and not (used or ORDINAL.match(lowered[position + 1])):
        return None  # "you may 2 …": the verb, unless a year or an ordinal says otherwise
    return _dated(year, month, day, 2 + used)


def _day_first(lowered: list[str], position: int) -> tuple[str, int] | None:
    """ "15 March 2025", "the 15th of March"; an ordinal in words only before "of"."""
    day = _day(lowered[position])
    if day is None:
        return None
    of = word_at(lowered, position + 1) == "of"
    month = _MONTH_NUMBERS.get(word_at(lowered, position + 1 + of))
    spelt_out = lowered[position] in ORDINAL_WORDS
    ordinal = spelt_out or bool(ORDINAL.match(lowered[position]))
    if month is None or (of and not ordinal) or (spelt_out and not of):
        return None
    year, used = _year_after(lowered, position + 2 + of)
    return _dated(year, month, day, 2 + of + used)


def _slashed(first: int, second: int, year: int) -> tuple[str, int] | None:
    """A slashed date whose day is the part a month cannot be: month first or day first."""
    if first > _MONTHS_IN_A_YEAR >= second:
        return _dated(year, second, first, 1)
    if second > _MONTHS_IN_A_YEAR >= first:
        return _dated(year, first, second, 1)
    return None


def _dated(year: int | None, month: int, day: int, used: int) -> tuple[str, int] | None:
    return (_canon(year, month, day), used) if _valid(month, day) else None


def _canon(year: int | None, month: int, day: int) -> str:
    return f"@{year:04d}-{month:02d}-{day:02d}" if year else f"@--{month:02d}-{day:02d}"


def _valid(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31


def _day(token: str) -> int | None:
    if token in ORDINAL_WORDS:
        return ORDINAL_WORDS[token]
    ordinal = ORDINAL.match(token)
    digits = ordinal.group(1) if ordinal else token
    return int(digits) if digits.isdigit() and len(digits) <= 2 else None


def _year_after(lowered: list[str], position: int) -> tuple[int | None, int]:
    """The year after a day and month, with its comma if any: (year, tokens used)."""
    comma = word_at(lowered, position) == ","
    token = word_at(lowered, position + comma)
    if token.isdigit() and int(token) in _YEARS:
        return int(token), comma + 1
    return None, 0
