"""`credence migrate [--check]` on a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from credence.cli import main
from credence.db import pg_migrate
from credence.db.store import migrations


def test_sqlite_check_lists_pending_without_creating_anything_then_migrate_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    assert main(["migrate", "--check", "--data", str(data)]) == 1
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("pending ")] == [
        f"pending {version:04d}_{name}" for version, name, _ in migrations()
    ]
    assert not data.exists()
    assert main(["migrate", "--data", str(data)]) == 0
    assert "applied 0001_core" in capsys.readouterr().out
    assert main(["migrate", "--check", "--data", str(data)]) == 0
    assert "up to date" in capsys.readouterr().out
    assert main(["migrate", "--data", str(data)]) == 0
    assert "applied" not in capsys.readouterr().out


def test_postgresql_check_changes_nothing_and_migrate_applies_under_the_lock(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", "--check", "--database-url", pg_url]) == 1
    pending = [line for line in capsys.readouterr().out.splitlines() if line.startswith("pending")]
    assert pending == [f"pending {m.version:04d}_{m.name}" for m in pg_migrate.migrations()]
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('schema_migrations')").fetchone() == (None,)
    assert main(["migrate", "--database-url", pg_url]) == 0
    assert f"applied {pending[-1].split()[1]}" in capsys.readouterr().out
    assert main(["migrate", "--check", "--database-url", pg_url]) == 0
    with psycopg.connect(pg_url) as conn:
        recorded = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
    assert sorted(recorded) == [m.version for m in pg_migrate.migrations()]


def test_postgresql_newer_than_this_code_is_an_error(
    pg_migrated_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(pg_migrated_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO schema_migrations(version, name, checksum) VALUES (9999, 'future', 'x')"
        )
    assert main(["migrate", "--check", "--database-url", pg_migrated_url]) == 2
    assert "does not know: [9999]" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "url"),
    [
        (["migrate", "--check"], "postgresql://credence:hunter2@127.0.0.1:9/credence"),
        (["migrate", "--check"], "mysql://root@localhost/x"),
        # Any command that opens the store, not only migrate (this one used to print a traceback).
        (["keys", "create", "--scope", "admin"], "postgresql://credence:hunter2@127.0.0.1:9/c"),
    ],
)
def test_a_bad_or_unreachable_url_is_one_line_and_no_traceback(
    command: list[str], url: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREDENCE_")}
    done = subprocess.run(
        [sys.executable, "-m", "credence.cli", *command, "--database-url", url],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "hunter2" not in done.stderr and "Traceback" not in done.stderr


def test_a_file_that_is_not_a_database_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "credence.sqlite3").write_bytes(b"not a database at all, just bytes" * 100)
    for argv in (["migrate", "--check"], ["migrate"]):
        assert main([*argv, "--data", str(tmp_path)]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"error: {tmp_path / 'credence.sqlite3'}: file is not a database"
