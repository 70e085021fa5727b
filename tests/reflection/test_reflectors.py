"""Reflectors: chosen once by name, then one method; each one's answer for what it is given."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from credence.clock import fixed_clock
from credence.memory.lifecycle.feedback import ReviewerFeedback
from credence.memory.semantics.embedders import make_embedder
from credence.reflection import reflectors
from credence.reflection.pulled import PulledEpisode
from credence.reflection.reflectors import ReflectorError
from credence.settings import Settings

T0 = datetime(2030, 1, 1, tzinfo=UTC)
NO_FEEDBACK = ReviewerFeedback(refused=[], edited=[])
EPISODES = (
    PulledEpisode(
        "ep_b", "Weighed flour.", (("steer", "Always use grams, not cups."),), "clean", 2
    ),
    PulledEpisode("ep_a", "Baked bread.", (("denial", "Never use cups."),), "clean", 1),
)


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client (reflectors other than llm never use it)."""
    async with httpx.AsyncClient() as client:
        yield client


def _settings(**values) -> Settings:
    return Settings(data_dir=Path("/nonexistent"), **values)


def _choose(name, http: httpx.AsyncClient, stub_output: str | None = None, **settings):
    return reflectors.choose(
        name,
        stub_output=stub_output,
        embedder=make_embedder(None, None, None),
        http=http,
        settings=_settings(**settings),
        clock=fixed_clock(T0),
        sleep=asyncio.sleep,
    )


def test_the_jobs_choice_wins_then_the_agents_then_llm_when_configured() -> None:
    plain, with_llm = _settings(), _settings(llm_url="http://127.0.0.1:9")
    assert reflectors.resolve("stub", "llm", with_llm) == "stub"
    assert reflectors.resolve(None, "heuristic", with_llm) == "heuristic"
    assert reflectors.resolve(None, None, with_llm) == "llm"
    assert reflectors.resolve(None, None, plain) == "heuristic"


async def test_each_name_builds_its_reflector(http: httpx.AsyncClient) -> None:
    chosen = [
        _choose("stub", http, stub_output="[]"),
        _choose("heuristic", http),
        _choose("llm", http, llm_url="http://127.0.0.1:9"),
    ]
    assert [type(r) for r in chosen] == [
        reflectors.StubReflector,
        reflectors.HeuristicReflector,
        reflectors.LLMReflector,
    ]
    assert [r.name for r in chosen] == ["stub", "heuristic", "llm"]


async def test_a_reflector_that_cannot_run_is_refused_when_chosen(http) -> None:
    with pytest.raises(ReflectorError, match=r"needs input_data\.stub_output"):
        _choose("stub", http)
    with pytest.raises(ReflectorError, match="needs CREDENCE_LLM_URL"):
        _choose("llm", http)
    with pytest.raises(ReflectorError, match="unknown reflector 'oracle'"):
        _choose("oracle", http)


async def test_the_stub_answers_its_text_for_every_episode(http) -> None:
    stub = _choose("stub", http, stub_output='[{"op": "add"}]')
    reflection = await stub.reflect(EPISODES, (), max_items=10, feedback=NO_FEEDBACK, forgotten=())
    assert reflection == reflectors.Reflection('[{"op": "add"}]', ["ep_b", "ep_a"])


async def test_llm_with_nothing_to_reflect_on_never_calls_the_model(http) -> None:
    # Port 9 (discard) is closed here: a call would fail the reflection.
    llm = _choose("llm", http, llm_url="http://127.0.0.1:9")
    reflection = await llm.reflect((), (), max_items=10, feedback=NO_FEEDBACK, forgotten=())
    assert reflection == reflectors.Reflection("[]", [])


async def test_the_heuristic_reads_episodes_in_arrival_order(http) -> None:
    heuristic = _choose("heuristic", http)
    reflection = await heuristic.reflect(
        EPISODES, (), max_items=10, feedback=NO_FEEDBACK, forgotten=()
    )
    assert reflection.considered == ["ep_b", "ep_a"]  # as ranked: the watermark covers all
    lessons = json.loads(reflection.answer)
    assert lessons and all(set(entry["source_episodes"]) <= {"ep_a", "ep_b"} for entry in lessons)
    assert any("gram" in entry["belief"].lower() for entry in lessons)
