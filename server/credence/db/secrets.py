"""Per-installation secrets kept in the database, so every replica signs and digests alike."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path

from credence.db.engine import Connection, StoreError, one_row

# Each is 32 random bytes made once per installation; changing one breaks what the note says.
INSTALLATION_SECRETS = {
    "redaction": "redacted placeholders stop matching",
    "push_token": "outstanding notification buttons stop working",
}
SECRET_BYTES = 32


async def ensure_secrets(conn: Connection, legacy_dir: Path | None = None) -> dict[str, bytes]:
    """Create any missing installation secret and return them all by name.

    ``legacy_dir`` is where a single-box installation kept them as ``<name>_secret`` files
    before they moved into the database; an existing file is adopted so nothing it signed
    breaks. Concurrent replicas agree: the first insert wins and everyone reads it back.
    """
    for name, consequence in INSTALLATION_SECRETS.items():
        value = _legacy(legacy_dir, name, consequence) or secrets.token_bytes(SECRET_BYTES)
        await put_secret_once(conn, name, value)
    found = await conn.rows("SELECT name, value FROM installation_secrets")
    return {row["name"]: bytes(row["value"]) for row in found}


async def put_secret_once(conn: Connection, name: str, value: bytes) -> bytes:
    """Store ``value`` under ``name`` unless a value is there already; return the stored one."""
    await conn.run(
        "INSERT INTO installation_secrets(name, value, created_at) VALUES (?, ?, ?)"
        " ON CONFLICT (name) DO NOTHING",
        (name, value, datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")),
    )
    row = await one_row(conn, "SELECT value FROM installation_secrets WHERE name = ?", (name,))
    return bytes(row["value"])


def _legacy(directory: Path | None, name: str, consequence: str) -> bytes | None:
    if directory is None:
        return None
    path = directory / f"{name}_secret"
    if not path.is_file():
        return None
    value = path.read_bytes()
    if len(value) != SECRET_BYTES:
        raise StoreError(
            f"{path} must hold exactly {SECRET_BYTES} bytes; move it away to generate a new one"
            f" ({consequence})"
        )
    return value
