"""What a statement is about: a changed name that names the thing, not its value."""

from __future__ import annotations

from credence.memory.semantics.statements import Change, statement
from credence.memory.semantics.subjects import another_subject, subject_slot


def test_a_name_after_for_names_the_subject_and_a_value_does_not() -> None:
    old, new = "Invoices for Acme go to Maria", "Invoices for Globex go to Maria"
    assert subject_slot(old, statement(old), statement(new)) == "Acme"
    old, new = "Invoices for Acme go to Maria", "Invoices for Acme go to Pedro"
    assert subject_slot(old, statement(old), statement(new)) == ""


def test_a_taste_held_by_another_person_is_another_subject() -> None:
    old, new = "Alice prefers meetings before noon", "Bob prefers meetings before noon"
    assert subject_slot(old, statement(old), statement(new)) == "Alice"


def test_two_names_changed_at_once_are_two_things_but_two_numbers_are_a_change() -> None:
    names = [Change(old="iOS", new="Android", kind="name"), Change("Swift", "Kotlin", "name")]
    assert another_subject(names)
    numbers = [Change("3", "4", "number"), Change("9am", "10am", "time")]
    assert not another_subject(numbers)
    assert not another_subject(names[:1])
