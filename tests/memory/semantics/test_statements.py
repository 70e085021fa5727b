"""Canonical statements: abbreviations read as the words they shorten."""

from __future__ import annotations

from credence.memory.semantics.statements import statement


def test_common_abbreviations_read_as_the_word_they_shorten() -> None:
    assert statement("Back up the prod DB nightly").canons == (
        statement("Back up the production database nightly").canons
    )
    assert statement("Back up the prod DB").canons != statement("Back up the dev DB").canons
