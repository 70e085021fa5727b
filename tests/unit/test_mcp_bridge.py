"""`credence mcp`: the SDK's stdio client spawns the bridge, which relays to a live server."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from credence.mcp_bridge import endpoint_of
from tests.helpers import make_agent
from tests.livesrv import LiveServer, cli_key

CREDENCE = str(Path(sys.executable).parent / "credence")


@asynccontextmanager
async def bridged(server: LiveServer, key: str) -> AsyncIterator[Client]:
    """The SDK's stdio client on `credence mcp`, configured the way the README shows."""
    env = {"CREDENCE_URL": server.url, "CREDENCE_API_KEY": key, "PATH": os.environ["PATH"]}
    params = StdioServerParameters(command=CREDENCE, args=["mcp"], env=env)
    async with Client(params) as client:
        yield client


@pytest.fixture
def coder_key(server: LiveServer, admin) -> str:
    """An agent key for `coder`, with a second agent `support` beside it."""
    make_agent(admin, "coder")
    make_agent(admin, "support")
    return cli_key(server.settings, "agent", "coder")


async def test_the_bridge_relays_tools_and_calls(server, admin, coder_key) -> None:
    turn = [
        {"role": "user", "content": "Ingest report.pdf (24MB)"},
        {"role": "user", "content": "No, split PDFs over 10MB into parts first."},
    ]
    async with bridged(server, coder_key) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        recorded = await client.call_tool("record_turn", {"session_id": "s", "messages": turn})
        context = await client.call_tool("get_memory_context", {"query": "split pdf"})
        assert client.instructions and "Credence" in client.instructions
    assert {"get_memory_context", "record_turn", "search_memory", "propose_belief"} <= names
    episode_id = recorded.structured_content["episode_id"]
    assert admin.get(f"/api/v1/agents/coder/episodes/{episode_id}").status_code == 200
    assert not context.is_error and "Request: Ingest report.pdf (24MB)" in context.content[0].text


async def test_another_agents_id_is_refused_through_the_bridge(server, admin, coder_key) -> None:
    async with bridged(server, coder_key) as client:
        result = await client.call_tool(
            "propose_belief", {"agent_id": "support", "belief": "x y z", "confidence": 0.5}
        )
    assert result.is_error and "agent 'support' not found" in result.content[0].text
    assert admin.get("/api/v1/beliefs", params={"agent_id": "support"}).json()["items"] == []


def test_a_bad_key_stops_the_bridge_with_a_clear_message(server, coder_key) -> None:
    done = subprocess.run(
        [CREDENCE, "mcp", "--url", server.url, "--key", "crd_not-a-real-key"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "refused the key (HTTP 401)" in done.stderr
    assert done.stdout == ""


def test_a_missing_key_is_named(server) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CREDENCE_API_KEY"}
    done = subprocess.run(
        [CREDENCE, "mcp", "--url", server.url],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2 and "CREDENCE_API_KEY" in done.stderr


def test_the_endpoint_is_the_base_url_plus_mcp() -> None:
    assert endpoint_of("http://127.0.0.1:8000") == "http://127.0.0.1:8000/mcp"
    assert endpoint_of("https://credence.example.org/") == "https://credence.example.org/mcp"
    assert endpoint_of("https://credence.example.org/mcp") == "https://credence.example.org/mcp"
