"""Bounds on a value read as symbols (">", "<=", …): a negated bound is its complement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

# "not more than" is "at most", "not under" is "at least".
COMPLEMENT: Final = {">": "<=", "<": ">=", ">=": "<", "<=": ">"}


def the_bound(words: Sequence[str]) -> str | None:
    """The one bound symbol among ``words``, or None when there is none or more than one."""
    bounds = [word for word in words if word in COMPLEMENT]
    return bounds[0] if len(bounds) == 1 else None


def complemented(words: Sequence[str]) -> list[str]:
    """``words`` with each bound symbol put as its complement (what its negation says)."""
    return [COMPLEMENT.get(word, word) for word in words]


def bounded_value(words: Sequence[str], symbol: str) -> str | None:
    """The value a bound symbol in ``words`` bounds: the value right after it ("at most 30
    minutes"), else the one just before it, a counted noun between at most ("30 minutes or
    less", "72 characters or fewer"); values start with "#", "@" or "/" (a rate)."""
    position = list(words).index(symbol)
    for neighbour in (position + 1, position - 1, position - 2):
        if 0 <= neighbour < len(words) and words[neighbour][:1] in ("#", "@", "/"):
            return words[neighbour]
    return None


def same_limit(negated: Sequence[str], plain: Sequence[str]) -> bool:
    """Whether a negated bound and a plain one limit the same value on the same side, at most
    differing in whether the end is included ("not longer than 72" / "under 72")."""
    mine, theirs = the_bound(negated), the_bound(plain)
    if mine is None or theirs is None:
        return False
    value = bounded_value(negated, mine)
    return (
        value is not None
        and value == bounded_value(plain, theirs)
        and theirs[0] == COMPLEMENT[mine][0]
    )
