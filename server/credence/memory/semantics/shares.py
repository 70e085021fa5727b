"""How an amount is shared out: by each, by all together, or as a part of a whole."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise
from typing import Final

from credence.memory.semantics.statement_words import NUMBER_WORDS

# Whether an amount is had by each or by all together: "$10 each" is not "$10 in total".
_EACH: Final = frozenset({"each", "apiece", "individually"})
_TOGETHER: Final = frozenset({"total", "altogether", "combined", "together", "overall"})
# Who shares an amount "between" them: "£10 between them".
_SHARERS: Final = frozenset({"them", "us", "both", "the"})
# Parts of a whole, by the number they divide it by: "a third", "two thirds", "three quarters".
_PARTS: Final = {
    **dict.fromkeys(("half", "halves"), 2),
    **dict.fromkeys(("third", "thirds"), 3),
    **dict.fromkeys(("quarter", "quarters", "fourth", "fourths"), 4),
    **dict.fromkeys(("fifth", "fifths"), 5),
    **dict.fromkeys(("tenth", "tenths"), 10),
}


def share_differs(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether the two share an amount out differently: "$10 each" / "$10 in total", "a third
    of the rent" / "two thirds of the rent"."""
    each = [not _EACH.isdisjoint(side) for side in (old, new)]
    together = [_together(tuple(side)) for side in (old, new)]
    if each[0] != each[1] and together == [not said for said in each]:
        return True  # one says "each" where the other says "in total"
    parts = _fractions(tuple(old)), _fractions(tuple(new))
    return all(parts) and parts[0] != parts[1]


def _together(words: tuple[str, ...]) -> bool:
    """Whether ``words`` share an amount out all together: "in total", "between them"."""
    return not _TOGETHER.isdisjoint(words) or any(
        word == "between" and following in _SHARERS for word, following in pairwise(words)
    )


@lru_cache(maxsize=16384)
def _fractions(words: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    """Each part of a whole counted in ``words``, as (how many, of how many): "a third" is
    (1, 3), "two thirds" (2, 3); "the third" is an order, not a part."""
    found = []
    for position in range(len(words)):
        divisor, count = _PARTS.get(words[position]), words[position - 1] if position else ""
        if divisor is None:
            continue
        if count in ("a", "an", "one") or (divisor == 2 and words[position] == "half"):
            found.append((1, divisor))  # "a third", and "half" alone
        elif count in NUMBER_WORDS or count.isdigit():
            found.append((int(NUMBER_WORDS.get(count, count)), divisor))
    return tuple(sorted(found))
