"""MCP at /mcp, driven by the official SDK client against a live server: same keys, same data."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from credence.settings import Settings
from tests.helpers import decide, make_agent, pending_belief
from tests.livesrv import LiveServer, cli_key, running

TURN = [
    {"role": "user", "content": "Ingest report.pdf (24MB)"},
    {"role": "assistant", "content": "The ingester ran out of memory."},
    {"role": "user", "content": "No, split PDFs over 10MB into parts first."},
]
_NONCE_LINE = re.compile(r'ends at "([a-z]+)>>"')


def _without_nonce(block: str) -> str:
    """The block with its per-response fence nonce replaced by a fixed word."""
    match = _NONCE_LINE.search(block)
    assert match is not None, block
    return block.replace(match.group(1), "NONCE")


@asynccontextmanager
async def mcp_client(server: LiveServer, key: str) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP, sending ``key`` as the bearer key."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http,
        Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client,
    ):
        yield client


@pytest.fixture
def agents(server: LiveServer, admin) -> dict[str, str]:
    """Two agents, and an agent key for the first."""
    make_agent(admin, "coder")
    make_agent(admin, "support")
    return {"coder": cli_key(server.settings, "agent", "coder")}


def key_id_of(server: LiveServer, key: str) -> str:
    """The id of ``key``, as GET /me reports it."""
    with server.client(key) as client:
        return client.get("/api/v1/me").json()["key_id"]


async def test_tools_are_listed_with_descriptions_for_a_model(server, agents) -> None:
    async with mcp_client(server, agents["coder"]) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        instructions = client.instructions
    assert set(tools) >= {"get_memory_context", "record_turn", "search_memory", "propose_belief"}
    for tool in tools.values():
        assert len(tool.description or "") > 80, tool.name
    assert "pending" in tools["propose_belief"].description
    assert "messages" in tools["record_turn"].input_schema["properties"]
    assert instructions and "get_memory_context" in instructions


async def test_record_turn_stores_the_episode_rest_would_store(server, admin, agents) -> None:
    async with mcp_client(server, agents["coder"]) as client:
        result = await client.call_tool("record_turn", {"session_id": "s-42", "messages": TURN})
    assert not result.is_error, result.content
    episode_id = result.structured_content["episode_id"]
    stored = admin.get(f"/api/v1/agents/coder/episodes/{episode_id}").json()
    assert stored["session_id"] == "s-42"
    assert [i["trigger"] for i in stored["interventions"]] == ["denial"]
    assert stored["metadata"]["turn"]["messages"] == 3


async def test_context_is_the_rest_block_and_serves_only_kept_beliefs(
    server, admin, agents
) -> None:
    kept = pending_belief(admin, text="Split PDFs over 10MB before ingesting them")
    assert decide(admin, kept, "keep").status_code == 200
    pending_belief(admin, text="Always answer in French")
    async with mcp_client(server, agents["coder"]) as client:
        result = await client.call_tool("get_memory_context", {"query": "ingest a pdf"})
    assert not result.is_error
    block = result.content[0].text
    rest = admin.get("/api/v1/agents/coder/memory/context", params={"query": "ingest a pdf"})
    assert _without_nonce(block) == _without_nonce(rest.json()["prompt_block"])
    assert "Split PDFs over 10MB" in block and "French" not in block


async def test_search_finds_a_recorded_turn(server, agents) -> None:
    async with mcp_client(server, agents["coder"]) as client:
        recorded = await client.call_tool("record_turn", {"session_id": "s", "messages": TURN})
        found = await client.call_tool("search_memory", {"queries": ["split pdf ingester"]})
    assert not found.is_error, found.content
    ids = [hit["id"] for hit in found.structured_content["episodes"]]
    assert recorded.structured_content["episode_id"] in ids


async def test_proposal_goes_through_the_gate_and_waits_for_a_human(server, admin, agents) -> None:
    lesson = {"belief": "Split PDFs over 10MB before ingesting", "confidence": 0.8}
    async with mcp_client(server, agents["coder"]) as client:
        first = await client.call_tool("propose_belief", lesson)
        again = await client.call_tool("propose_belief", lesson)
    assert first.structured_content["accepted"] is True
    belief = admin.get(f"/api/v1/beliefs/{first.structured_content['belief_id']}").json()
    assert belief["status"] == "pending" and belief["agent_id"] == "coder"
    assert belief["proposed_by"]["key_id"] == key_id_of(server, agents["coder"])
    assert again.structured_content["accepted"] is False
    assert again.structured_content["rejected_reason"]
    context = admin.get("/api/v1/agents/coder/memory/context").json()
    assert context["memory_notes"] == []


async def test_an_agent_key_cannot_reach_another_agent(server, admin, agents) -> None:
    async with mcp_client(server, agents["coder"]) as client:
        calls = {
            "get_memory_context": {"agent_id": "support"},
            "record_turn": {"agent_id": "support", "session_id": "s", "messages": TURN},
            "search_memory": {"agent_id": "support", "queries": ["pdf"]},
            "propose_belief": {"agent_id": "support", "belief": "x y z", "confidence": 0.5},
        }
        for name, arguments in calls.items():
            result = await client.call_tool(name, arguments)
            assert result.is_error, name
            assert "agent 'support' not found" in result.content[0].text, name
    assert admin.get("/api/v1/agents/support/episodes").json()["items"] == []
    assert admin.get("/api/v1/beliefs", params={"agent_id": "support"}).json()["items"] == []


async def test_reviewer_and_admin_keys_follow_their_scopes(server, admin, agents) -> None:
    reviewer = cli_key(server.settings, "reviewer", "support")
    async with mcp_client(server, reviewer) as client:
        own = await client.call_tool("get_memory_context", {})
        other = await client.call_tool("get_memory_context", {"agent_id": "coder"})
    assert not own.is_error and "MEMORY_NOTES" in own.content[0].text
    assert other.is_error and "not found" in other.content[0].text
    async with mcp_client(server, cli_key(server.settings, "admin")) as client:
        unnamed = await client.call_tool("get_memory_context", {})
        named = await client.call_tool("get_memory_context", {"agent_id": "coder"})
    assert unnamed.is_error and "agent_id is required" in unnamed.content[0].text
    assert not named.is_error


async def test_invalid_arguments_are_refused_like_rest_and_store_nothing(
    server, admin, agents
) -> None:
    async with mcp_client(server, agents["coder"]) as client:
        result = await client.call_tool(
            "record_turn", {"session_id": "s\x00", "messages": [{"role": "user"}]}
        )
    assert result.is_error
    assert admin.get("/api/v1/agents/coder/episodes").json()["items"] == []


@pytest.mark.parametrize("header", [None, "Bearer crd_not-a-key", "Basic abc"])
def test_bad_or_missing_keys_get_401(server, agents, header) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if header:
        headers["Authorization"] = header
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    answer = httpx2.post(f"{server.url}/mcp", json=body, headers=headers)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == "Bearer"


async def test_a_revoked_key_stops_working_at_once(server, admin, agents) -> None:
    async with mcp_client(server, agents["coder"]) as client:
        assert (await client.list_tools()).tools
    key_id = key_id_of(server, agents["coder"])
    assert admin.post(f"/api/v1/keys/{key_id}/revoke").status_code == 200
    with pytest.raises(ExceptionGroup) as raised:
        async with mcp_client(server, agents["coder"]) as client:
            await client.list_tools()
    assert raised.group_contains(MCPError, depth=None)


async def test_context_arguments_are_bounded_like_the_rest_query(server, agents) -> None:
    async with mcp_client(server, agents["coder"]) as client:
        bad_role = await client.call_tool("get_memory_context", {"role": "Not A Slug!"})
        too_many = await client.call_tool("get_memory_context", {"limit": 10_000})
    assert bad_role.is_error and too_many.is_error


def test_the_servers_body_limit_applies_to_mcp(tmp_path) -> None:
    settings = Settings(data_dir=tmp_path / "small", scheduler=False, max_body_bytes=65_536)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {"pad": ""}}}
    with running(settings) as small:
        headers = {
            "Authorization": f"Bearer {cli_key(settings, 'admin')}",
            "Accept": "application/json, text/event-stream",
        }
        fits = httpx2.post(f"{small.url}/mcp", json=ping, headers=headers)
        ping["params"]["_meta"]["pad"] = "x" * 100_000
        too_big = httpx2.post(f"{small.url}/mcp", json=ping, headers=headers)
    assert fits.status_code == 200
    assert too_big.status_code == 413
