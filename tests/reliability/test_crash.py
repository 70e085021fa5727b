"""Crash safety: SIGKILL a server mid-decisions, again and again; nothing it answered is lost."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
from pathlib import Path

import httpx
import pytest
from harness.httpload import (
    UNLIMITED_RATE_ENV,
    Connection,
    Request,
    ServerProcess,
    seed_pending,
)

ROUNDS = 20
WORKERS = 8
SEED = 20261208
ACTIONS = {"keep": ("kept", "active"), "forget": ("forgotten", "forgotten")}

pytestmark = pytest.mark.slow


class Confirmed:
    """A decision the server answered 200 to: it must survive any crash after that answer."""

    def __init__(self, belief_id: str, action: str, idem_key: str, body: dict) -> None:
        self.belief_id = belief_id
        self.action = action
        self.idem_key = idem_key
        self.body = body


async def _decide_until_killed(
    server: ServerProcess,
    supply: list[tuple[str, int]],
    admin_key: str,
    rng: random.Random,
    kill_at: int,
    confirmed: list[Confirmed],
) -> int:
    """Decide on fresh pending beliefs from WORKERS connections; SIGKILL the server mid-way.

    The kill lands a random few milliseconds after the ``kill_at``-th answer of the round, with
    every connection still sending: a point in the stream rather than a point in wall time, so
    a fast machine does not use up the pending beliefs. Returns how many requests were in
    flight (sent, unanswered) when the kill landed.
    """
    in_flight = 0
    answered = 0
    stop = asyncio.Event()
    due = asyncio.Event()

    async def worker() -> None:
        nonlocal in_flight, answered
        connection = Connection("127.0.0.1", server.port)
        try:
            await connection.open()
            while not stop.is_set() and supply:
                belief_id, version = supply.pop()
                action = "keep" if rng.random() < 0.7 else "forget"
                idem_key = f"crash-{belief_id}"
                body = json.dumps({"reason": "crash test"}).encode() if action == "forget" else b""
                headers = {
                    "Authorization": f"Bearer {admin_key}",
                    "If-Match": f'"{version}"',
                    "Idempotency-Key": idem_key,
                    "Content-Type": "application/json",
                }
                request = Request("POST", f"/api/v1/beliefs/{belief_id}/{action}", headers, body)
                in_flight += 1
                try:
                    response = await connection.send(request)
                except (OSError, asyncio.IncompleteReadError):
                    return  # the server died with this request unanswered
                in_flight -= 1
                assert response.status == 200, response.body
                confirmed.append(Confirmed(belief_id, action, idem_key, json.loads(response.body)))
                answered += 1
                if answered >= kill_at:
                    due.set()
        finally:
            await connection.close()

    async def killer() -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(due.wait(), timeout=30)
        await asyncio.sleep(rng.uniform(0, 0.01))
        server.process.kill()  # SIGKILL: no shutdown code, no final commit, no flush
        stop.set()

    await asyncio.gather(killer(), *(worker() for _ in range(WORKERS)))
    server.kill()  # reap
    return in_flight


def _check_store(database: Path) -> dict[str, sqlite3.Row]:
    """integrity_check is ok and every belief's row agrees with its last audit row."""
    conn = sqlite3.connect(database, timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        beliefs = {r["id"]: r for r in conn.execute("SELECT id, status, version FROM beliefs")}
        last_audit = {
            r["belief_id"]: r
            for r in conn.execute(
                "SELECT belief_id, action, after_status, version FROM audit"
                " WHERE seq IN (SELECT MAX(seq) FROM audit GROUP BY belief_id)"
            )
        }
        assert beliefs.keys() == last_audit.keys()
        for belief_id, belief in beliefs.items():
            audit = last_audit[belief_id]
            assert (audit["version"], audit["after_status"]) == (
                belief["version"],
                belief["status"],
            ), f"{belief_id}: row and audit disagree (a partial decision)"
        idempotency = {r["idem_key"] for r in conn.execute("SELECT idem_key FROM idempotency")}
        decided = {b for b, row in beliefs.items() if row["version"] > 1}
        assert {f"crash-{b}" for b in decided} == idempotency, "decision without its replay row"
        return beliefs
    finally:
        conn.close()


def _check_confirmed(
    server: ServerProcess, admin_key: str, database: Path, confirmed: list[Confirmed]
) -> None:
    beliefs = _check_store(database)
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=30
    ) as client:
        verification = client.get("/api/v1/audit/verify").json()
        assert verification["ok"] is True, verification
        assert verification["first_broken"] is None
        for decision in confirmed:
            _, status = ACTIONS[decision.action]
            row = beliefs[decision.belief_id]
            assert (row["status"], row["version"]) == (status, decision.body["version"]), (
                f"a decision answered 200 was lost: {decision.belief_id} {decision.action}"
            )
        # a replay of an answered decision returns the first answer and applies nothing twice
        for decision in random.Random(len(confirmed)).sample(confirmed, min(5, len(confirmed))):
            replay = client.post(
                f"/api/v1/beliefs/{decision.belief_id}/{decision.action}",
                json={"reason": "crash test"} if decision.action == "forget" else None,
                headers={"If-Match": '"1"', "Idempotency-Key": decision.idem_key},
            )
            assert replay.status_code == 200
            assert replay.json() == decision.body


def test_sigkill_at_random_points_never_loses_an_answered_decision(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    seeded = seed_pending(data_dir, agents=8, per_agent=400)
    supply = list(reversed(seeded.pending))
    database = data_dir / "credence.sqlite3"
    rng = random.Random(SEED)
    server = ServerProcess(data_dir, UNLIMITED_RATE_ENV)
    confirmed: list[Confirmed] = []
    killed_in_flight = []
    try:
        for _ in range(ROUNDS):
            server.start()
            _check_confirmed(server, seeded.admin_key, database, confirmed)
            kill_at = rng.randint(5, 100)
            killed_in_flight.append(
                asyncio.run(
                    _decide_until_killed(server, supply, seeded.admin_key, rng, kill_at, confirmed)
                )
            )
            assert supply, "ran out of pending beliefs: seed more"
        server.start()
        _check_confirmed(server, seeded.admin_key, database, confirmed)
    finally:
        server.stop()
    log = server.log_text()
    assert "Traceback" not in log, log[-3000:]
    assert "database disk image is malformed" not in log
    # the test is only worth something if kills landed among work in progress
    assert len(confirmed) >= ROUNDS * 5
    assert sum(1 for n in killed_in_flight if n > 0) >= ROUNDS // 2, killed_in_flight
