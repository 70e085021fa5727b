"""A range of clock hours whose half of the day is said once: "from 1 to 3 pm"."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from credence.memory.semantics.quantities import clock_canon

if TYPE_CHECKING:
    from credence.memory.semantics.statements import Word

# Words that join the two ends of a range; "and" only after "between".
_TO: Final = frozenset({"to", "until", "till", "through", "thru"})
_CLOCK: Final = re.compile(r"@(\d{2}):\d{2}")
_HALF_SAID: Final = re.compile(r"[ap]\.?\s*m\b", re.I)
_WHOLE_HOUR: Final = re.compile(r"#(\d{1,2})")


def ranges_in_one_half(words: list[Word]) -> list[Word]:
    """``words`` with a bare hour that opens a range ending in a clock time said with "am" or
    "pm" read as a clock time too ("from 1 to 3 pm" is 13:00 to 15:00, "between 1 and 3 pm"
    as well). It takes the end's half of the day when it comes before the end in that half,
    else the other half: "9 to 5 pm" runs from 9 am, "11 to 1 pm" from 11 am."""
    out = list(words)
    for place in range(len(out) - 2):
        start, join, end = out[place : place + 3]
        opened_by_between = place > 0 and out[place - 1].canon == "between"
        if join.canon not in _TO and not (join.canon == "and" and opened_by_between):
            continue
        hour = _WHOLE_HOUR.fullmatch(start.canon) if start.kind == "number" else None
        clock = _CLOCK.fullmatch(end.canon) if end.kind == "time" else None
        if hour is None or clock is None or not _HALF_SAID.search(end.surface):
            continue
        opening, closing = int(hour[1]), int(clock[1])
        in_the_afternoon = (closing >= 12) == (opening % 12 < closing % 12)
        clock_time = clock_canon(opening, 0, "p" if in_the_afternoon else "a")
        if clock_time is None:
            continue
        # The card shows the half of the day read: "2 pm → 2 am", not "2 → 2".
        said = f"{start.surface} {'pm' if in_the_afternoon else 'am'}"
        out[place] = type(start)(clock_time, said, "time")
    return out
