"""Shared model patterns: whitespace means the same to Python's regex engine as to ECMA-262's."""

from __future__ import annotations

import functools
import re
import unicodedata

import msgspec
import pytest

from credence.models.common import WHITESPACE, BeliefText
from credence.models.push import ENDPOINT_PATTERN
from credence.models.reviewers import ReviewerName

# ECMA-262 \s: WhiteSpace (TAB, VT, FF, ZWNBSP, any Zs) and LineTerminator (LF, CR, LS, PS).
ECMA_LISTED = {"\t", "\v", "\f", "\ufeff", "\n", "\r", "\u2028", "\u2029"}


@functools.cache
def whitespace() -> tuple[set[str], set[str], set[str]]:
    r"""(ECMA-262's \s, Python's \s, the WHITESPACE class), each over all of Unicode.

    Computed once, when a test first asks: a scan of 1.1 M characters at import would cost
    every worker a second of collection.
    """
    everything = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
    ecma = ECMA_LISTED | {c for c in everything if unicodedata.category(c) == "Zs"}
    python = {c for c in everything if re.fullmatch(r"\s", c)}
    listed = {c for c in everything if re.fullmatch(f"[{WHITESPACE}]", c)}
    return ecma, python, listed


def test_the_whitespace_class_is_both_engines_whitespace_and_nothing_else() -> None:
    ecma, python, listed = whitespace()
    assert listed == ecma | python
    # The two engines disagree, which is why the class is spelled out.
    only_python = python - ecma
    only_ecma = ecma - python
    assert only_python == {"\x1c", "\x1d", "\x1e", "\x1f", "\x85"}
    assert only_ecma == {"\ufeff"}


def test_a_belief_or_a_name_of_only_whitespace_is_refused() -> None:
    ecma, python, _ = whitespace()
    for blank in sorted(ecma | python):
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
