"""Raw-socket HTTP for the security tests: exact bytes out, and a loopback listener that records."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Self
from urllib.parse import urlsplit

import httpx


def address_of(url: str) -> tuple[str, int]:
    """(host, port) of a live server's base URL."""
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def exchange(url: str, raw: bytes, timeout: float = 10.0) -> bytes:
    """Send ``raw`` bytes as they are to the server at ``url`` and return all it answers."""
    with socket.create_connection(address_of(url), timeout=timeout) as conn:
        conn.sendall(raw)
        return read_all(conn)


def read_all(conn: socket.socket) -> bytes:
    """Read until the peer closes the connection (or the socket's timeout passes)."""
    chunks = []
    try:
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    except TimeoutError:
        pass
    return b"".join(chunks)


def read_message(conn: socket.socket) -> tuple[bytes, bytes] | None:
    """One whole HTTP/1.1 message (head, body by Content-Length) off ``conn``; None if it closed.

    A message can arrive in several reads on a loaded machine, so one ``recv`` is not enough.
    """
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head, body


def status_of(answer: bytes) -> int:
    """The status code of a raw HTTP/1.1 answer."""
    return int(answer.split(b" ", 2)[1])


class RecordingListener:
    """A loopback HTTP server that records every connection and request head it gets.

    It answers each request with ``status`` and ``body``; nothing it does is checked by the app
    under test, so it stands for any internal service a push endpoint might point at.
    """

    def __init__(self, status: int = 201, body: bytes = b"") -> None:
        self.status, self.body = status, body
        self.connections = 0
        self.heads: list[bytes] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def port(self) -> int:
        """The port it listens on."""
        return self._sock.getsockname()[1]

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(5)
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        message = read_message(conn)
        if message is None:
            return
        self.heads.append(message[0])
        conn.sendall(
            b"HTTP/1.1 %d X\r\ncontent-type: text/plain\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (self.status, len(self.body), self.body)
        )


@dataclass
class Served:
    """A `credence serve` process; ``stderr`` holds everything it logged once it has stopped."""

    url: str
    process: subprocess.Popen[bytes]
    stderr: str = ""


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def served(data_dir: Path, **env: str) -> Iterator[Served]:
    """Run the real `credence serve` on a free loopback port until the block ends (SIGTERM)."""
    port = free_port()
    environment = {
        **os.environ,
        "CREDENCE_DATA_DIR": str(data_dir),
        "CREDENCE_HOST": "127.0.0.1",
        "CREDENCE_PORT": str(port),
        "CREDENCE_SCHEDULER": "off",
        **env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "credence.cli", "serve"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    run = Served(f"http://127.0.0.1:{port}", process)
    stopped = False
    try:
        # Generous: on two loaded cores importing the app alone can take a minute.
        deadline = time.monotonic() + 180
        while not _ready(run.url):
            if process.poll() is not None or time.monotonic() > deadline:
                # Its stderr ends only when it exits: a server still starting is stopped first.
                run.stderr, stopped = _stop(process), True
                raise RuntimeError(f"credence serve did not start: {run.stderr!r}")
            time.sleep(0.1)
        yield run
    finally:
        if not stopped:
            run.stderr = _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> str:
    """SIGTERM (SIGKILL after 30 s) and wait; what the process wrote to stderr."""
    process.terminate()
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return err.decode("utf-8", "replace")


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
