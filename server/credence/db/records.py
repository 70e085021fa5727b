"""Typed rows: a Struct whose fields are the columns a read selects, JSON columns decoded once."""

from __future__ import annotations

from typing import Any, ClassVar, Self

import msgspec

_decode = msgspec.json.decode


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """A store record: its fields, in order, are the columns its reads select.

    ``JSON_FIELDS`` names the columns stored as JSON text; ``from_row`` decodes them (a NULL
    stays None), so no caller outside the store decodes a column again.
    """

    JSON_FIELDS: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def columns(cls, alias: str = "") -> str:
        """The column list to select, each prefixed with ``alias.`` when one is given."""
        prefix = f"{alias}." if alias else ""
        return ", ".join(f"{prefix}{name}" for name in cls.__struct_fields__)

    @classmethod
    def from_row(cls, row: Any) -> Self:
        """The record of a row read with ``columns()`` (by name: a dict works too)."""
        values = {name: row[name] for name in cls.__struct_fields__}
        for name in cls.JSON_FIELDS:
            value = values[name]
            if isinstance(value, str | bytes):
                values[name] = _decode(value)
        return cls(**values)

    @classmethod
    def from_rows(cls, rows: list[Any]) -> list[Self]:
        """The records of several rows read with ``columns()``."""
        return [cls.from_row(row) for row in rows]
