"""Real `credence serve` replicas on one PostgreSQL, driven and observed from outside over HTTP."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import httpx
from harness.pg import free_port

from credence.settings import Settings
from credence.tls import tls_context
from tests.livesrv import cli_key

T = TypeVar("T")
LOOPBACK = "127.0.0.1"
START_TIMEOUT_S = 60.0  # three replicas importing at once on two loaded cores
LOG_TAIL_CHARS = 4000
# Every replica runs what `credence serve` runs in production, limits lifted for the load.
BASE_ENV = {
    "CREDENCE_SCHEDULER": "1",
    "CREDENCE_LOG_LEVEL": "WARNING",
    "CREDENCE_RATE_LIMIT_PER_MINUTE": str(10**9),
    "CREDENCE_PAIR_RATE_LIMIT_PER_MINUTE": str(10**9),
    "CREDENCE_READ_RATE_LIMIT_PER_MINUTE": "0",
    "CREDENCE_READ_CONCURRENCY_PER_KEY": "0",
    "CREDENCE_PUSH_ALLOWED_HOSTS": LOOPBACK,
    "CREDENCE_METRICS": "on",  # scraped from loopback, so no token
}


class Replica:
    """One `python -m credence.cli serve` child: its own empty data dir, port and log file.

    Output goes to a file, never a pipe, so a chatty replica can not block on a full pipe, and
    every start appends to the same file so a failure can show the whole history.
    """

    def __init__(self, name: str, root: Path, env: dict[str, str]) -> None:
        self.name = name
        self.data_dir = root / f"{name}-data"
        self.log_path = root / f"{name}.log"
        self.env = env
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        """The replica's base URL."""
        return f"http://{LOOPBACK}:{self.port}"

    def launch(self, *, new_port: bool = False) -> None:
        """Start the process without waiting for it to serve.

        A restart keeps the replica's port, so clients made earlier reach it again, the way a
        load balancer's backend address stays put; ``new_port`` after a lost port race.
        """
        if new_port or not self.port:
            self.port = free_port()
        command = [sys.executable, "-m", "credence.cli", "serve", "--data", str(self.data_dir)]
        command += ["--host", LOOPBACK, "--port", str(self.port)]
        with self.log_path.open("ab") as log:
            log.write(f"--- start {self.starts} on port {self.port}\n".encode())
            log.flush()
            # A session of its own: a kill reaches the whole process group and no signal
            # meant for pytest (Ctrl-C) reaches the replica first.
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env},
                start_new_session=True,
            )
        self.starts += 1

    def healthy(self) -> bool:
        """True when the process is alive and /healthz answers 200."""
        if not self.alive():
            return False
        try:
            return httpx.get(f"{self.url}/healthz", timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    def alive(self) -> bool:
        """True while the process runs."""
        return self.process is not None and self.process.poll() is None

    def wait_healthy(self, timeout: float = START_TIMEOUT_S) -> None:
        """Wait until /healthz answers; relaunch on a lost port race, else fail with the log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.healthy():
                return
            if not self.alive():
                if "address already in use" in self.log_tail().lower() and self.starts < 50:
                    self.launch(new_port=True)
                    continue
                raise AssertionError(f"replica {self.name} exited:\n{self.log_tail()}")
            time.sleep(0.05)
        raise AssertionError(f"replica {self.name} did not serve in {timeout}s:\n{self.log_tail()}")

    def sigkill(self) -> None:
        """SIGKILL the replica's process group (no shutdown code runs) and reap it."""
        if self.process is None:
            return
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM (a clean shutdown), SIGKILL after 15 s."""
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.sigkill()

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        """The end of everything this replica wrote."""
        try:
            return self.log_path.read_text("utf-8", "replace")[-chars:]
        except OSError:
            return "(no log)"

    def log_text(self) -> str:
        """Everything this replica wrote, across its restarts."""
        return self.log_tail(chars=10**9)

    def client(self, key: str | None = None, timeout: float = 10.0) -> httpx.Client:
        """A client for this replica, authenticated with ``key``."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(
            base_url=self.url, headers=headers, timeout=timeout, verify=tls_context()
        )


class ReplicaSet:
    """N replicas of one installation: the same CREDENCE_DATABASE_URL, nothing else shared."""

    # The sets started and not yet closed, whose logs a failing test's report shows.
    open_sets: ClassVar[list[ReplicaSet]] = []

    def __init__(self, root: Path, database_url: str, count: int = 3) -> None:
        self.root = root
        self.database_url = database_url
        env = {**BASE_ENV, "CREDENCE_DATABASE_URL": database_url}
        self.replicas = [Replica(f"replica-{n}", root, env) for n in range(count)]
        self._clients: list[httpx.Client] = []

    def __getitem__(self, index: int) -> Replica:
        return self.replicas[index]

    def __iter__(self) -> Iterator[Replica]:
        return iter(self.replicas)

    def __len__(self) -> int:
        return len(self.replicas)

    def start(self) -> ReplicaSet:
        """Launch every replica at once (their migrations race for the advisory lock); wait."""
        ReplicaSet.open_sets.append(self)
        for replica in self.replicas:
            replica.launch()
        for replica in self.replicas:
            replica.wait_healthy()
        return self

    def close(self) -> None:
        """Close the clients and stop every replica; SIGKILL whatever does not stop."""
        for client in self._clients:
            client.close()
        self._clients.clear()
        for replica in self.replicas:
            try:
                replica.stop()
            except Exception:  # teardown must reach every replica, whatever one does
                replica.sigkill()
        if self in ReplicaSet.open_sets:
            ReplicaSet.open_sets.remove(self)

    def settings(self) -> Settings:
        """Settings for the CLI on this installation: a data dir of its own, the shared URL."""
        return Settings(data_dir=self.root / "cli-data", database_url=self.database_url)

    def key(self, scope: str, *agents: str, label: str = "") -> str:
        """A key made by `credence keys create --database-url …`, as an operator would."""
        return cli_key(self.settings(), scope, *agents, label=label)

    def clients(self, key: str) -> list[httpx.Client]:
        """One client per replica for ``key``, closed with the set."""
        made = [replica.client(key) for replica in self.replicas]
        self._clients.extend(made)
        return made

    def logs(self) -> str:
        """Every replica's log tail, for a failure report."""
        return "\n".join(f"===== {r.name} =====\n{r.log_tail()}" for r in self.replicas)


def wait_until(condition: Callable[[], T], timeout: float, what: str, every: float = 0.02) -> T:
    """Poll ``condition`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(every)


def all_pages(client: httpx.Client, path: str, **params: Any) -> list[dict[str, Any]]:
    """Every item of a paged listing."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {**params, "limit": 200, **({"cursor": cursor} if cursor else {})}
        response = client.get(path, params=query)
        assert response.status_code == 200, response.text
        page = response.json()
        items.extend(page["items"])
        cursor = page.get("next_cursor")
        if not cursor:
            return items


def first_answer(
    clients: Sequence[httpx.Client], method: str, path: str, **kwargs: Any
) -> httpx.Response:
    """Send to each client in turn until one answers; transport errors move on to the next."""
    last: Exception | None = None
    for client in clients:
        try:
            return client.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            last = exc
    raise AssertionError(f"no replica answered {method} {path}: {last}")
