"""Readiness: whether the store takes writes and has every migration this Credence ships."""

from __future__ import annotations

from typing import TYPE_CHECKING

from credence.db.health import check_writable, latest_schema_version

if TYPE_CHECKING:
    from credence.db.engine import Database


async def not_ready(store: Database) -> str | None:
    """Why ``store`` cannot serve yet (not writable, migrations missing), or None when ready.

    Any failure to write counts as not ready: a probe reports it, it never raises.
    """
    try:
        writable = await store.write(check_writable)
    except Exception as exc:
        return f"store not writable: {exc}"
    if not writable:
        return "store not writable: the database is read-only"
    if store.schema_version != latest_schema_version(store.dialect):
        return "migrations not applied"
    return None
