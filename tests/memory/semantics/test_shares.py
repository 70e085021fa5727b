"""Amounts shared out: each against in total, one part of a whole against another."""

from __future__ import annotations

from credence.memory.semantics.shares import share_differs
from credence.memory.semantics.wording import words_of


def _words(old: str, new: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return words_of(old), words_of(new)


def test_each_against_in_total_and_one_part_against_another() -> None:
    assert share_differs(*_words("The tickets cost $40 each", "The tickets cost $40 in total"))
    assert share_differs(*_words("The two kids each get £10", "The two kids get £10 between them"))
    assert not share_differs(*_words("Meet between 9 and 5", "Meet between 9 and 5 each day"))
    assert share_differs(*_words("The user owns a quarter of the firm", "… three quarters of it"))
    assert share_differs(*_words("Pay half of the bill", "Pay a third of the bill"))
    # "half" and "a half" are one part; "the third floor" is an order, not a part.
    assert not share_differs(*_words("Pay half of the bill", "Pay a half of the bill"))
    assert not share_differs(*_words("The third floor", "The fourth floor"))
    assert not share_differs(*_words("The kids get $5 each", "Each kid gets $5"))
