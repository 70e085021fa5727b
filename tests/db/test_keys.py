"""Key and pairing-code reads on both engines: typed records, their agent lists decoded."""

from __future__ import annotations

from datetime import UTC, datetime

from credence.access.keys import create_key, hash_secret
from credence.access.pairing import create_pairing_code
from credence.access.principal import principal_from_row
from credence.db import keys as db_keys
from credence.db.engine import Connection, Database
from credence.db.keys import KeyRecord, PairingRecord

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def clock() -> datetime:
    """A fixed time."""
    return NOW


async def _agents(conn: Connection) -> None:
    for agent_id in ("coder", "writer"):
        await conn.run(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (agent_id, agent_id.title(), "t", "t"),
        )


async def test_key_reads_are_records_with_their_agent_list_decoded(store: Database) -> None:
    async def work(conn: Connection) -> tuple[str, str, str]:
        await _agents(conn)
        secret, scoped = await create_key(
            conn, scope="reviewer", agents=["writer", "coder"], label="phone", clock=clock
        )
        _, admin = await create_key(conn, scope="admin", agents=None, label="ops", clock=clock)
        return hash_secret(secret), scoped["id"], admin["id"]

    digest, scoped_id, admin_id = await store.write(work)
    scoped = await store.read(lambda conn: db_keys.active_key(conn, digest))
    assert isinstance(scoped, KeyRecord)
    assert scoped.id == scoped_id and scoped.agents == ["coder", "writer"]
    assert scoped.scope == "reviewer" and not scoped.may_write and scoped.revoked_at is None
    principal = principal_from_row(scoped)
    assert principal.agents == frozenset({"coder", "writer"}) and principal.label == "phone"
    listed = await store.read(db_keys.all_keys)
    assert [key.id for key in listed] == sorted([scoped_id, admin_id])
    admin = await store.read(lambda conn: db_keys.get_key(conn, admin_id))
    assert admin is not None and admin.agents is None
    assert principal_from_row(admin).agents is None
    revoked = await store.write(lambda conn: db_keys.revoke_key(conn, scoped_id, "later"))
    assert revoked is not None and revoked.revoked_at == "later"
    assert revoked.agents == ["coder", "writer"]
    assert await store.read(lambda conn: db_keys.active_key(conn, digest)) is None
    granted = await store.write(
        lambda conn: db_keys.set_may_write(conn, admin_id, True, "now", "key:x")
    )
    assert granted is not None and granted.may_write and granted.write_grant_by == "key:x"
    assert await store.write(lambda conn: db_keys.revoke_key(conn, "key_nope", "now")) is None


async def test_a_claimed_pairing_code_is_a_record_with_its_agent_list(store: Database) -> None:
    async def work(conn: Connection) -> str:
        await _agents(conn)
        code, _ = await create_pairing_code(conn, agents=["coder"], label="tablet", clock=clock)
        return hash_secret(code)

    code_hash = await store.write(work)
    claimed = await store.write(lambda conn: db_keys.claim_pairing_code(conn, code_hash, "now"))
    assert isinstance(claimed, PairingRecord)
    assert claimed.agents == ["coder"] and claimed.label == "tablet" and claimed.used_at == "now"
    again = await store.write(lambda conn: db_keys.claim_pairing_code(conn, code_hash, "then"))
    assert again is None
    stored = await store.read(lambda conn: db_keys.get_pairing_code(conn, code_hash))
    assert stored is not None and stored.used_at == "now" and stored.agents == ["coder"]
    assert await store.read(lambda conn: db_keys.get_pairing_code(conn, "nope")) is None
