"""`credence db copy`: a real installation made by the app, moved into a real empty PostgreSQL."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from credence.cli import main
from credence.db.pgstore import PostgresStore
from credence.memory.lifecycle import audit
from credence.settings import Settings
from tests.helpers import decide, make_agent, pending_belief, post_episode, propose
from tests.livesrv import cli_key, running
from tests.notify.pushserver import ALLOWED

SUBS = "/api/v1/push/subscriptions"


def _installation(tmp_path: Path, fake_push: Any) -> tuple[Settings, str, list[dict[str, Any]]]:
    """A SQLite installation with agents, episodes, decided beliefs, a supersede and a device."""
    settings = Settings(data_dir=tmp_path / "sqlite", scheduler=False, push_allowed_hosts=ALLOWED)
    with running(settings) as server:
        key = cli_key(settings, "admin", label="ops")
        with server.client(key) as admin:
            make_agent(admin, "coder")
            make_agent(admin, "writer")
            for n in range(12):
                post_episode(admin, "coder" if n % 3 else "writer", summary=f'episode {n} ✓ "q"')
            kept = decide(admin, pending_belief(admin, text="Use yarn for the frontend"), "keep")
            old = kept.json()
            (result,) = propose(
                admin,
                "coder",
                {
                    "op": "add",
                    "belief": "Use bun for the frontend",
                    "confidence": 0.8,
                    "review_reasons": [f"contradicts:{old['id']}"],
                },
            )
            new = admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()
            retired = decide(admin, new, "keep", {"retire": [old["id"]]})
            assert retired.status_code == 200, retired.text
            # A supersede proposal kept with retire: the two rows refer to each other.
            first = decide(admin, pending_belief(admin, text="Deploy with Ansible"), "keep").json()
            (result,) = propose(
                admin,
                "coder",
                {
                    "op": "supersede",
                    "target_belief_id": first["id"],
                    "belief": "Deploy with Nix",
                    "confidence": 0.9,
                },
            )
            successor = admin.get(f"/api/v1/beliefs/{result['belief_id']}").json()
            assert successor["target_belief_id"] == first["id"]
            kept = decide(admin, successor, "keep", {"retire": [first["id"]]})
            assert kept.status_code == 200, kept.text
            assert (
                admin.get(f"/api/v1/beliefs/{first['id']}").json()["superseded_by"]
                == (successor["id"])
            )
            forgotten = pending_belief(admin, "writer", text="Tabs\tand\nnewlines \\ end")
            assert decide(admin, forgotten, "forget", {"reason": "no"}).status_code == 200
            edited = pending_belief(admin, text="Ship on Fridays")
            assert (
                decide(admin, edited, "edit", {"content": "Never ship on Fridays"}).status_code
                == 200
            )
            pending_belief(admin, text="Cache the PDF index")
            subscribed = admin.post(SUBS, json=fake_push.subscription("phone"))
            assert subscribed.status_code in (200, 201), subscribed.text
            beliefs = admin.get("/api/v1/beliefs", params={"limit": 100}).json()["items"]
            assert admin.get("/api/v1/audit/verify").json()["ok"] is True
    return settings, key, beliefs


def _sqlite_rows(path: Path, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(path)
    try:
        cols = ", ".join(f'"{c}"' for c in columns)
        return sorted(db.execute(f'SELECT {cols} FROM "{table}"').fetchall(), key=repr)
    finally:
        db.close()


def _pg_rows(url: str, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        cols = ", ".join(f'"{c}"' for c in columns)
        return sorted(conn.execute(f'SELECT {cols} FROM "{table}"').fetchall(), key=repr)


def _tables(path: Path) -> dict[str, list[str]]:
    db = sqlite3.connect(path)
    try:
        names = [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                " AND name NOT LIKE '%fts%' AND name <> 'schema_version'"
            )
        ]
        return {n: [r[1] for r in db.execute(f'PRAGMA table_info("{n}")')] for n in names}
    finally:
        db.close()


def test_copy_moves_every_row_verifies_the_chain_and_refuses_a_second_copy(
    tmp_path: Path, pg_url: str, fake_push: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    settings, _, beliefs = _installation(tmp_path, fake_push)
    path = settings.database_path

    assert main(["db", "copy", "--to", pg_url, "--data", str(settings.data_dir)]) == 0
    out = capsys.readouterr().out
    assert "audit chain verified" in out and "skipped (SQLite only" in out

    tables = _tables(path)
    assert {"agents", "episodes", "beliefs", "audit", "push_subscriptions"} <= set(tables)
    counts = {}
    for table, columns in tables.items():
        mine, theirs = _sqlite_rows(path, table, columns), _pg_rows(pg_url, table, columns)
        assert mine == theirs, table  # byte for byte, every row
        counts[table] = len(mine)
    assert counts["episodes"] == 12 and counts["push_subscriptions"] == 1
    assert counts["audit"] >= 10 and counts["belief_change_log"] >= len(beliefs)

    async def on_postgres() -> tuple[Any, ...]:
        store = PostgresStore(pg_url)
        await store.open()
        try:
            chain = await audit.verify(store)
            episode_seq = await store.write(
                lambda conn: conn.one(
                    "INSERT INTO belief_change_log(agent_id, belief_id) VALUES (?, ?)"
                    " RETURNING seq",
                    ("coder", beliefs[0]["id"]),
                )
            )
            copied = await store.fetchall("SELECT id, status, version FROM beliefs ORDER BY id")
            return chain, episode_seq["seq"], copied
        finally:
            await store.close()

    chain, next_seq, copied = asyncio.run(on_postgres())
    assert chain == (True, counts["audit"], None)
    assert next_seq == counts["belief_change_log"] + 1  # the identity continues after the copy
    assert [
        (b["id"], b["status"], b["version"]) for b in sorted(beliefs, key=lambda b: b["id"])
    ] == [tuple(row) for row in copied]

    capsys.readouterr()
    assert main(["db", "copy", "--to", pg_url, "--data", str(settings.data_dir)]) == 2
    err = capsys.readouterr().err
    assert "not empty" in err and "agents" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert _pg_rows(pg_url, "audit", ["seq"]) == _sqlite_rows(path, "audit", ["seq"])


def test_the_app_on_postgresql_serves_the_copied_installation(
    tmp_path: Path, pg_url: str, fake_push: Any
) -> None:
    settings, key, beliefs = _installation(tmp_path, fake_push)
    assert main(["db", "copy", "--to", pg_url, "--data", str(settings.data_dir)]) == 0
    counts = {"audit": len(_sqlite_rows(settings.database_path, "audit", ["seq"]))}
    # The app on PostgreSQL serves the copied installation with the copied key.
    on_pg = Settings(data_dir=tmp_path / "replica", database_url=pg_url, scheduler=False)
    with running(on_pg) as server, server.client(key) as admin:
        served = admin.get("/api/v1/beliefs", params={"limit": 100})
        assert served.status_code == 200, served.text
        assert served.json()["items"] == beliefs
        assert admin.get("/api/v1/audit/verify").json() == {
            "ok": True,
            "rows": counts["audit"],
            "first_broken": None,
        }


def test_copy_refuses_a_target_with_rows_before_changing_it(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    assert main(["migrate", "--data", str(data)]) == 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE agents (id TEXT PRIMARY KEY)")
        conn.execute("INSERT INTO agents VALUES ('someone')")
    capsys.readouterr()
    assert main(["db", "copy", "--to", pg_url, "--data", str(data)]) == 2
    assert "not empty (agents hold rows)" in capsys.readouterr().err
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('schema_migrations')").fetchone() == (None,)


def test_copy_into_a_migrated_empty_database_and_of_an_empty_installation(
    tmp_path: Path, pg_migrated_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    assert main(["migrate", "--data", str(data)]) == 0
    assert main(["db", "copy", "--to", pg_migrated_url, "--data", str(data)]) == 0
    assert "verified (0 rows" in capsys.readouterr().out
    with psycopg.connect(pg_migrated_url) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM store_state")}
        secrets = conn.execute("SELECT name, value FROM installation_secrets ORDER BY name")
        copied = [(n, bytes(v)) for n, v in secrets.fetchall()]
    db = sqlite3.connect(data / "credence.sqlite3")
    try:
        assert (
            copied
            == db.execute("SELECT name, value FROM installation_secrets ORDER BY name").fetchall()
        )
        assert names == {r[0] for r in db.execute("SELECT name FROM store_state")}
    finally:
        db.close()


def test_copy_needs_an_installation_and_a_postgresql_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "copy", "--to", "postgresql://u@127.0.0.1/x", "--data", str(tmp_path)]) == 2
    assert "no Credence data" in capsys.readouterr().err
    assert main(["db", "copy", "--to", "sqlite:///x", "--data", str(tmp_path)]) == 2
    assert "--to must be a postgresql://" in capsys.readouterr().err


def test_pg_dump_and_pg_restore_into_a_new_database_keep_the_chain(
    tmp_path: Path,
    pg_url: str,
    postgres: Any,
    fake_push: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's backup: pg_dump, pg_restore into an empty database, `credence audit verify`."""
    settings, _, _ = _installation(tmp_path, fake_push)
    assert main(["db", "copy", "--to", pg_url, "--data", str(settings.data_dir)]) == 0
    dump = tmp_path / "credence.dump"
    tool = postgres.bindir
    done = subprocess.run(
        [str(tool / "pg_dump"), "--format=custom", f"--file={dump}", pg_url],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    with postgres.database("restored") as restored:
        done = subprocess.run(
            [str(tool / "pg_restore"), "--no-owner", f"--dbname={restored}", str(dump)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        capsys.readouterr()
        assert main(["audit", "verify", "--database-url", restored]) == 0
        assert '"ok": true' in capsys.readouterr().out
        for table, columns in _tables(settings.database_path).items():
            assert _pg_rows(restored, table, columns) == _pg_rows(pg_url, table, columns), table


def _tampered(tmp_path: Path, sql: str, params: tuple[Any, ...] = ()) -> Path:
    data = tmp_path / "data"
    assert main(["migrate", "--data", str(data)]) == 0
    db = sqlite3.connect(data / "credence.sqlite3")
    try:
        db.executescript("DROP TRIGGER IF EXISTS audit_no_update;")
        db.execute(sql, params)
        db.commit()
    finally:
        db.close()
    return data


def test_a_broken_source_chain_is_refused_before_the_target_is_touched(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _tampered(
        tmp_path,
        "INSERT INTO audit(seq, belief_id, agent_id, action, actor, at, before_status,"
        " after_status, before_hash, after_hash, version, detail, prev_hash, row_hash)"
        " VALUES (1, 'b', 'a', 'proposed', 'x', 't', NULL, 'pending', NULL, 'h', 1, '', ?, ?)",
        ("0" * 64, "f" * 64),
    )
    capsys.readouterr()
    assert main(["db", "copy", "--to", pg_url, "--data", str(data)]) == 2
    assert "audit chain is broken at seq 1" in capsys.readouterr().err
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('schema_migrations')").fetchone() == (None,)


def test_a_row_postgresql_refuses_rolls_the_whole_copy_back(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _tampered(
        tmp_path,
        "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('nul', ?, 't', 't')",
        ("bad\x00name",),
    )
    capsys.readouterr()
    assert main(["db", "copy", "--to", pg_url, "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: copying agents:") and len(err.strip().splitlines()) == 1
    with psycopg.connect(pg_url) as conn:
        for table in ("agents", "installation_secrets", "audit", "belief_change_log"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,), table
