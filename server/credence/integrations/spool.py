"""The hook's local state: where each transcript was read up to, and turns waiting to be posted."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

MAX_SPOOLED = 500
MAX_REMEMBERED_KEYS = 500


def state_dir(environ: Mapping[str, str]) -> Path:
    """CREDENCE_HOOK_STATE_DIR, else $XDG_STATE_HOME/credence/hooks (~/.local/state/…)."""
    chosen = environ.get("CREDENCE_HOOK_STATE_DIR")
    if chosen:
        return Path(chosen)
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "credence" / "hooks"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _write_json(path: Path, value: Any) -> None:
    """Write ``value`` to ``path`` in one rename, readable by the user alone."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        json.dump(value, out)
    os.replace(temporary, path)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class State:
    """One state directory (mode 700): positions, spooled turns, remembered turn keys."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for sub in ("", "sessions", "spool"):
            (root / sub).mkdir(mode=0o700, parents=True, exist_ok=True)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory's lock, so concurrent hooks never post a turn twice."""
        import fcntl

        descriptor = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)

    def position(self, session_id: str, transcript: str) -> int:
        """Where this session's transcript was read up to (0 for a new or replaced file)."""
        saved = _read_json(self.root / "sessions" / f"{_digest(session_id)}.json")
        if not isinstance(saved, dict) or saved.get("transcript") != transcript:
            return 0
        offset = saved.get("offset")
        return offset if isinstance(offset, int) and offset >= 0 else 0

    def save_position(self, session_id: str, transcript: str, offset: int, lines: int) -> None:
        """Remember the byte offset (and line number) the next read starts from."""
        path = self.root / "sessions" / f"{_digest(session_id)}.json"
        _write_json(path, {"transcript": transcript, "offset": offset, "lines": lines})

    def lines_read(self, session_id: str) -> int:
        """How many transcript lines the saved position is past."""
        saved = _read_json(self.root / "sessions" / f"{_digest(session_id)}.json")
        lines = saved.get("lines") if isinstance(saved, dict) else None
        return lines if isinstance(lines, int) else 0

    def spool(self, agent_id: str, body: dict[str, Any]) -> None:
        """Queue one turn for ``agent_id``; the oldest go when the spool is full."""
        name = f"{time.time_ns():020d}-{os.getpid()}-{_digest(json.dumps(body))[:8]}.json"
        _write_json(self.root / "spool" / name, {"agent_id": agent_id, "body": body})
        waiting = self.spooled()
        for path in waiting[: max(0, len(waiting) - MAX_SPOOLED)]:
            path.unlink(missing_ok=True)

    def spooled(self) -> list[Path]:
        """Queued turns, oldest first."""
        return sorted(p for p in (self.root / "spool").glob("*.json") if not p.name.startswith("."))

    def load(self, path: Path) -> tuple[str, dict[str, Any]] | None:
        """A queued turn's (agent id, body), or None when the file is unreadable."""
        item = _read_json(path)
        if isinstance(item, dict) and isinstance(item.get("body"), dict):
            return str(item.get("agent_id", "")), item["body"]
        return None

    def seen(self, key: str) -> bool:
        """Whether a turn with this key was already queued (Codex may notify twice)."""
        keys = _read_json(self.root / "turn-keys.json")
        return isinstance(keys, list) and _digest(key) in keys

    def remember(self, key: str) -> None:
        """Remember a queued turn's key (the last few hundred)."""
        keys = _read_json(self.root / "turn-keys.json")
        keys = keys if isinstance(keys, list) else []
        keys = [*keys, _digest(key)][-MAX_REMEMBERED_KEYS:]
        _write_json(self.root / "turn-keys.json", keys)

    def cached_agent(self, url: str, key: str) -> str | None:
        """The agent id learnt for this server and key (so each prompt costs one request)."""
        found = _read_json(self.root / f"agent-{_digest(url + ' ' + key)}.json")
        return found if isinstance(found, str) else None

    def cache_agent(self, url: str, key: str, agent_id: str) -> None:
        """Remember the key's one agent."""
        _write_json(self.root / f"agent-{_digest(url + ' ' + key)}.json", agent_id)
