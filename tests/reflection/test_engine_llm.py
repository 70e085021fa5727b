"""The chat client and prompt planning: retries, Retry-After, token budget, answer shapes."""

from __future__ import annotations

import email.utils
import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import httpx
import numpy as np
import pytest
from harness.fakes.llm import FakeLLM

from credence.memory.semantics.gate import LiveBelief
from credence.reflection.llm import (
    ChatClient,
    LLMError,
    estimate_tokens,
    plan_prompt,
    retry_after_seconds,
)
from credence.reflection.pulled import PulledEpisode

NOW = datetime(2030, 1, 1, tzinfo=UTC)
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    """The scripted chat-completions server."""
    with FakeLLM() as server:
        yield server


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """A plain httpx client, like the app's shared one."""
    async with httpx.AsyncClient() as client:
        yield client


class Sleeps:
    """Records the waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def client(http, fake, sleeps, timeout: float = 2.0, **kwargs) -> ChatClient:
    """A ChatClient for the fake server with recorded sleeps."""
    return ChatClient(http, fake.url, "m", None, timeout, clock=lambda: NOW, sleep=sleeps, **kwargs)


async def complete(chat: ChatClient, cap: int = 100_000):
    """One completion of two tiny messages."""
    return await chat.complete(MESSAGES, max_tokens=100, prompt_tokens=10, token_cap=cap)


async def test_repeated_server_errors_give_up_with_backoff(http, fake) -> None:
    for _ in range(4):
        fake.status(502)
    sleeps = Sleeps()
    with pytest.raises(LLMError, match="no answer after 4 attempts: HTTP 502"):
        await complete(client(http, fake, sleeps))
    assert sleeps.waits == [1.0, 2.0, 4.0]
    assert fake.calls == 4


async def test_retry_after_as_an_http_date(http, fake) -> None:
    when = email.utils.format_datetime(NOW + timedelta(seconds=7), usegmt=True)
    fake.status(429, headers={"Retry-After": when}).answer("[]")
    sleeps = Sleeps()
    answer = await complete(client(http, fake, sleeps))
    assert answer.text == "[]" and answer.attempts == 2
    assert sleeps.waits == [7.0]


def test_retry_after_parsing() -> None:
    clock = lambda: NOW  # noqa: E731
    assert retry_after_seconds("12", clock) == 12.0
    assert retry_after_seconds(None, clock) is None
    assert retry_after_seconds("soon", clock) is None
    past = email.utils.format_datetime(NOW - timedelta(hours=1), usegmt=True)
    assert retry_after_seconds(past, clock) == 0.0


async def test_timeouts_count_toward_the_token_cap(http, fake) -> None:
    fake.hang(2.0).hang(2.0)
    sleeps = Sleeps()
    chat = client(http, fake, sleeps, timeout=0.2)
    # A timed-out attempt may have cost 10 prompt + 100 completion tokens: two pass 200.
    # Counted from the client's side: on a loaded machine the fake may not have read a request
    # the client already gave up on within 0.2 s.
    with pytest.raises(
        LLMError, match=r"would pass the token cap of 200 \(after 1 attempts: timed"
    ):
        await complete(chat, cap=200)


async def test_timeouts_exhaust_the_attempts(http, fake) -> None:
    for _ in range(2):
        fake.hang(2.0)
    sleeps = Sleeps()
    with pytest.raises(LLMError, match=r"no answer after 2 attempts: timed out after 0\.2 s"):
        await complete(client(http, fake, sleeps, timeout=0.2, max_attempts=2))


async def test_unreachable_model(http) -> None:
    chat = ChatClient(
        http,
        "http://127.0.0.1:9/v1",
        "m",
        None,
        1.0,
        clock=lambda: NOW,
        sleep=Sleeps(),
        max_attempts=1,
    )
    with pytest.raises(LLMError, match="unreachable"):
        await complete(chat)


async def test_answer_shapes(http, fake) -> None:
    sleeps = Sleeps()
    chat = client(http, fake, sleeps)
    fake.raw(200, b"<html>not json</html>")
    with pytest.raises(LLMError, match="not JSON"):
        await complete(chat)
    fake.raw(200, json.dumps({"choices": []}).encode(), "application/json")
    with pytest.raises(LLMError, match="no choices"):
        await complete(chat)
    parts = {
        "choices": [
            {"message": {"content": [{"type": "text", "text": "[]"}]}, "finish_reason": "stop"}
        ]
    }
    fake.raw(200, json.dumps(parts).encode(), "application/json")
    answer = await complete(chat)
    assert answer.text == "[]"
    assert answer.prompt_tokens == 10  # no usage reported: our estimate stands
    fake.raw(200, json.dumps({"choices": [{"message": {"content": None}}]}).encode())
    with pytest.raises(LLMError, match="no text content"):
        await complete(chat)


def _episodes(count: int) -> tuple[list[PulledEpisode], np.ndarray]:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((count, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    episodes = [
        PulledEpisode(f"ep_{n:026d}", f"Summary {n} " + "words " * 50, (), "clean")
        for n in range(count)
    ]
    return episodes, vectors


def _belief(n: int, vector: np.ndarray) -> LiveBelief:
    return LiveBelief(f"b_{n:026d}", f"Belief {n}", "active", 0.5, NOW, NOW, vector)


def test_plan_keeps_the_best_ranked_episodes_under_the_cap() -> None:
    episodes, vectors = _episodes(20)
    full = plan_prompt(episodes, vectors, [], max_items=10, token_cap=200_000)
    assert full.omitted == [] and len(full.considered) == 20
    cap = full.prompt_tokens // 2
    plan = plan_prompt(episodes, vectors, [], max_items=10, token_cap=cap)
    assert 0 < len(plan.considered) < 20
    assert plan.considered == [e.id for e in episodes[: len(plan.considered)]]
    assert plan.omitted == [e.id for e in episodes[len(plan.considered) :]]
    assert estimate_tokens(plan.messages) == plan.prompt_tokens
    assert plan.prompt_tokens + plan.max_completion_tokens <= cap
    assert plan.max_completion_tokens >= cap // 4
    with pytest.raises(LLMError, match="no room for a single episode"):
        plan_prompt(episodes, vectors, [], max_items=10, token_cap=1000)


def test_plan_shows_the_most_relevant_hundred_active_beliefs() -> None:
    episodes, vectors = _episodes(3)
    far = -vectors[0]
    beliefs = [_belief(n, far) for n in range(150)] + [_belief(999, vectors[0])]
    plan = plan_prompt(episodes, vectors, beliefs, max_items=10, token_cap=200_000)
    assert plan.beliefs_shown == 100
    assert "b_" + f"{999:026d}" in plan.messages[1]["content"]
