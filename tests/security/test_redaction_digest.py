"""Redaction placeholders are keyed per installation: no offline check of a guessed secret."""

from __future__ import annotations

import hashlib
import re
import sqlite3

from credence.memory.ingest.redact import redact
from credence.settings import Settings
from tests.helpers import make_agent, post_episode
from tests.livesrv import cli_key, running

SECRET = "DB_PASSWORD=changeme123"
GUESS = "changeme123"
_DIGEST = re.compile(r"\[REDACTED:generic_secret:([0-9a-f]{8})\]")


def _digest(text: str) -> str:
    match = _DIGEST.search(text)
    assert match is not None, text
    return match[1]


def test_the_digest_is_keyed_and_stable_per_key() -> None:
    one, other = bytes(32), bytes(range(32))
    first = _digest(redact(SECRET, digest_key=one).text)
    assert _digest(redact(SECRET, digest_key=one).text) == first
    assert _digest(redact(SECRET, digest_key=other).text) != first
    assert hashlib.sha256(GUESS.encode()).hexdigest()[:8] not in {
        first,
        _digest(redact(SECRET, digest_key=other).text),
    }


def _stored_digest(data_dir, *, restart_note: str = "") -> str:
    settings = Settings(data_dir=data_dir, scheduler=False)
    with running(settings) as server, server.client(cli_key(data_dir, "admin")) as admin:
        if admin.get("/api/v1/agents/coder").status_code != 200:
            make_agent(admin, "coder")
        episode = post_episode(admin, "coder", summary=f"{restart_note} exported {SECRET}")
    assert GUESS not in episode["summary"]
    return _digest(episode["summary"])


def test_two_installations_differ_and_one_installation_is_stable(tmp_path) -> None:
    first = _stored_digest(tmp_path / "one")
    again = _stored_digest(tmp_path / "one", restart_note="after a restart")
    other = _stored_digest(tmp_path / "two")
    assert first == again  # one installation: redacted episodes still correlate
    assert first != other  # another installation: another key
    assert first != hashlib.sha256(GUESS.encode()).hexdigest()[:8]
    # The key lives in the database (every replica digests alike), never in a file beside it.
    assert list((tmp_path / "one").glob("redaction_secret")) == []
    database = sqlite3.connect(tmp_path / "one" / "credence.sqlite3")
    try:
        (value,) = database.execute(
            "SELECT value FROM installation_secrets WHERE name = 'redaction'"
        ).fetchone()
    finally:
        database.close()
    assert len(value) == 32
