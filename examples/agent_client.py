"""A small Credence client an agent framework can copy: report turns, read reviewed memory.

Run as a script it reads three environment variables:

- ``CREDENCE_URL``: the server (default ``http://127.0.0.1:8000``);
- ``CREDENCE_AGENT_KEY``: an agent key (required; README "Point an agent at it" makes one);
- ``CREDENCE_AGENT_ID``: the agent (default ``my-agent``, the one the README walkthrough creates).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


class CredenceError(RuntimeError):
    """Credence answered with an error (the message carries its status and detail)."""


class CredenceClient:
    """Posts each finished turn and fetches the memory block before each task.

    Only the standard library is used, so the file can be dropped into any agent project.
    Memory is best-effort: when Credence is unreachable the agent should carry on without it,
    which is what ``context_block`` does (it returns an empty string).
    """

    def __init__(self, base_url: str, api_key: str, agent_id: str, timeout: float = 5.0) -> None:
        self.base_url = base_url.rstrip("/") + "/api/v1"
        self.api_key = api_key
        self.agent_id = agent_id
        self.timeout = timeout

    def report_turn(
        self,
        session_id: str,
        messages: list[dict[str, Any]],
        role_label: str | None = None,
    ) -> dict[str, Any]:
        """Send a finished turn (OpenAI, Anthropic or plain role/content messages)."""
        body: dict[str, Any] = {"session_id": session_id, "messages": messages}
        if role_label:
            body["role_label"] = role_label
        return self._request("POST", f"/agents/{self.agent_id}/turns", body)

    def context_block(self, query: str | None = None, role: str | None = None) -> str:
        """The prompt block of reviewed memory to put in the user message; "" if unavailable.

        Pass the task as ``query``: the notes that answer it come first, under ``<for the
        query>``. Put the block in the user message as it is; its nonce fences are what keep
        stored text from posing as instructions.
        """
        params = {k: v for k, v in {"query": query, "role": role}.items() if v}
        path = f"/agents/{self.agent_id}/memory/context"
        if params:
            path += "?" + urllib.parse.urlencode(params)
        try:
            return self._request("GET", path)["prompt_block"]
        except (CredenceError, OSError):
            return ""

    def _request(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            raise CredenceError(f"{method} {path} -> {exc.code}: {detail}") from None


def main() -> None:
    """Demo: report one turn, then print the memory block the next task would get."""
    client = CredenceClient(
        os.environ.get("CREDENCE_URL", "http://127.0.0.1:8000"),
        os.environ["CREDENCE_AGENT_KEY"],
        os.environ.get("CREDENCE_AGENT_ID", "my-agent"),
    )
    turn = [
        {"role": "user", "content": "Ingest the 24MB board pack PDF"},
        {"role": "assistant", "content": "The ingester ran out of memory."},
        {"role": "user", "content": "Split PDFs over 10MB into parts before ingesting them."},
    ]
    stored = client.report_turn("example-session", turn)
    print("stored episode", stored["episode"]["id"])
    print(client.context_block(query="ingest a large pdf"))


if __name__ == "__main__":
    main()
