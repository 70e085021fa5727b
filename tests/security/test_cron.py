"""A cron that never fires is refused everywhere, and one bad row never stops the others."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta

import pytest

from credence.cli import main as credence_main
from credence.db.store import Store
from credence.reflection import wakes
from credence.reflection.cron import CronRejected, check_cron
from tests.helpers import make_agent

NEVER = "0 3 31 2 *"  # February 31st


@pytest.mark.parametrize("expression", [NEVER, "0 0 30 2 *", "0 3 31 4,6,9,11 *"])
def test_a_schedule_without_fire_times_is_rejected(expression) -> None:
    with pytest.raises(CronRejected, match="never fires"):
        check_cron(expression, "cron")
    check_cron("0 0 29 2 *")  # leap days do come round


def test_the_api_answers_422_and_stores_nothing(server, admin) -> None:
    make_agent(admin, "coder")
    wake = {"id": "never", "kind": "cron", "cron": NEVER}
    refused = admin.post("/api/v1/wakes", json=wake)
    assert refused.status_code == 422, refused.text
    assert "never fires" in refused.json()["detail"]
    listing = admin.get("/api/v1/wakes")
    assert listing.status_code == 200
    assert "never" not in {item["id"] for item in listing.json()["items"]}

    created = admin.post("/api/v1/wakes", json={**wake, "cron": "0 3 * * *"})
    assert created.status_code == 201, created.text
    patched = admin.patch("/api/v1/wakes/never", json={"cron": NEVER})
    assert patched.status_code == 422, patched.text
    assert admin.get("/api/v1/wakes/never").json()["cron"] == "0 3 * * *"

    agent = admin.post(
        "/api/v1/agents", json={"id": "late", "name": "Late", "reflection": {"cron": NEVER}}
    )
    assert agent.status_code == 422, agent.text
    assert agent.json()["detail"].startswith("reflection.cron:")
    assert admin.patch(
        "/api/v1/agents/coder", json={"reflection": {"cron": NEVER}}
    ).status_code == (422)


def _insert_bad_wake(server) -> None:
    async def work(conn):
        await conn.run(
            "INSERT INTO wakes(id, kind, cron, event, agent_ids, enabled, input_data, description,"
            " created_at, updated_at) VALUES ('broken', 'cron', ?, NULL, NULL, 1, '{}', '',"
            " '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
            (NEVER,),
        )

    server.run(server.services.store.write(work))


def test_reading_wakes_never_fails_on_a_bad_row(server, admin) -> None:
    make_agent(admin, "coder")
    _insert_bad_wake(server)
    listing = admin.get("/api/v1/wakes")
    assert listing.status_code == 200, listing.text
    [broken] = [item for item in listing.json()["items"] if item["id"] == "broken"]
    assert broken["next_fire_at"] is None
    assert admin.get("/api/v1/wakes/broken").status_code == 200


def test_the_scheduler_skips_a_bad_row_and_fires_the_others(tmp_path, caplog) -> None:
    start = datetime(2030, 1, 1, 2, 0, tzinfo=UTC)

    async def scenario() -> list[str]:
        store = Store(tmp_path / "credence.sqlite3")
        await store.open()
        try:

            async def work(conn):
                at = start.isoformat()
                await conn.run("DELETE FROM wakes")  # the default wakes are not this test's
                await conn.run(
                    "INSERT INTO agents(id, name, roles, settings, created_at, updated_at)"
                    " VALUES ('ada', 'Ada', '[]', '{}', ?, ?)",
                    (at, at),
                )
                for wake_id, cron in (("a-broken", NEVER), ("b-nightly", "0 3 * * *")):
                    await conn.run(
                        "INSERT INTO wakes(id, kind, cron, agent_ids, enabled, input_data,"
                        " description, created_at, updated_at)"
                        " VALUES (?, 'cron', ?, NULL, 1, '{}', '', ?, ?)",
                        (wake_id, cron, at, at),
                    )

            await store.write(work)
            created = await wakes.tick(store, start + timedelta(hours=2), set())
            rows = await store.fetchall("SELECT wake_id FROM jobs")
            assert len(created) == 1
            return [row["wake_id"] for row in rows]
        finally:
            await store.close()

    with caplog.at_level(logging.WARNING, logger="credence.reflection"):
        assert asyncio.run(scenario()) == ["b-nightly"]
    assert any(
        "a-broken" in r.getMessage() and "never fires" in r.getMessage() for r in caplog.records
    )


@pytest.mark.parametrize("where", ["wake", "agent"])
def test_seed_refuses_it_in_one_line(tmp_path, capsys, where) -> None:
    manifest = {"agents": [{"id": "ada", "name": "Ada"}], "wakes": []}
    if where == "wake":
        manifest["wakes"] = [{"id": "nightly", "kind": "cron", "cron": NEVER}]
    else:
        manifest["agents"][0]["reflection"] = {"cron": NEVER}
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    code = credence_main(["seed", str(path), "--data", str(tmp_path / "data")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1, err
    assert "never fires" in err[0]
    assert ("wakes[0]" if where == "wake" else "agents[0].reflection.cron") in err[0]
