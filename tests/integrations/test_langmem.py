"""LangMem's memory manager writing through CredenceStore: its memories wait for a human."""

from __future__ import annotations

import json

import httpx
import pytest
from harness.fakes.llm import FakeLLM

from credence.integrations.langgraph import CredenceStore
from tests.helpers import decide, make_agent
from tests.livesrv import LiveServer, cli_key

langmem = pytest.importorskip("langmem")
langchain_openai = pytest.importorskip("langchain_openai")

NS = ("coder",)
LESSON = "The user wants pull requests kept under 300 changed lines"


def tool_call_completion(name: str, arguments: dict) -> bytes:
    """A chat completion whose answer is one tool call, as OpenAI-compatible servers send it."""
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1764662400,
            "model": "fake-model",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(arguments)},
                            }
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
        }
    ).encode()


def test_a_langmem_write_is_pending_until_kept_then_search_finds_it(
    server: LiveServer, admin: httpx.Client, fake_llm: FakeLLM
) -> None:
    make_agent(admin)
    store = CredenceStore(url=server.url, api_key=cli_key(server.settings, "agent", "coder"))
    fake_llm.raw(200, tool_call_completion("Memory", {"content": LESSON}), "application/json")
    model = langchain_openai.ChatOpenAI(
        model="fake-model",
        base_url=fake_llm.url,
        api_key="not-used",
        max_retries=0,
        use_responses_api=False,
    )
    manager = langmem.create_memory_store_manager(model, namespace=NS, store=store)
    conversation = [
        {"role": "user", "content": "Please split this PR, it is 900 lines. Keep them under 300."},
        {"role": "assistant", "content": "Understood, I will split it into three."},
    ]
    try:
        puts = manager.invoke({"messages": conversation})
    finally:
        model.root_client.close()  # its pooled connection would outlive the fake LLM server
    assert [p["value"]["content"]["content"] for p in puts] == [LESSON]
    assert fake_llm.calls >= 1

    (belief,) = admin.get("/api/v1/beliefs", params={"status": "pending"}).json()["items"]
    assert belief["content"] == LESSON and belief["status"] == "pending"
    assert store.search(NS, query="pull request size") == []

    decide(admin, belief, "keep")
    (found,) = store.search(NS, query="how big should a pull request be")
    assert found.value == {"kind": "Memory", "content": {"content": LESSON}}
