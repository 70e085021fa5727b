"""Private files: the data dir is 0700, what Credence writes in it 0600, and a warning otherwise."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077


def restrict_umask() -> None:
    """Make every file this process creates from now on private to its owner (umask 077)."""
    os.umask(PRIVATE_UMASK)


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 (its directory 0700) unless it exists.

    SQLite gives its -wal and -shm files the mode of the database file, so creating the
    database this way keeps all three private whatever the umask.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def exposed_files(paths: list[Path]) -> list[Path]:
    """Those of ``paths`` that exist and that other users may read or write."""
    found = []
    for path in paths:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            continue
        if mode & 0o077:
            found.append(path)
    return found


def warn_if_exposed(paths: list[Path]) -> list[Path]:
    """Log one warning naming every exposed file among ``paths``; return them."""
    exposed = exposed_files(paths)
    if exposed:
        log.warning(
            "readable by other users: %s; run chmod go-rwx on them (they hold keys, push"
            " secrets and episode text)",
            ", ".join(str(path) for path in exposed),
        )
    return exposed
