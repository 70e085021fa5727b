"""Per-installation secrets: random bytes generated once into a file of their own (mode 0600)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

SECRET_BYTES = 32


def load_or_create(path: Path, consequence: str = "", size: int = SECRET_BYTES) -> bytes:
    """Return the secret in ``path``, generating ``size`` random bytes there the first time.

    Two processes racing on a fresh data dir agree: the file is created exclusively, and the
    loser reads the winner's secret. ``consequence`` says what replacing the secret breaks.
    """
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process won the race; read its secret below
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(size))
                handle.flush()
                os.fsync(handle.fileno())
    secret = path.read_bytes()
    if len(secret) != size:
        raise ValueError(
            f"{path} must hold exactly {size} bytes; move it away to generate a new one"
            + (f" ({consequence})" if consequence else "")
        )
    return secret
