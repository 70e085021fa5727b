"""CredenceStore with the real langgraph package against a live server: writes wait for a human."""

from __future__ import annotations

import asyncio
import json
from typing import TypedDict

import httpx
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from credence.integrations.langgraph import CredenceStore
from tests.helpers import decide, make_agent
from tests.livesrv import LiveServer, cli_key

NS = ("coder",)


@pytest.fixture
def store(server: LiveServer, admin: httpx.Client) -> CredenceStore:
    make_agent(admin)
    return CredenceStore(url=server.url, api_key=cli_key(server.settings, "agent", "coder"))


def pending(admin: httpx.Client) -> list[dict]:
    return admin.get("/api/v1/beliefs", params={"status": "pending"}).json()["items"]


def test_a_put_waits_for_a_human_and_then_reads_back(
    store: CredenceStore, admin: httpx.Client
) -> None:
    store.put(NS, "indent", {"text": "Indent Python with four spaces", "source": "chat"})
    (belief,) = pending(admin)
    assert belief["content"] == "Indent Python with four spaces"
    assert (
        "[langgraph key=indent]" in belief["rationale"]
        and '"source": "chat"' in belief["rationale"]
    )
    assert store.get(NS, "indent") is None
    assert store.search(NS, query="python indentation") == []

    decide(admin, belief, "keep")
    item = store.get(NS, "indent")
    assert item is not None and item.key == "indent" and item.namespace == NS
    assert item.value == {"text": "Indent Python with four spaces", "source": "chat"}
    by_id = store.get(NS, belief["id"])
    assert by_id is not None and by_id.value["text"] == "Indent Python with four spaces"
    (found,) = store.search(NS, query="how should python code be indented")
    assert found.key == belief["id"] and found.score is not None
    assert [i.key for i in store.search(NS)] == [belief["id"]]
    assert store.search(NS, filter={"source": "chat"}) and not store.search(
        NS, filter={"source": "x"}
    )


def test_an_owner_edit_is_what_reads_back(store: CredenceStore, admin: httpx.Client) -> None:
    store.put(NS, "m1", {"kind": "Memory", "content": {"content": "Use tabs"}})
    (belief,) = pending(admin)
    decide(admin, belief, "edit", {"content": "Use four spaces, never tabs"})
    item = store.get(NS, belief["id"])
    assert item is not None
    assert item.value == {"kind": "Memory", "content": {"content": "Use four spaces, never tabs"}}


def test_delete_and_overwrite_propose_changes_a_human_decides(
    store: CredenceStore, admin: httpx.Client
) -> None:
    store.put(NS, "deploys", {"text": "Deploy on Fridays"})
    kept = decide(admin, pending(admin)[0], "keep").json()
    store.put(NS, "deploys", {"text": "Never deploy on Fridays"})
    (supersede,) = pending(admin)
    assert supersede["op"] == "supersede" and supersede["target_belief_id"] == kept["id"]
    decide(admin, supersede, "forget")
    store.delete(NS, "deploys")
    (forget,) = pending(admin)
    assert forget["op"] == "forget" and forget["target_belief_id"] == kept["id"]
    assert store.get(NS, "deploys") is not None  # still kept until the human decides
    with pytest.raises(KeyError):
        store.delete(NS, "never-written")


def test_what_does_not_map_says_so(store: CredenceStore, admin: httpx.Client) -> None:
    with pytest.raises(NotImplementedError, match="TTL"):
        store.put(NS, "k", {"text": "Expire me"}, ttl=5)
    with pytest.raises(NotImplementedError, match="'text' or 'content'"):
        store.put(NS, "k", {"score": 3, "tags": ["a"]})
    with pytest.raises(NotImplementedError, match="equality"):
        store.search(NS, filter={"confidence": {"$gt": 0.5}})
    assert pending(admin) == []


def test_list_namespaces_and_the_async_api(store: CredenceStore, admin: httpx.Client) -> None:
    make_agent(admin, "writer")
    assert store.list_namespaces() == [NS]  # an agent key sees its own agent only

    async def run() -> list:
        await store.aput(NS, "a", {"text": "Write commit messages in the imperative"})
        decide(admin, pending(admin)[0], "keep")
        return await store.asearch(NS, query="commit message style")

    assert [i.value["text"] for i in asyncio.run(run())] == [
        "Write commit messages in the imperative"
    ]


class State(TypedDict):
    question: str
    notes: list[str]


def test_a_langgraph_app_reads_kept_memory_through_the_store(
    store: CredenceStore, admin: httpx.Client
) -> None:
    store.put(NS, "k", {"text": "Run the test suite before every commit"})
    decide(admin, pending(admin)[0], "keep")

    def recall(state: State, *, store: BaseStore) -> dict:
        return {"notes": [i.value["text"] for i in store.search(NS, query=state["question"])]}

    graph = StateGraph(State)
    graph.add_node("recall", recall)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", END)
    app = graph.compile(store=store)
    out = app.invoke({"question": "what to do before committing", "notes": []})
    assert out["notes"] == ["Run the test suite before every commit"]
    assert json.dumps(out)  # plain data, as a LangGraph state should be
