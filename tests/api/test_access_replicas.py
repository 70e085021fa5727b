"""Keys, pairing codes, idempotency and rate limits hold across replicas on one database."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from credence.access.keys import create_key
from credence.access.pairing import PairingRefused, create_pairing_code, redeem_pairing_code
from credence.cli import main as credence_main
from credence.clock import rfc3339, system_clock
from credence.db import idempotency
from credence.db.engine import Connection
from credence.db.pgstore import PostgresStore
from credence.settings import Settings
from tests.helpers import decide, make_agent, pending_belief
from tests.livesrv import LiveServer, cli_key, running, store_flags

REVOCATION_BOUND_S = 1.0


def cli(*argv: str) -> tuple[int, str]:
    """Run a `credence` command in a thread of its own; (exit code, stdout)."""
    out = io.StringIO()
    codes: list[int] = []

    def run() -> None:
        with contextlib.redirect_stdout(out):
            codes.append(credence_main(list(argv)))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return codes[0], out.getvalue()


@contextlib.contextmanager
def replicas(
    url: str, tmp_path: Path, count: int = 2, **overrides: object
) -> Iterator[list[LiveServer]]:
    """``count`` servers, each with its own data dir, on the one PostgreSQL database ``url``."""
    with contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(
                running(
                    Settings(
                        data_dir=tmp_path / f"replica-{n}",
                        database_url=url,
                        scheduler=False,
                        **overrides,  # type: ignore[arg-type]
                    ),
                    components=[],
                )
            )
            for n in range(count)
        ]
        yield servers


def _seconds_until_refused(client: httpx.Client) -> float:
    started = time.monotonic()
    while client.get("/api/v1/me").status_code == 200:
        assert time.monotonic() - started < 5, "the revoked key still works after 5 s"
        time.sleep(0.02)
    return time.monotonic() - started


def test_a_key_revoked_by_the_cli_is_refused_within_a_second(server, admin) -> None:
    secret = cli_key(server.settings, "reviewer", label="phone")
    with server.client(secret) as reviewer:
        for _ in range(3):  # cached by now
            assert reviewer.get("/api/v1/me").status_code == 200
        key_id = reviewer.get("/api/v1/me").json()["key_id"]
        code, out = cli("keys", "revoke", key_id, *store_flags(server.settings))
        assert code == 0 and f"Revoked {key_id}" in out
        assert _seconds_until_refused(reviewer) < REVOCATION_BOUND_S
    code, out = cli("keys", "list", *store_flags(server.settings))
    assert code == 0 and key_id in out and "revoked" in out


def test_a_key_revoked_on_one_replica_is_refused_on_the_other_within_a_second(
    pg_migrated_url: str, tmp_path: Path
) -> None:
    with replicas(pg_migrated_url, tmp_path) as (one, other):
        admin_key = cli_key(one.settings, "admin")
        with one.client(admin_key) as admin:
            created = admin.post("/api/v1/keys", json={"scope": "reviewer", "label": "phone"})
            assert created.status_code == 201, created.text
            secret, key_id = created.json()["key"], created.json()["info"]["id"]
            with other.client(secret) as reviewer:
                for _ in range(3):
                    assert reviewer.get("/api/v1/me").status_code == 200
                assert admin.post(f"/api/v1/keys/{key_id}/revoke").status_code == 200
                assert _seconds_until_refused(reviewer) < REVOCATION_BOUND_S
            with one.client(secret) as same_replica:
                assert same_replica.get("/api/v1/me").status_code == 401


def test_the_cli_manages_keys_on_postgresql(pg_migrated_url: str, tmp_path: Path) -> None:
    flags = ["--data", str(tmp_path / "cli"), "--database-url", pg_migrated_url]
    code, out = cli("keys", "create", "--scope", "admin", "--label", "ops", *flags)
    assert code == 0 and out.strip().splitlines()[-1].startswith("crd_")
    code, out = cli("keys", "create", "--scope", "agent", "--agent", "ghost", *flags)
    assert code == 2
    code, out = cli("keys", "list", *flags)
    assert code == 0 and "admin" in out and "ops" in out and "active" in out
    key_id = out.split()[0]
    assert cli("keys", "revoke", key_id, *flags)[0] == 0
    assert cli("keys", "revoke", "key_nope", *flags)[0] == 2
    assert "revoked" in cli("keys", "list", *flags)[1]
    code, out = cli("pair", "--label", "phone", *flags)
    assert code == 0 and "?pair=" in out.strip().splitlines()[-1]
    assert cli("pair", "--agent", "ghost", *flags)[0] == 2


def test_a_pairing_code_works_once_across_replicas(pg_migrated_url: str, tmp_path: Path) -> None:
    with replicas(pg_migrated_url, tmp_path) as servers:
        admin_key = cli_key(servers[0].settings, "admin")
        with servers[0].client(admin_key) as admin:
            codes = [admin.post("/api/v1/pairing-codes", json={}).json()["code"] for _ in range(4)]
        for code in codes:
            barrier = threading.Barrier(len(servers))
            statuses: list[int] = []

            def redeem(
                server: LiveServer, code: str = code, barrier=barrier, statuses=statuses
            ) -> None:
                with server.client() as phone:
                    barrier.wait()
                    statuses.append(phone.post("/api/v1/pair", json={"code": code}).status_code)

            threads = [threading.Thread(target=redeem, args=(s,)) for s in servers]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert sorted(statuses) == [201, 410], statuses


async def _open(url: str) -> PostgresStore:
    store = PostgresStore(url)
    await store.open()
    return store


def test_concurrent_redemptions_on_two_stores_mint_one_key(pg_migrated_url: str) -> None:
    async def scenario() -> tuple[list[object], int]:
        one, other = await _open(pg_migrated_url), await _open(pg_migrated_url)
        try:

            async def mint(conn: Connection) -> tuple[str, str]:
                return await create_pairing_code(
                    conn, agents=None, label="phone", clock=system_clock
                )

            code, _ = await one.write(mint)

            async def redeem(conn: Connection) -> tuple[str, dict]:
                return await redeem_pairing_code(conn, code, system_clock)

            outcomes = await asyncio.gather(
                *(store.write(redeem) for store in (one, other, one, other)),
                return_exceptions=True,
            )
            keys = await one.fetchone("SELECT COUNT(*) AS n FROM api_keys")
            return outcomes, int(keys["n"])
        finally:
            await one.close()
            await other.close()

    outcomes, keys = asyncio.run(scenario())
    won = [o for o in outcomes if isinstance(o, tuple)]
    refused = [o for o in outcomes if isinstance(o, PairingRefused)]
    assert len(won) == 1 and len(refused) == 3, outcomes
    assert all("already used" in r.detail for r in refused)
    assert keys == 1


def test_a_retried_request_on_another_store_waits_for_and_replays_the_first(
    pg_migrated_url: str,
) -> None:
    """Two replicas get the same Idempotency-Key at once: one applies, the other replays."""
    applied: list[str] = []

    async def scenario() -> list[tuple[str, idempotency.Remembered]]:
        one, other = await _open(pg_migrated_url), await _open(pg_migrated_url)
        try:

            def handler(name: str, pause: float):
                async def work(conn: Connection) -> tuple[str, idempotency.Remembered]:
                    # The decision path's own lookup: hold and find sent in one pipeline.
                    *_, rows = await conn.rows_together(
                        idempotency.lookup(conn, "key_1", "retry-1")
                    )
                    seen = idempotency.found(rows)
                    if seen is not None:
                        return "replayed", seen
                    await asyncio.sleep(pause)  # the decision takes a while
                    applied.append(name)
                    answer = idempotency.Remembered(
                        fingerprint="f1",
                        status_code=200,
                        body=json.dumps({"by": name}).encode(),
                        headers={"ETag": '"2"'},
                    )
                    stored = await idempotency.remember(
                        conn, "key_1", "retry-1", answer, rfc3339(system_clock())
                    )
                    assert stored
                    return "applied", answer

                return work

            async def later(store: PostgresStore, work) -> tuple[str, idempotency.Remembered]:
                await asyncio.sleep(0.05)
                return await store.write(work)

            # Both decisions take a while, so whichever replica holds the key first makes the
            # other wait; "other" usually starts second, but on a loaded machine it may not.
            return list(
                await asyncio.gather(
                    one.write(handler("one", 0.3)), later(other, handler("other", 0.3))
                )
            )
        finally:
            await one.close()
            await other.close()

    outcomes = dict(asyncio.run(scenario()))
    assert sorted(outcomes) == ["applied", "replayed"], outcomes
    assert len(applied) == 1
    assert outcomes["replayed"] == outcomes["applied"]
    assert json.loads(outcomes["replayed"].body) == {"by": applied[0]}


def test_a_keep_retried_on_another_replica_replays_the_answer(
    pg_migrated_url: str, tmp_path: Path
) -> None:
    with replicas(pg_migrated_url, tmp_path) as (one, other):
        admin_key = cli_key(one.settings, "admin")
        with one.client(admin_key) as first, other.client(admin_key) as second:
            make_agent(first, "coder")
            belief = pending_belief(first)
            kept = decide(first, belief, "keep", **{"Idempotency-Key": "phone-retry-1"})
            assert kept.status_code == 200, kept.text
            again = decide(second, belief, "keep", **{"Idempotency-Key": "phone-retry-1"})
            assert again.status_code == 200, again.text
            assert again.json() == kept.json()


def test_the_rate_limit_holds_across_replicas(pg_migrated_url: str, tmp_path: Path) -> None:
    with replicas(pg_migrated_url, tmp_path, rate_limit_per_minute=6) as servers:
        admin_key = cli_key(servers[0].settings, "admin")
        clients = [server.client(admin_key) for server in servers]
        try:
            statuses = [
                clients[n % 2].post("/api/v1/agents", json={"id": f"a{n}", "name": "A"})
                for n in range(12)
            ]
        finally:
            for client in clients:
                client.close()
    codes = [response.status_code for response in statuses]
    assert codes.count(201) == 6 and codes.count(429) == 6, codes
    assert codes[:6] == [201] * 6
    refused = statuses[6]
    assert 1 <= int(refused.headers["retry-after"]) <= 10
    assert "rate limit" in refused.json()["detail"]


@pytest.mark.parametrize("scope", ["reviewer", "agent"])
def test_keys_made_in_the_domain_are_refused_for_unknown_agents_on_postgresql(
    pg_migrated_url: str, scope: str
) -> None:
    async def attempt() -> str:
        store = await _open(pg_migrated_url)
        try:

            async def work(conn: Connection) -> object:
                return await create_key(
                    conn, scope=scope, agents=["ghost"], label="", clock=system_clock
                )

            with pytest.raises(Exception) as caught:
                await store.write(work)
            return type(caught.value).__name__
        finally:
            await store.close()

    assert asyncio.run(attempt()) == "NotFound"


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_key_cache_polls_the_change_counter_not_the_key_per_request(settings) -> None:
    """Cached lookups cost one counter read per poll interval; a revocation lands at the next."""
    from credence.access.keys import POLL_SECONDS, KeyRing, revoke_key
    from credence.db import make_store

    async def scenario() -> None:
        writer = make_store(settings.database_url, settings.database_path)
        reader = make_store(settings.database_url, settings.database_path)
        await writer.open()
        await reader.open()
        try:

            async def mint(conn: Connection) -> tuple[str, dict]:
                return await create_key(
                    conn, scope="reviewer", agents=None, label="", clock=system_clock
                )

            secret, info = await writer.write(mint)
            clock = Clock()
            ring = KeyRing(reader, monotonic=clock)
            reads = 0
            real_read = reader.read

            async def counted(work, *, inline=False):
                nonlocal reads
                reads += 1
                return await real_read(work, inline=inline)

            reader.read = counted  # type: ignore[method-assign]
            assert (await ring.resolve(secret)).key_id == info["id"]
            first = reads  # one counter poll and one key lookup
            for _ in range(50):
                assert await ring.resolve(secret) is not None
            assert reads == first  # within the poll interval: no database trip at all
            await revoke_key(writer, info["id"], system_clock)  # "another replica"
            assert await ring.resolve(secret) is not None  # not yet polled
            clock.now += POLL_SECONDS
            assert await ring.resolve(secret) is None
            assert await ring.resolve("crd_unknown") is None
        finally:
            await reader.close()
            await writer.close()

    asyncio.run(scenario())
