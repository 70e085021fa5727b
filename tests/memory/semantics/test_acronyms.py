"""Acronyms one side writes and the other spells out."""

from __future__ import annotations

from credence.memory.semantics.acronyms import acronyms_written_alike


def test_words_spelled_out_are_put_as_the_acronym_the_other_side_writes() -> None:
    assert acronyms_written_alike("The user works in HR", "The user works in human resources") == (
        "The user works in HR",
        "The user works in HR",
    )
    old, new = acronyms_written_alike(
        "Ana has a slot at the Department of Motor Vehicles", "Ana has a slot at the DMV"
    )
    assert old == new


def test_only_an_acronym_one_side_lacks_is_put_in() -> None:
    # Both write "HR": nothing is spelled out to fold.
    texts = ("HR owns hiring rules", "HR owns hiring")
    assert acronyms_written_alike(*texts) == texts


def test_small_words_never_spell_an_acronym() -> None:
    texts = ("The user has rules", "The user likes HR")
    assert acronyms_written_alike(*texts) == texts
