"""Contention: 200 concurrent writes on two processes sharing one store, 20 clients hanging up."""

from __future__ import annotations

import asyncio
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
    Response,
    ServerProcess,
    seed_pending,
)

SEED = 20261209
WRITES = 200
DISCONNECTS = 20
BATCH = 20  # episodes per batch write; a batch is all or nothing

pytestmark = pytest.mark.slow


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}


def _batch_request(agent_id: str, key: str, session: str) -> Request:
    episodes = [
        {"session_id": session, "summary": f"step {n} of {session}: resized the upload"}
        for n in range(BATCH)
    ]
    body = json.dumps({"episodes": episodes}).encode()
    return Request("POST", f"/api/v1/agents/{agent_id}/episodes/batch", _auth(key), body)


def _keep_request(belief_id: str, key: str) -> Request:
    headers = {**_auth(key), "If-Match": '"1"', "Idempotency-Key": f"contention-{belief_id}"}
    return Request("POST", f"/api/v1/beliefs/{belief_id}/keep", headers)


def _proposal_request(agent_id: str, key: str, number: int) -> Request:
    proposals = [
        {
            "op": "add",
            "belief": f"Contention lesson {number}.{part}: {word} before step {number * 7 + part}",
            "confidence": 0.6,
        }
        for part, word in enumerate(("measure", "retry", "cache"))
    ]
    body = json.dumps({"proposals": proposals}).encode()
    return Request("POST", f"/api/v1/agents/{agent_id}/memory/beliefs/proposals", _auth(key), body)


async def _send(port: int, request: Request) -> Response:
    connection = Connection("127.0.0.1", port)
    try:
        return await connection.send(request)
    finally:
        await connection.close()


async def _hang_up(port: int, request: Request, mid_body: bool) -> None:
    """Send a request (all of it, or headers and half the body) and close without reading."""
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    raw = request.encode(f"127.0.0.1:{port}")
    if mid_body:
        head_end = raw.index(b"\r\n\r\n") + 4
        raw = raw[: head_end + max(1, (len(raw) - head_end) // 2)]
    writer.write(raw)
    await writer.drain()
    await asyncio.sleep(random.Random(len(raw)).uniform(0, 0.05))
    writer.transport.abort()  # RST, not a polite FIN: the server sees the peer vanish


def _store_invariants(database: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(database, timeout=10)
    conn.row_factory = sqlite3.Row
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.execute("INSERT INTO episodes_fts(episodes_fts) VALUES ('integrity-check')")
    mismatched = conn.execute(
        "SELECT b.id FROM beliefs b JOIN audit a ON a.seq ="
        " (SELECT MAX(seq) FROM audit WHERE belief_id = b.id)"
        " WHERE a.version != b.version OR a.after_status != b.status"
    ).fetchall()
    assert mismatched == [], "belief rows disagree with their last audit row"
    unaudited = conn.execute(
        "SELECT COUNT(*) FROM beliefs WHERE id NOT IN (SELECT belief_id FROM audit)"
    ).fetchone()[0]
    assert unaudited == 0
    return conn


def test_concurrent_writes_with_hang_ups_on_two_processes(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    seeded = seed_pending(data_dir, agents=2, per_agent=60)
    key = seeded.admin_key
    rng = random.Random(SEED)
    servers = [
        ServerProcess(data_dir, UNLIMITED_RATE_ENV, log_path=tmp_path / f"server-{n}.log")
        for n in range(2)
    ]
    for server in servers:
        server.start()
    try:
        pending = [belief_id for belief_id, _ in seeded.pending]
        writes: list[tuple[str, str, Request]] = []  # (kind, subject, request)
        for number in range(80):
            writes.append(("keep", pending[number], _keep_request(pending[number], key)))
        for number in range(80):
            session = f"contention-{number}"
            agent = seeded.agents[number % 2]
            writes.append(("batch", session, _batch_request(agent, key, session)))
        for number in range(WRITES - len(writes)):
            agent = seeded.agents[number % 2]
            writes.append(("propose", agent, _proposal_request(agent, key, number)))
        hang_ups: list[tuple[str, str, Request, bool]] = []
        for number in range(DISCONNECTS // 2):
            session = f"hangup-{number}"
            request = _batch_request(seeded.agents[0], key, session)
            hang_ups.append(("batch", session, request, number % 2 == 0))
            belief_id = pending[100 + number]
            hang_ups.append(("keep", belief_id, _keep_request(belief_id, key), False))
        rng.shuffle(writes)

        async def storm() -> list[Response | BaseException]:
            ports = [server.port for server in servers]
            answered = [_send(ports[n % 2], request) for n, (_, _, request) in enumerate(writes)]
            dropped = [
                _hang_up(ports[n % 2], request, mid_body)
                for n, (_, _, request, mid_body) in enumerate(hang_ups)
            ]
            results = await asyncio.gather(*answered, *dropped, return_exceptions=True)
            return results[: len(writes)]

        responses = asyncio.run(storm())
        failures = [
            (kind, subject, r if isinstance(r, BaseException) else (r.status, r.body[:300]))
            for (kind, subject, _), r in zip(writes, responses, strict=True)
            if isinstance(r, BaseException) or r.status not in (200, 201)
        ]
        assert failures == [], failures[:5]

        # no stuck transaction: both processes still write at once, and so can a third party
        for server in servers:
            with httpx.Client(base_url=server.url, headers=_auth(key), timeout=5) as client:
                assert client.get("/readyz").status_code == 200
                extra = client.post(
                    "/api/v1/agents/bench-00/episodes", json={"session_id": "after", "summary": "x"}
                )
                assert extra.status_code == 201, extra.text
        outsider = sqlite3.connect(data_dir / "credence.sqlite3", timeout=2, isolation_level=None)
        outsider.execute("BEGIN IMMEDIATE")
        outsider.execute("ROLLBACK")
        outsider.close()
    finally:
        for server in servers:
            server.stop()

    logs = "\n".join(server.log_text() for server in servers)
    assert "database is locked" not in logs
    assert "Traceback" not in logs, logs[-3000:]
    assert "unhandled error" not in logs

    conn = _store_invariants(data_dir / "credence.sqlite3")
    try:
        counts = dict(
            conn.execute(
                "SELECT session_id, COUNT(*) FROM episodes WHERE session_id LIKE 'contention-%'"
                " OR session_id LIKE 'hangup-%' GROUP BY session_id"
            ).fetchall()
        )
        for kind, subject, _ in writes:
            if kind == "batch":
                assert counts.get(subject) == BATCH, f"{subject}: {counts.get(subject)} rows"
        for kind, subject, _, _ in hang_ups:
            if kind == "batch":
                assert counts.get(subject, 0) in (0, BATCH), f"partial batch {subject}"
        statuses = dict(conn.execute("SELECT id, status FROM beliefs").fetchall())
        for kind, subject, _ in writes:
            if kind == "keep":
                assert statuses[subject] == "active"
        proposed = conn.execute(
            "SELECT COUNT(*) FROM beliefs WHERE content LIKE 'Contention lesson %'"
        ).fetchone()[0]
        accepted = sum(
            sum(1 for item in json.loads(r.body)["results"] if item["accepted"])
            for (kind, _, _), r in zip(writes, responses, strict=True)
            if kind == "propose"
        )
        assert proposed == accepted
    finally:
        conn.close()
