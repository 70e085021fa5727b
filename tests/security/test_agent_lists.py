"""An empty agent list is refused everywhere; "every agent" is only ever omitted or null."""

from __future__ import annotations

import asyncio

import pytest

from credence.access.keys import create_key
from credence.access.pairing import create_pairing_code
from credence.clock import system_clock
from credence.db.store import Store
from credence.errors import Unprocessable
from tests.helpers import make_agent


def _counts(server) -> tuple[int, int]:
    keys = server.run(server.services.store.fetchone("SELECT COUNT(*) AS n FROM api_keys"))
    codes = server.run(server.services.store.fetchone("SELECT COUNT(*) AS n FROM pairing_codes"))
    return keys["n"], codes["n"]


def test_an_empty_agent_list_is_a_422_and_creates_nothing(server, admin) -> None:
    make_agent(admin, "coder")
    before = _counts(server)
    for path, body in (
        ("/api/v1/keys", {"scope": "reviewer", "agents": []}),
        ("/api/v1/pairing-codes", {"agents": []}),
    ):
        response = admin.post(path, json=body)
        assert response.status_code == 422, (path, response.text)
    assert _counts(server) == before


def test_omitted_or_null_agents_mean_every_agent(server, admin) -> None:
    make_agent(admin, "coder")
    for body in ({"scope": "reviewer"}, {"scope": "reviewer", "agents": None}):
        created = admin.post("/api/v1/keys", json=body)
        assert created.status_code == 201, created.text
        assert created.json()["info"]["agents"] is None
    listed = admin.post("/api/v1/keys", json={"scope": "reviewer", "agents": ["coder"]})
    assert listed.json()["info"]["agents"] == ["coder"]
    assert admin.post("/api/v1/pairing-codes", json={"agents": None}).status_code == 201


def test_the_schema_says_so(server, admin) -> None:
    schemas = admin.get("/api/v1/openapi.json").json()["components"]["schemas"]
    for name in ("KeyIn", "PairingCodeIn"):
        agents = schemas[name]["properties"]["agents"]
        [listed] = [choice for choice in agents["anyOf"] if choice.get("type") == "array"]
        assert listed["minItems"] == 1, name
        assert "every agent" in agents["description"], name


@pytest.mark.parametrize("create", ["key", "pairing code"])
def test_the_domain_refuses_an_empty_list_too(tmp_path, create) -> None:
    """The CLI (`credence keys create`, `credence pair`) reaches the same two functions."""

    async def attempt() -> int:
        store = Store(tmp_path / "credence.sqlite3")
        await store.open()
        try:

            async def work(conn):
                if create == "key":
                    await create_key(
                        conn, scope="reviewer", agents=[], label="", clock=system_clock
                    )
                else:
                    await create_pairing_code(conn, agents=[], label="", clock=system_clock)

            with pytest.raises(Unprocessable, match="at least one agent"):
                await store.write(work)
            row = await store.fetchone(
                "SELECT (SELECT COUNT(*) FROM api_keys) + (SELECT COUNT(*) FROM pairing_codes) AS n"
            )
            return row["n"]
        finally:
            await store.close()

    assert asyncio.run(attempt()) == 0
