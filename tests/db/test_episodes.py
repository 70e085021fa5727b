"""Episode reads return typed records with their JSON columns decoded, on either engine."""

from __future__ import annotations

from credence.db import episodes as db_episodes
from credence.db import jobs as db_jobs
from credence.db import reembed
from credence.db.engine import Connection, Database

AT = "2026-03-01T10:00:00.000000Z"
ROW = {
    "id": "ep_1",
    "agent_id": "ada",
    "session_id": "s",
    "role_label": None,
    "finished_at": AT,
    "summary": "fixed the build",
    "interventions": '[{"trigger": "steer", "text": "use make"}]',
    "intervention_text": "use make",
    "origin": "untrusted",
    "untrusted_reasons": '["declared"]',
    "metadata": '{"tool": "ci"}',
    "redactions": 0,
    "created_at": AT,
    "reflected_at": None,
    "embedding": b"\x00\x00\x80?",
    "embedding_model": "m1",
}


async def test_every_episode_read_decodes_the_json_columns(store: Database) -> None:
    async def seed(conn: Connection) -> None:
        await conn.run(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES ('ada', 'Ada', ?, ?)",
            (AT, AT),
        )
        assert await db_episodes.insert_episodes(
            conn, "ada", [{name: ROW[name] for name in db_episodes.INSERT_COLUMNS}]
        )

    await store.write(seed)
    found = await store.read(lambda conn: db_episodes.get_episode(conn, "ada", "ep_1"))
    assert found is not None
    assert found.interventions == [{"trigger": "steer", "text": "use make"}]
    assert found.untrusted_reasons == ["declared"] and found.metadata == {"tool": "ci"}
    assert found.origin == "untrusted" and found.seq > 0
    assert bytes(found.embedding or b"") == ROW["embedding"]
    every = db_episodes.EpisodeFilter()
    listed = await store.read(
        lambda conn: db_episodes.list_episodes(conn, "ada", every, after_seq=None, limit=5)
    )
    newest = await store.read(lambda conn: db_episodes.newest_episodes(conn, "ada", every, 5))
    by_seq = await store.read(lambda conn: db_episodes.episodes_by_seq(conn, [found.seq]))
    by_id = await store.read(lambda conn: db_jobs.episodes_by_id(conn, "ada", ["ep_1"]))
    assert listed == newest == [found] and by_seq == {found.seq: found} and by_id == [found]
    stale = await store.read(lambda conn: reembed.stale_episodes(conn, "m2", 5))
    assert [(s.id, s.interventions) for s in stale] == [("ep_1", found.interventions)]


def test_a_just_inserted_row_reads_as_a_record() -> None:
    record = db_episodes.EpisodeRecord.inserted(dict(ROW))
    assert record.interventions == [{"trigger": "steer", "text": "use make"}]
    assert record.metadata == {"tool": "ci"} and record.reflected_job is None
