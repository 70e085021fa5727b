"""Canonical statements: abbreviations read as the words they shorten."""

from __future__ import annotations

import pytest

from credence.memory.semantics.statements import statement, stem


def test_common_abbreviations_read_as_the_word_they_shorten() -> None:
    assert statement("Back up the prod DB nightly").canons == (
        statement("Back up the production database nightly").canons
    )
    assert statement("Back up the prod DB").canons != statement("Back up the dev DB").canons


@pytest.mark.parametrize(
    ("form", "base"), [("kept", "keep"), ("led", "leads"), ("forbade", "forbid"), ("goes", "go")]
)
def test_irregular_verb_forms_stem_as_their_base_form(form: str, base: str) -> None:
    assert stem(form) == stem(base)
