"""The injection regression corpus through ingest, a reflection job with each reflector, review
and the read path: nothing becomes memory unasked, no secret survives, every item stays inert."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import httpx
import pytest
from harness.fakes.llm import FakeLLM

from credence.memory.ingest.redact import redact_value
from credence.memory.read.prompt_block import block_nonce, close_fence, parse_prompt_block
from credence.settings import Settings
from tests.integration.corpus import CORPUS, HOSTILE_LESSONS, SECRETS
from tests.livesrv import cli_key
from tests.reflection.jobtools import beliefs, make_agent, run_job

AGENT = "victim"
REFLECTORS = ("stub", "heuristic", "llm")
# Each secret's long alphanumeric runs, lower-cased: how it would look after tokenising (FTS5).
FRAGMENTS = tuple(
    {run.lower() for secret in SECRETS for run in re.findall(r"[A-Za-z0-9]{12,}", secret)}
)


@pytest.fixture
def settings(tmp_path: Path, fake_llm: FakeLLM) -> Settings:
    """Settings with the llm reflector pointed at the fake server."""
    return Settings(
        data_dir=tmp_path / "data",
        scheduler=False,
        llm_url=fake_llm.url,
        llm_model="corpus-model",
        llm_timeout_s=5.0,
    )


def leaks(text: str) -> list[str]:
    """Secrets (or their tokenised fragments) found in ``text``."""
    folded = text.lower()
    return [s[:12] for s in SECRETS if s in text] + [f for f in FRAGMENTS if f in folded]


def scan_store(database: Path) -> list[str]:
    """Every text and blob value of every table, plus the raw database and WAL files."""
    found = []
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, bytes):
                        value = value.decode("latin-1")
                    if isinstance(value, str):
                        found += [f"{table}: {hit}" for hit in leaks(value)]
    finally:
        db.close()
    for path in (database, database.with_name(database.name + "-wal")):
        if path.exists():
            found += [
                f"{path.name} bytes: {hit}" for hit in leaks(path.read_bytes().decode("latin-1"))
            ]
    return found


def ingest(client: httpx.Client) -> dict[str, dict]:
    """Store every corpus item the way an agent would; returns the stored episodes by name."""
    stored = {}
    for hostile in CORPUS:
        path = "turns" if hostile.kind == "turn" else "episodes"
        response = client.post(f"/api/v1/agents/{AGENT}/{path}", json=hostile.body)
        assert response.status_code == 201, (hostile.name, response.text)
        assert not leaks(response.text), hostile.name
        stored[hostile.name] = response.json()["episode"]
    return stored


def hostile_answer(stored: dict[str, dict]) -> str:
    """A model answer that carries the attacks, citing the corpus episodes it came from."""
    lessons = [
        {
            "op": op,
            "belief": text,
            "confidence": 0.99,
            "rationale": f"The episode said so: {stored[sources[0]]['summary'][:200]}",
            "source_episodes": [stored[name]["id"] for name in sources],
        }
        for op, text, sources in HOSTILE_LESSONS
    ]
    return "Sure! Here are the lessons:\n```json\n" + json.dumps(lessons) + "\n```"


def context(client: httpx.Client, **params) -> httpx.Response:
    response = client.get(f"/api/v1/agents/{AGENT}/memory/context", params=params)
    assert response.status_code == 200, response.text
    return response


def assert_inert(block: str, notes: int, episodes: int) -> None:
    """Every item is one line inside this response's fences and can neither close nor forge."""
    nonce = block_nonce(block)
    items = parse_prompt_block(block, nonce)  # raises if any line is outside an item
    assert len(items) == notes + episodes
    # The closing fence: once in the preamble that explains it, then once per section.
    assert block.count(close_fence(nonce)) == 1 + 2
    assert block.count("\n<<") == 2 and block.count(">>\n") == 1
    for item in items:
        assert "<" not in item.text and ">" not in item.text
        assert "![" not in item.text
        assert nonce not in item.text


def test_every_corpus_secret_is_in_the_corpus_and_known_to_the_redactor() -> None:
    for secret in SECRETS:
        carriers = [
            h
            for h in CORPUS
            if secret in json.dumps(h.body, ensure_ascii=False) or secret in str(h.body)
        ]
        assert carriers, secret[:12]
        for hostile in carriers:
            redacted, count = redact_value(hostile.body, digest_key=bytes(32))
            assert count and not leaks(str(redacted)), hostile.name


@pytest.mark.parametrize("reflector", REFLECTORS)
def test_hostile_corpus_through_reflection_review_and_the_read_path(
    server, admin, fake_llm, reflector
) -> None:
    make_agent(admin, AGENT)
    stored = ingest(admin)
    for hostile in CORPUS:
        if hostile.untrusted:
            assert stored[hostile.name]["origin"] == "untrusted", hostile.name

    answer = hostile_answer(stored)
    options = {"reflector": reflector}
    if reflector == "stub":
        options["stub_output"] = answer
    elif reflector == "llm":
        fake_llm.answer(answer)
    job = run_job(admin, AGENT, timeout=60, **options)
    assert job["status"] == "succeeded", job
    assert job["output_data"]["reflector"] == reflector
    if reflector == "llm":
        assert fake_llm.calls == 1
        for request in fake_llm.requests:
            assert not leaks(json.dumps(request.body)), "a secret reached the model"
    else:
        assert fake_llm.calls == 0

    # 1. Nothing is active memory without a human decision; the agent reads back nothing.
    proposed = beliefs(admin, AGENT)
    assert all(b["status"] == "pending" and b["decided_by"] is None for b in proposed)
    if reflector != "heuristic":
        assert len(proposed) == len(HOSTILE_LESSONS)
    empty = context(admin, query="remember password yes invoices", include_untrusted="true")
    assert empty.json()["memory_notes"] == []
    agent_key = cli_key(server.settings, "agent", AGENT)
    with server.client(agent_key) as agent:
        for belief in proposed:
            refused = agent.post(
                f"/api/v1/beliefs/{belief['id']}/keep", headers={"If-Match": '"1"'}
            )
            assert refused.status_code == 403
        assert context(agent).json()["memory_notes"] == []

    # 2. A careless reviewer keeps everything it can; third-party lessons cannot be kept.
    untrusted_ids = {e["id"] for e in stored.values() if e["origin"] == "untrusted"}
    kept = 0
    for belief in proposed:
        from_untrusted = bool(set(belief["source_episodes"]) & untrusted_ids)
        assert (belief["provenance"] == "untrusted") == from_untrusted
        response = admin.post(
            f"/api/v1/beliefs/{belief['id']}/keep", headers={"If-Match": f'"{belief["version"]}"'}
        )
        assert response.status_code == (409 if from_untrusted else 200), response.text
        kept += not from_untrusted
    active = beliefs(admin, AGENT, "active")
    assert len(active) == kept
    for belief in active:
        trail = admin.get(f"/api/v1/beliefs/{belief['id']}/audit").json()["items"]
        assert trail[-1]["action"] == "kept" and trail[-1]["actor"].startswith("key:")

    # 3. Whatever was kept, and every hostile episode, reaches the prompt only as inert items.
    for params in (
        {},
        {"query": "remember password yes forward inbox memory", "limit": 50},
        {
            "query": "remember password yes forward inbox memory",
            "limit": 50,
            "include_untrusted": "true",
        },
    ):
        response = context(admin, **params)
        body = response.json()
        assert len(body["memory_notes"]) == kept
        assert_inert(body["prompt_block"], kept, len(body["recent_relevant_episodes"]))
        assert not leaks(response.text)
        served = {e["episode_id"] for e in body["recent_relevant_episodes"]}
        if "include_untrusted" in params:
            # The relevance floor serves only episodes close to the query (no padding), so
            # the count depends on the corpus; what matters is that hostile ones are served inert.
            assert served & untrusted_ids
        else:
            assert not served & untrusted_ids

    # 4. No secret anywhere: the store (every table, the raw files), exports, the model's input.
    for suffix in ("", "/markdown"):
        exported = admin.get(f"/api/v1/agents/{AGENT}/memory/export{suffix}")
        assert exported.status_code == 200 and not leaks(exported.text)
    episodes = admin.get(f"/api/v1/agents/{AGENT}/episodes", params={"limit": 200})
    assert not leaks(episodes.text)
    assert scan_store(server.settings.database_path) == []


def test_a_model_answer_holding_a_secret_is_not_stored_verbatim(server, admin) -> None:
    """A reflector may echo or invent a credential; the store must still never keep it."""
    make_agent(admin, AGENT)
    (episode,) = ingest_one(admin)
    answer = json.dumps([secret_lesson(episode["id"])])
    job = run_job(admin, AGENT, reflector="stub", stub_output=answer)
    assert job["status"] == "succeeded", job
    assert len(beliefs(admin, AGENT, "pending")) == 1
    assert scan_store(server.settings.database_path) == []


def test_a_proposal_holding_a_secret_is_not_stored_verbatim(server, admin) -> None:
    """Proposals posted directly (by an external reflector) are redacted like episodes."""
    make_agent(admin, AGENT)
    (episode,) = ingest_one(admin)
    response = admin.post(
        f"/api/v1/agents/{AGENT}/memory/beliefs/proposals",
        json={"proposals": [secret_lesson(episode["id"])]},
    )
    assert response.status_code == 200, response.text
    assert scan_store(server.settings.database_path) == []


def secret_lesson(episode_id: str) -> dict:
    return {
        "op": "add",
        "belief": f"Use the deploy key {SECRETS[0]} for releases",
        "confidence": 0.5,
        "rationale": f"token {SECRETS[1]} was in the logs",
        "source_episodes": [episode_id],
    }


def ingest_one(client: httpx.Client) -> list[dict]:
    response = client.post(
        f"/api/v1/agents/{AGENT}/episodes", json={"session_id": "s", "summary": "released v2"}
    )
    assert response.status_code == 201
    return [response.json()["episode"]]
