"""Wake and agent reads return typed records, JSON decoded, the same on either engine."""

from __future__ import annotations

from credence.db import wakes as db_wakes
from credence.db.engine import Connection, Database

AT = "2026-03-01T10:00:00.000000Z"


async def _wake(conn: Connection, wake_id: str, agent_ids: str | None, input_data: str) -> None:
    await conn.run(
        "INSERT INTO wakes(id, kind, cron, agent_ids, input_data, created_at, updated_at)"
        " VALUES (?, 'cron', '0 3 * * *', ?, ?, ?, ?)",
        (wake_id, agent_ids, input_data, AT, AT),
    )


async def test_wakes_and_agents_come_back_decoded(store: Database) -> None:
    async def seed(conn: Connection) -> None:
        await db_wakes.insert_agent(conn, "ada", "Ada", '["coder"]', '{"cron": "0 4 * * *"}', AT)
        await _wake(conn, "some", '["ada"]', '{"reflector": "heuristic"}')
        await _wake(conn, "every", None, "{}")

    await store.write(seed)
    some = await store.read(lambda conn: db_wakes.get(conn, "some"))
    assert some is not None
    assert some.agent_ids == ["ada"] and some.input_data == {"reflector": "heuristic"}
    assert some.kind == "cron" and some.enabled == 1 and some.description == ""
    every = await store.read(lambda conn: db_wakes.get(conn, "every"))
    assert every is not None and every.agent_ids is None and every.input_data == {}
    # Migrations seed the default wakes as well.
    assert {"every", "some"} <= {w.id for w in await store.read(db_wakes.all_wakes)}
    agent = await store.read(lambda conn: db_wakes.agent(conn, "ada"))
    assert agent is not None and agent.settings == {"cron": "0 4 * * *"}
    seeded = await store.write(lambda conn: db_wakes.seed_agent_row(conn, "ada"))
    assert seeded is not None and seeded.roles == ["coder"] and seeded.name == "Ada"


async def test_a_tick_read_sets_apart_rows_whose_json_does_not_decode(store: Database) -> None:
    async def seed(conn: Connection) -> None:
        await db_wakes.insert_agent(conn, "ada", "Ada", "[]", "{}", AT)
        await db_wakes.insert_agent(conn, "bob", "Bob", "[]", "{not json", AT)
        await _wake(conn, "broken", '["ada"', "{}")
        await _wake(conn, "fine", None, "{}")

    await store.write(seed)
    wakes = await store.read(db_wakes.enabled_cron)
    assert "fine" in {w.id for w in wakes.records} and list(wakes.unreadable) == ["broken"]
    agents = await store.read(db_wakes.agents)
    assert [a.id for a in agents.records] == ["ada"] and list(agents.unreadable) == ["bob"]
