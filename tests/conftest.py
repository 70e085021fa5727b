"""Shared fixtures: a real server over real HTTP on a real SQLite file, and keys made by the CLI."""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx._config
import httpx._transports.default
import psycopg
import pytest
from harness.fakes.embed import FakeEmbeddings
from harness.fakes.llm import FakeLLM
from harness.fakes.push import FakePushService
from harness.pg import PostgresServer, PostgresUnavailable, refuse_or_skip, throwaway_postgres

from credence.db import pg_migrate
from credence.settings import Settings
from credence.tls import tls_context
from tests.livesrv import LiveServer, cli_key, running
from tests.notify.pushserver import ALLOWED

ENGINES = ("sqlite", "postgresql")
# The suites that run once per engine (issue 14 §4); the rest exercise code above the store.
BOTH_ENGINE_SUITES = ("api", "db", "reflection", "notify", "reliability", "fuzz")


def _share_the_default_ssl_context() -> None:
    """Build httpx's default TLS context (certifi's CA bundle) once per test process.

    Every httpx client and transport parses the whole CA bundle again (0.05–0.5 s of CPU each on
    these cores). The server's own clients share ``credence.tls``'s context; this hands the same
    one to the clients tests make themselves. Only httpx's explicit forms (a context, a CA path,
    a client certificate, SSL_CERT_FILE/SSL_CERT_DIR) still go to httpx each time.
    """
    original = httpx._config.create_ssl_context

    def create_ssl_context(
        verify: ssl.SSLContext | str | bool = True, cert: object = None, trust_env: bool = True
    ) -> ssl.SSLContext:
        from_env = trust_env and (os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"))
        if verify is True and cert is None and not from_env:
            return tls_context()
        return original(verify=verify, cert=cert, trust_env=trust_env)

    for module in (httpx, httpx._config, httpx._transports.default):
        module.create_ssl_context = create_ssl_context


_share_the_default_ssl_context()


# Room the tmpfs must have free before the test files go there (a full run writes ~250 MB).
MEMORY_TMP = Path("/dev/shm")
MEMORY_TMP_MIN_FREE = 4 * 2**30


def _test_files_in_memory() -> None:
    """Put tmp_path, the throwaway clusters and the servers' data dirs on tmpfs when it has room.

    Every SQLite commit fsyncs (synchronous=FULL), and so do the 16 migrations of each fresh
    store: on two busy cores and a shared disk that is tens of milliseconds per commit, most of
    a store test's time. The files stay real files; no test can observe durability across a
    power cut, and a killed process (the crash suites) leaves its writes in the page cache either
    way. An explicit TMPDIR is kept; ``TMPDIR=/tmp`` measures on disk.
    """
    if "TMPDIR" in os.environ or not MEMORY_TMP.is_dir() or not os.access(MEMORY_TMP, os.W_OK):
        return
    free = os.statvfs(MEMORY_TMP)
    if free.f_bavail * free.f_frsize < MEMORY_TMP_MIN_FREE:
        return
    os.environ["TMPDIR"] = str(MEMORY_TMP)  # inherited by xdist workers and subprocesses
    tempfile.tempdir = None  # gettempdir() may have cached /tmp already (capture files)


_test_files_in_memory()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Schedule the files holding slow tests first.

    `make test` hands out whole files (``--dist loadfile``): the two-minute crash file handed
    out last kept one worker busy for two minutes after the others had finished. The sort is
    stable, so each file's tests stay together and in order.
    """
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


@pytest.fixture(autouse=True)
def _root_logger_restored() -> Iterator[None]:
    """Give the root logger back its handlers after each test.

    An app's startup configures the root logger with a stream handler on the ``sys.stderr`` of
    the test that started it, which pytest closes afterwards; a later test in the same worker
    that logs in process (a CLI command, a store migration) would then write to that closed
    stream ("I/O operation on closed file"), depending on which tests ran before it.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test of the engine suites that uses ``engine`` (via ``settings``) per engine.

    ``CREDENCE_TEST_ENGINES=sqlite`` (or ``postgresql``) narrows a local run to one engine.
    """
    if "engine" not in metafunc.fixturenames:
        return
    marks = metafunc.definition.iter_markers("parametrize")
    if any("engine" in mark.args[0] for mark in marks):
        return
    suite = Path(str(metafunc.definition.path)).relative_to(Path(__file__).parent).parts[0]
    wanted = os.environ.get("CREDENCE_TEST_ENGINES", ",".join(ENGINES)).split(",")
    engines = [e for e in ENGINES if e in wanted] if suite in BOTH_ENGINE_SUITES else ["sqlite"]
    metafunc.parametrize("engine", engines or ["sqlite"])


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """The session's throwaway cluster; fails under CI=true when it cannot start, else skips."""
    try:
        with throwaway_postgres() as server:
            yield server
    except PostgresUnavailable as exc:
        refuse_or_skip(f"PostgreSQL unavailable: {exc}")


@pytest.fixture(scope="session")
def pg_migrated_template(postgres: PostgresServer) -> str:
    """A database with every PostgreSQL migration applied, for tests to copy."""
    name = postgres.create_database("migrated_template")
    asyncio.run(_migrate(postgres.url(name)))
    return name


async def _migrate(url: str) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await pg_migrate.migrate(conn)


@pytest.fixture
def pg_migrated_url(
    postgres: PostgresServer, pg_migrated_template: str, request: pytest.FixtureRequest
) -> Iterator[str]:
    """The URL of a migrated database of its own for one test (a copy of the template)."""
    with postgres.database(request.node.name, template=pg_migrated_template) as url:
        yield url


@pytest.fixture
def pg_url(postgres: PostgresServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of an empty database of its own for one test, dropped after it."""
    with postgres.database(request.node.name) as url:
        yield url


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    """The store engine this test runs on ("sqlite" unless parametrised by the suite)."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def database_url(engine: str, request: pytest.FixtureRequest) -> str | None:
    """None for SQLite; else the URL of a fresh migrated PostgreSQL database for this test."""
    if engine == "sqlite":
        return None
    return request.getfixturevalue("pg_migrated_url")


@pytest.fixture
def settings(request: pytest.FixtureRequest, tmp_path: Path, database_url: str | None) -> Settings:
    """Settings for a fresh data dir; background schedulers off unless a test turns them on.

    Tests marked ``loopback_push`` also admit the loopback fake push service (plain http on
    127.0.0.1), which the push endpoint policy refuses otherwise.
    """
    allowed = ALLOWED if request.node.get_closest_marker("loopback_push") else ()
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        scheduler=False,
        push_allowed_hosts=allowed,
    )


@pytest.fixture
def fake_push() -> Iterator[FakePushService]:
    """A running loopback push service that decrypts what it receives."""
    with FakePushService() as service:
        yield service


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A loopback OpenAI-compatible chat-completions server answering from a script."""
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def fake_embed() -> Iterator[FakeEmbeddings]:
    """A loopback embeddings server a test can take down or hold mid-request."""
    with FakeEmbeddings() as fake:
        yield fake


@pytest.fixture
def server(settings: Settings) -> Iterator[LiveServer]:
    """A running server on 127.0.0.1 with an empty store."""
    with running(settings) as live:
        yield live


@pytest.fixture
def admin_key(server: LiveServer) -> str:
    """An admin key made by `credence keys create`."""
    return cli_key(server.settings, "admin", label="tests")


@pytest.fixture
def admin(server: LiveServer, admin_key: str) -> Iterator[httpx.Client]:
    """An httpx client authenticated as admin."""
    with server.client(admin_key) as client:
        yield client
