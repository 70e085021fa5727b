"""Reviewer keys read and decide; they post episodes, turns, proposals or imports only with an
admin's write grant (REST, MCP and the CLI), which an admin can withdraw again."""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable

import httpx
import pytest

from credence.cli import main as credence_main
from tests.api.test_mcp import key_id_of, mcp_client
from tests.helpers import make_agent
from tests.livesrv import LiveServer, cli_key, store_flags

BOTH = pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)
EPISODE = {"session_id": "s1", "summary": "did a thing"}
PROPOSAL = {"op": "add", "belief": "Split PDFs over 10MB", "confidence": 0.7}
TURN = {
    "session_id": "s2",
    "messages": [
        {"role": "user", "content": "ingest the pdf"},
        {"role": "assistant", "content": "split it and ingested it"},
    ],
}
IMPORT = {"filename": "CLAUDE.md", "text": "- Run the linter before pushing\n"}
WRITES: dict[str, tuple[str, dict]] = {
    "episode": ("/api/v1/agents/coder/episodes", EPISODE),
    "episodes": ("/api/v1/agents/coder/episodes/batch", {"episodes": [EPISODE]}),
    "turn": ("/api/v1/agents/coder/turns", TURN),
    "proposal": ("/api/v1/agents/coder/memory/beliefs/proposals", {"proposals": [PROPOSAL]}),
    "import": ("/api/v1/agents/coder/memory/import", IMPORT),
}


def stored(admin: httpx.Client) -> tuple[int, int]:
    """How many episodes and beliefs the agent holds."""
    episodes = admin.get("/api/v1/agents/coder/episodes").json()["items"]
    beliefs = admin.get("/api/v1/beliefs").json()["items"]
    return len(episodes), len(beliefs)


def grant(admin: httpx.Client, key_id: str, may_write: bool) -> httpx.Response:
    """PATCH the key's write grant as the admin."""
    return admin.patch(f"/api/v1/keys/{key_id}", json={"may_write": may_write})


@BOTH
def test_a_reviewer_key_cannot_post_episodes_turns_proposals_or_imports(server, admin) -> None:
    make_agent(admin, "coder")
    with server.client(cli_key(server.settings, "reviewer", "coder")) as reviewer:
        assert reviewer.get("/api/v1/me").json()["may_write"] is False
        for name, (path, body) in WRITES.items():
            refused = reviewer.post(path, json=body)
            assert refused.status_code == 403, (name, refused.text)
            detail = refused.json()["detail"]
            assert "needs an agent key" in detail and "may_write" in detail, detail
    assert stored(admin) == (0, 0)


@BOTH
def test_an_admins_grant_lets_a_reviewer_write_until_it_is_withdrawn(server, admin) -> None:
    make_agent(admin, "coder")
    key = cli_key(server.settings, "reviewer", "coder", label="Ana's phone")
    key_id = key_id_of(server, key)
    admin_id = admin.get("/api/v1/me").json()["key_id"]
    granted = grant(admin, key_id, True)
    assert granted.status_code == 200, granted.text
    info = granted.json()
    assert (info["may_write"], info["write_grant_by"]) == (True, f"key:{admin_id}")
    assert info["write_grant_at"] is not None
    listed = {k["id"]: k for k in admin.get("/api/v1/keys").json()["items"]}
    assert listed[key_id]["may_write"] is True
    with server.client(key) as reviewer:
        assert reviewer.get("/api/v1/me").json()["may_write"] is True
        for name, (path, body) in WRITES.items():
            answer = reviewer.post(path, json=body)
            assert answer.status_code in (200, 201), (name, answer.text)
        written = stored(admin)
        assert written[0] == 3 and written[1] == 2  # episode, batch, turn; proposal, import
        withdrawn = grant(admin, key_id, False)
        assert withdrawn.status_code == 200 and withdrawn.json()["may_write"] is False
        for path, body in WRITES.values():
            assert reviewer.post(path, json=body).status_code == 403
    assert stored(admin) == written


def test_only_admins_grant_and_only_reviewer_keys_take_a_grant(server, admin) -> None:
    make_agent(admin, "coder")
    reviewer_key = cli_key(server.settings, "reviewer", "coder")
    agent_key = cli_key(server.settings, "agent", "coder")
    reviewer_id, agent_id = key_id_of(server, reviewer_key), key_id_of(server, agent_key)
    with server.client(reviewer_key) as reviewer:
        assert grant(reviewer, reviewer_id, True).status_code == 403
        path, body = WRITES["episode"]
        assert reviewer.post(path, json=body).status_code == 403
    refused = grant(admin, agent_id, True)
    assert refused.status_code == 422 and "may_write" in refused.json()["detail"]
    assert grant(admin, "key_00000000000000000000000000", True).status_code == 404
    created = admin.post(
        "/api/v1/keys", json={"scope": "agent", "agents": ["coder"], "may_write": True}
    )
    assert created.status_code == 422, created.text
    # Agent and admin keys always write, and say so.
    keys = {k["id"]: k for k in admin.get("/api/v1/keys").json()["items"]}
    assert keys[agent_id]["may_write"] is True and keys[reviewer_id]["may_write"] is False
    assert admin.post(f"/api/v1/keys/{reviewer_id}/revoke").status_code == 200
    assert grant(admin, reviewer_id, True).status_code == 409
    assert stored(admin) == (0, 0)


async def test_mcp_write_tools_follow_the_same_grant(server: LiveServer, admin) -> None:
    make_agent(admin, "coder")
    key = cli_key(server.settings, "reviewer", "coder")
    calls: dict[str, dict] = {
        "record_turn": {"session_id": "s1", "messages": TURN["messages"]},
        "propose_belief": {"belief": "Split PDFs over 10MB", "confidence": 0.7},
    }
    async with mcp_client(server, key) as client:
        for name, arguments in calls.items():
            refused = await client.call_tool(name, arguments)
            assert refused.is_error, name
            assert "may_write" in refused.content[0].text, refused.content
        assert stored(admin) == (0, 0)
        assert grant(admin, key_id_of(server, key), True).status_code == 200
        for name, arguments in calls.items():
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, result.content)
    assert stored(admin) == (1, 1)


def keys_cli(server: LiveServer, *argv: str) -> tuple[int, str]:
    """Run `credence keys …` on the server's store; (exit code, output)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = credence_main(["keys", *argv, *store_flags(server.settings)])
    return code, out.getvalue()


def eventually(check: Callable[[], bool]) -> bool:
    """True once ``check`` holds: another process's key change reaches the cache in a poll."""
    deadline = time.monotonic() + 10
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_cli_grants_and_withdraws(server: LiveServer, admin) -> None:
    make_agent(admin, "coder")
    key = cli_key(server.settings, "reviewer", "coder")
    key_id = key_id_of(server, key)
    path, body = WRITES["episode"]
    with server.client(key) as reviewer:
        assert reviewer.post(path, json=body).status_code == 403
        assert keys_cli(server, "grant-write", key_id) == (0, f"Granted may_write for {key_id}\n")
        assert eventually(lambda: reviewer.post(path, json=body).status_code == 201)
        code, listing = keys_cli(server, "list")
        assert code == 0 and "may write" in next(ln for ln in listing.splitlines() if key_id in ln)
        assert keys_cli(server, "withdraw-write", key_id)[0] == 0
        assert eventually(lambda: reviewer.post(path, json=body).status_code == 403)
    info = {k["id"]: k for k in admin.get("/api/v1/keys").json()["items"]}[key_id]
    assert (info["may_write"], info["write_grant_by"]) == (False, "cli")
    agent_id = key_id_of(server, cli_key(server.settings, "agent", "coder"))
    code, said = keys_cli(server, "grant-write", agent_id)
    assert code == 2 and "only a reviewer key" in said
    code, said = keys_cli(server, "create", "--scope", "reviewer", "--may-write")
    assert code == 0
    with server.client(said.strip().splitlines()[-1]) as granted:
        assert granted.get("/api/v1/me").json()["may_write"] is True
