"""Shared model patterns: whitespace means the same to Python's regex engine as to ECMA-262's."""

from __future__ import annotations

import re
import unicodedata

import msgspec
import pytest

from credence.models.common import WHITESPACE, BeliefText
from credence.models.push import ENDPOINT_PATTERN
from credence.models.reviewers import ReviewerName

ALL_CHARACTERS = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
# ECMA-262 \s: WhiteSpace (TAB, VT, FF, ZWNBSP, any Zs) and LineTerminator (LF, CR, LS, PS).
ECMA_WHITESPACE = {"\t", "\v", "\f", "\ufeff", "\n", "\r", "\u2028", "\u2029"} | {
    c for c in ALL_CHARACTERS if unicodedata.category(c) == "Zs"
}
PYTHON_WHITESPACE = {c for c in ALL_CHARACTERS if re.fullmatch(r"\s", c)}


def test_the_whitespace_class_is_both_engines_whitespace_and_nothing_else() -> None:
    listed = {c for c in ALL_CHARACTERS if re.fullmatch(f"[{WHITESPACE}]", c)}
    assert listed == ECMA_WHITESPACE | PYTHON_WHITESPACE
    # The two engines disagree, which is why the class is spelled out.
    only_python = PYTHON_WHITESPACE - ECMA_WHITESPACE
    only_ecma = ECMA_WHITESPACE - PYTHON_WHITESPACE
    assert only_python == {"\x1c", "\x1d", "\x1e", "\x1f", "\x85"}
    assert only_ecma == {"\ufeff"}


@pytest.mark.parametrize("blank", sorted(ECMA_WHITESPACE | PYTHON_WHITESPACE))
def test_a_belief_or_a_name_of_only_whitespace_is_refused(blank: str) -> None:
    for kind in (BeliefText, ReviewerName):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(blank * 3, kind)


def test_a_visible_character_among_whitespace_is_a_belief() -> None:
    assert msgspec.convert("\x1e ok \ufeff", BeliefText) == "\x1e ok \ufeff"
    assert msgspec.convert("\u00a0Ada\u3000", ReviewerName) == "\u00a0Ada\u3000"


@pytest.mark.parametrize("blank", ["\x1e", "\x85", "\ufeff", "\u3000"])
def test_a_push_endpoint_with_whitespace_in_it_is_refused(blank: str) -> None:
    assert re.search(ENDPOINT_PATTERN, "https://push.example.test/send/abc")
    assert not re.search(ENDPOINT_PATTERN, f"https://push.example.test/send/a{blank}bc")
    assert not re.search(ENDPOINT_PATTERN, f"https://push{blank}.example.test/send")
