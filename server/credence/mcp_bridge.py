"""`credence mcp`: serve MCP over stdio by relaying every tool call to a server's /mcp."""

from __future__ import annotations

import sys
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.stdio import stdio_server

from credence import __version__

DEFAULT_URL = "http://127.0.0.1:8000"


class BridgeRefused(RuntimeError):
    """The server could not be reached or refused the key; the message says which."""


def endpoint_of(base_url: str) -> str:
    """The streamable-HTTP endpoint of a Credence base URL (a URL ending in /mcp is kept)."""
    base = base_url.rstrip("/")
    return base if base.endswith("/mcp") else base + "/mcp"


async def run_bridge(base_url: str, key: str) -> None:
    """Connect to the server first (so a bad URL or key fails at once), then serve stdio."""
    endpoint = endpoint_of(base_url)
    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(30.0, read=300.0)
    ) as http:
        await _check_key(http, endpoint)
        async with Client(streamable_http_client(endpoint, http_client=http), cache=None) as up:

            async def list_tools(_ctx: Any, params: Any) -> types.ListToolsResult:
                return await up.list_tools(cursor=params.cursor if params else None)

            async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> Any:
                return await up.call_tool(params.name, params.arguments)

            relay = Server(
                "credence",
                version=__version__,
                instructions=up.instructions,
                on_list_tools=list_tools,
                on_call_tool=call_tool,
            )
            async with stdio_server() as (read, write):
                await relay.run(read, write, relay.create_initialization_options())


async def _check_key(http: httpx2.AsyncClient, endpoint: str) -> None:
    """Refuse to start with a key the server does not accept, naming the server's answer."""
    try:
        answer = await http.post(
            endpoint,
            json={"jsonrpc": "2.0", "id": 0, "method": "ping"},
            headers={"Accept": "application/json, text/event-stream"},
        )
    except httpx2.HTTPError as exc:
        raise BridgeRefused(f"cannot reach {endpoint}: {exc}") from None
    if answer.status_code in (401, 403):
        raise BridgeRefused(f"{endpoint} refused the key (HTTP {answer.status_code})")
    if answer.status_code == 404:
        raise BridgeRefused(f"{endpoint} is not a Credence MCP endpoint (HTTP 404)")


def main(base_url: str, key: str) -> int:
    """Run the bridge until stdin closes; print why to stderr and return 2 if it cannot start."""
    import anyio

    try:
        anyio.run(run_bridge, base_url, key)
    except BridgeRefused as exc:
        print(f"credence mcp: {exc}", file=sys.stderr)
        return 2
    return 0
