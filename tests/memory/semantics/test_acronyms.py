"""Acronyms one side writes and the other spells out."""

from __future__ import annotations

from credence.memory.semantics.acronyms import acronyms_written_alike


def test_words_spelled_out_are_put_as_the_acronym_the_other_side_writes() -> None:
    assert acronyms_written_alike(
        "The user works in HR", "The user works in human resources", by_initials=True
    ) == (
        "The user works in HR",
        "The user works in HR",
    )
    old, new = acronyms_written_alike(
        "Ana has a slot at the Department of Motor Vehicles",
        "Ana has a slot at the DMV",
        by_initials=True,
    )
    assert old == new


def test_only_an_acronym_one_side_lacks_is_put_in() -> None:
    # Both write "HR": nothing is spelled out to fold.
    texts = ("HR owns hiring rules", "HR owns hiring")
    assert acronyms_written_alike(*texts, by_initials=True) == texts


def test_small_words_never_spell_an_acronym() -> None:
    texts = ("The user has rules", "The user likes HR")
    assert acronyms_written_alike(*texts, by_initials=True) == texts


def test_a_known_acronym_is_read_as_its_words_however_far_the_model_puts_them() -> None:
    old, new = acronyms_written_alike(
        "Keep pull requests under 400 lines", "Keep PRs under 400 lines", by_initials=False
    )
    assert old == new == "Keep PRs under 400 lines"
    old, new = acronyms_written_alike(
        "Enable two-factor authentication", "Turn on 2FA", by_initials=False
    )
    assert old == "Enable 2FA"
    # Words that spell another acronym's letters stay, unless the caller allows initials.
    texts = ("Email hospital radiology", "Email HR")
    assert acronyms_written_alike(*texts, by_initials=False) == texts
    # A word in small letters is no acronym: "it" is not "IT".
    texts = ("Ask information technology", "Ask about it")
    assert acronyms_written_alike(*texts, by_initials=False) == texts
