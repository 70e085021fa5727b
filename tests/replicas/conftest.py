"""Fixtures of the multi-replica suite: a throwaway cluster and three `credence serve` replicas."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from harness.pg import PostgresServer, PostgresUnavailable, refuse_or_skip, throwaway_postgres

from tests.replicas.harness import ReplicaSet


@pytest.fixture(scope="package")
def cluster() -> Iterator[PostgresServer]:
    """A cluster of the suite's own: its tests stop and crash it, which no other test may see.

    Synchronous commit stays on, so a crash loses no commit a replica acknowledged.
    """
    try:
        with throwaway_postgres(durable=True) as server:
            yield server
    except PostgresUnavailable as exc:
        refuse_or_skip(f"PostgreSQL unavailable: {exc}")


@pytest.fixture(scope="package")
def replica_set(
    cluster: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplicaSet]:
    """Three replicas on one fresh database, shared by the suite (starting them is the cost)."""
    with cluster.database("replicas") as url:
        group = ReplicaSet(tmp_path_factory.mktemp("replicas"), url)
        try:
            group.start()
            yield group
        finally:
            group.close()


@pytest.fixture
def replicas(replica_set: ReplicaSet, cluster: PostgresServer) -> ReplicaSet:
    """The suite's replicas, every one serving: a test that killed one left it restarting."""
    cluster.ensure_running()
    for replica in replica_set:
        if not replica.alive():
            replica.launch()
    for replica in replica_set:
        replica.wait_healthy()
    return replica_set


@pytest.fixture(scope="package")
def admin_key(replica_set: ReplicaSet) -> str:
    """An admin key made by the CLI with --database-url, valid on every replica."""
    return replica_set.key("admin", label="replica suite")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """A failing test's report (or fixture's) carries every running replica's log tail."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for group in ReplicaSet.open_sets:
            report.sections.append(("replica logs", group.logs()))
