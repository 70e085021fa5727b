"""A throwaway PostgreSQL cluster for tests and benchmarks: initdb in a temp dir, loopback only."""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import psycopg
import pytest
from psycopg import sql

SUPERUSER = "postgres"
# Debian's server binaries live outside PATH; pg_config names the installed major's directory.
DEBIAN_BIN_GLOB = "/usr/lib/postgresql/*/bin"
START_TIMEOUT_S = 60
# A throwaway cluster loses nothing it cares about on a crash, so durability is traded for speed;
# shared_buffers stays small because several engineers' suites share two cores and their RAM.
SERVER_SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "32MB",
    "max_connections": "60",
    "log_min_messages": "warning",
    "timezone": "'UTC'",
}


class PostgresUnavailable(RuntimeError):
    """PostgreSQL could not be found or started; the message says why."""


def find_bindir() -> Path | None:
    """The directory holding initdb and pg_ctl: `pg_config --bindir`, else Debian's newest."""
    candidates: list[Path] = []
    if shutil.which("pg_config"):
        found = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, check=False
        )
        if found.returncode == 0 and found.stdout.strip():
            candidates.append(Path(found.stdout.strip()))
    majors = sorted(glob.glob(DEBIAN_BIN_GLOB), key=_major_of, reverse=True)
    candidates.extend(Path(path) for path in majors)
    for directory in candidates:
        if (directory / "initdb").is_file() and (directory / "pg_ctl").is_file():
            return directory
    return None


def _major_of(bindir: str) -> int:
    name = Path(bindir).parent.name
    return int(name) if name.isdigit() else 0


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    """One initdb'd cluster on 127.0.0.1, run as the `postgres` OS user when we are root."""

    def __init__(self, bindir: Path, *, durable: bool = False) -> None:
        self.bindir = bindir
        # Asynchronous commit can lose the last acknowledged commits when the server crashes
        # (``halt("immediate")``); tests that crash it and count acknowledged writes need it on.
        self.durable = durable
        self.root = Path(tempfile.mkdtemp(prefix="credence-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.password = secrets.token_urlsafe(24)
        self.port = 0
        self._as_user = os.geteuid() == 0

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self._as_user:
            # PostgreSQL refuses to run as root; runuser keeps the environment minimal.
            runuser = shutil.which("runuser", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
            command = [runuser or "runuser", "-u", SUPERUSER, "--", *command]
        try:
            return subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as exc:
            return subprocess.CompletedProcess(command, 127, "", str(exc))

    def start(self) -> None:
        """initdb, write the settings, start on a free port; PostgresUnavailable if it cannot."""
        pwfile = self.root / "pwfile"
        pwfile.write_text(self.password + "\n", encoding="utf-8")
        if self._as_user:
            shutil.chown(self.root, SUPERUSER, SUPERUSER)
            shutil.chown(pwfile, SUPERUSER, SUPERUSER)
        self.root.chmod(0o700)
        pwfile.chmod(0o600)
        made = self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "-E",
            "UTF8",
            "--no-locale",
            "--auth=scram-sha-256",
            f"--pwfile={pwfile}",
            "--no-sync",
        )
        pwfile.unlink()
        if made.returncode != 0:
            raise PostgresUnavailable(f"initdb failed: {_tail(made.stderr or made.stdout)}")
        for attempt in range(3):
            self.port = free_port()
            self._write_settings()
            started = self._run(
                "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w",
                "-t", str(START_TIMEOUT_S), "start",
            )  # fmt: skip
            if started.returncode == 0:
                return
            # Another process may have taken the port between the probe and the bind.
            if attempt == 2:
                raise PostgresUnavailable(f"pg_ctl start failed: {_tail(self._log_text())}")

    def _write_settings(self) -> None:
        settings = {
            **SERVER_SETTINGS,
            **({"synchronous_commit": "on"} if self.durable else {}),
            "port": str(self.port),
            "unix_socket_directories": f"'{self.root}'",
        }
        conf = self.data / "postgresql.auto.conf"
        conf.write_text(
            "".join(f"{name} = {value}\n" for name, value in settings.items()), encoding="utf-8"
        )
        if self._as_user:
            shutil.chown(conf, SUPERUSER, SUPERUSER)

    def _log_text(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no server log)"

    def halt(self, mode: str = "fast") -> None:
        """Stop the server but keep the cluster, to ``resume()`` later: an outage for tests.

        ``fast`` rolls back open transactions and closes every connection; ``immediate`` is a
        crash (no checkpoint; the restart replays the WAL).
        """
        stopped = self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")
        if stopped.returncode != 0:
            raise PostgresUnavailable(f"pg_ctl stop failed: {_tail(stopped.stderr)}")

    def resume(self) -> None:
        """Start the halted cluster again on the same port and data dir; wait for connections."""
        started = self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w",
            "-t", str(START_TIMEOUT_S), "start",
        )  # fmt: skip
        if started.returncode != 0:
            raise PostgresUnavailable(f"pg_ctl start failed: {_tail(self._log_text())}")
        _wait_for_connections(self)

    def ensure_running(self) -> None:
        """Resume the cluster if a test halted it and failed before resuming it."""
        if not (self.data / "postmaster.pid").exists():
            self.resume()

    def stop(self) -> None:
        """Stop the cluster at once and remove its directory."""
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str = "postgres") -> str:
        """A libpq URL for one database on this cluster, as the superuser."""
        return f"postgresql://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, prefix: str, template: str | None = None) -> str:
        """A new database named ``prefix`` plus a random suffix, empty or a copy of ``template``.

        Copying a migrated template is much cheaper than migrating each test's database.
        """
        name = f"{_identifier(prefix)}_{secrets.token_hex(4)}"
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template is not None:
            statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        # FILE_COPY (PostgreSQL 15+) copies the files after a checkpoint, which fsync=off makes
        # cheap; the default WAL_LOG writes every block through the WAL and is ~5× slower here.
        statement += sql.SQL(" STRATEGY FILE_COPY")
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(statement)
        return name

    def drop_database(self, name: str) -> None:
        """Drop a database, disconnecting whoever still holds it."""
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    @contextmanager
    def database(self, prefix: str, template: str | None = None) -> Iterator[str]:
        """A fresh database for the block; yields its URL and drops it afterwards."""
        name = self.create_database(prefix, template)
        try:
            yield self.url(name)
        finally:
            self.drop_database(name)


def refuse_or_skip(reason: str) -> NoReturn:
    """Fail the test under CI=true (CI must run the PostgreSQL suites), skip it elsewhere."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def _identifier(text: str) -> str:
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in text.lower()).strip("_")
    return (cleaned or "db")[:40]


def _tail(text: str, lines: int = 8) -> str:
    return " | ".join(line for line in text.strip().splitlines()[-lines:] if line.strip())


@contextmanager
def throwaway_postgres(*, durable: bool = False) -> Iterator[PostgresServer]:
    """Start a throwaway cluster for the block; PostgresUnavailable says why one cannot start.

    ``durable`` keeps synchronous commit on, so a crash loses no acknowledged commit.
    """
    bindir = find_bindir()
    if bindir is None:
        raise PostgresUnavailable(
            "no PostgreSQL server binaries (pg_config --bindir, /usr/lib/postgresql/*/bin);"
            " run tests/ensure_postgres.py as root to install Debian's postgresql"
        )
    server = PostgresServer(bindir, durable=durable)
    try:
        server.start()
        _wait_for_connections(server)
        yield server
    finally:
        server.stop()


def _wait_for_connections(server: PostgresServer) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            psycopg.connect(server.url(), connect_timeout=5).close()
            return
        except psycopg.OperationalError as exc:
            if time.monotonic() > deadline:
                reason = f"cluster does not accept connections: {exc}"
                raise PostgresUnavailable(reason) from exc
            time.sleep(0.05)
