"""The LLM judge over a real loopback OpenAI-compatible server: strict, cached, budgeted."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx

from credence.memory.semantics.gate import BeliefIndex, GateResult, LiveBelief, Proposal
from credence.memory.semantics.judge import LLMJudge, parse_verdict, settle_unsettled
from credence.memory.semantics.relation import relate
from credence.models.reasons import Reason

OLD, NEW = "Make the retry policy strict", "Make the retry policy permissive"
CONTRADICTION = json.dumps({"relation": "contradiction", "why": "strict is the opposite"})


def judge(fake, http: httpx.AsyncClient, **kwargs) -> LLMJudge:
    return LLMJudge(http, fake.url, "judge-model", **kwargs)


async def test_a_contradiction_answer_flags_the_pair_and_is_cached(fake_llm) -> None:
    fake_llm.answer(CONTRADICTION)
    offline = relate(OLD, NEW, 0.9)
    assert offline.kind == "compatible" and not offline.settled
    async with httpx.AsyncClient() as http:
        the_judge = judge(fake_llm, http)
        first = await the_judge.settle(OLD, NEW, offline)
        again = await the_judge.settle(OLD, NEW, offline)
    assert first.kind == again.kind == "contradiction"
    assert first.evidence.startswith("LLM judge:")
    assert fake_llm.calls == 1  # the second answer came from the cache
    sent = fake_llm.requests[0].body
    assert sent["model"] == "judge-model" and sent["temperature"] == 0
    assert json.loads(sent["messages"][1]["content"]) == {"first": OLD, "second": NEW}


async def test_a_duplicate_answer_never_makes_a_duplicate(fake_llm) -> None:
    fake_llm.answer(json.dumps({"relation": "duplicate", "why": "same"}))
    async with httpx.AsyncClient() as http:
        answer = await judge(fake_llm, http).settle(OLD, NEW, relate(OLD, NEW, 0.9))
    assert answer.kind == "compatible" and "duplicate" in answer.evidence


async def test_anything_but_the_strict_object_falls_back_offline(fake_llm) -> None:
    fake_llm.answer("Sure! They contradict.").answer('{"relation": "opposite"}').status(500)
    offline = relate(OLD, NEW, 0.9)
    async with httpx.AsyncClient() as http:
        the_judge = judge(fake_llm, http)
        for _ in range(3):
            assert await the_judge.settle(OLD, NEW, offline) == offline
    assert fake_llm.calls == 3
    assert parse_verdict('```json\n{"relation": "duplicate"}\n```') is None


async def test_a_slow_judge_times_out_to_the_offline_answer(fake_llm) -> None:
    fake_llm.hang(2.0)
    offline = relate(OLD, NEW, 0.9)
    async with httpx.AsyncClient() as http:
        answer = await judge(fake_llm, http, timeout_s=0.2).settle(OLD, NEW, offline)
    assert answer == offline


async def test_the_budget_caps_requests_per_run(fake_llm) -> None:
    fake_llm.answer(CONTRADICTION).answer(CONTRADICTION)
    async with httpx.AsyncClient() as http:
        the_judge = judge(fake_llm, http, budget=1)
        assert (await the_judge.settle(OLD, NEW, relate(OLD, NEW, 0.9))).kind == "contradiction"
        other = relate("Keep replies short", "Keep replies pleasant", 0.9)
        assert await the_judge.settle("Keep replies short", "Keep replies pleasant", other) == other
        assert fake_llm.calls == 1
        the_judge.new_run()
        answer = await the_judge.settle("Keep replies short", "Keep replies pleasant", other)
        assert answer.kind == "contradiction"
    assert fake_llm.calls == 2


async def test_the_gate_turns_an_unsettled_pair_the_judge_settles_into_a_contradiction(
    fake_llm,
) -> None:
    fake_llm.answer(CONTRADICTION)
    now = datetime(2026, 6, 1, tzinfo=UTC)
    index = BeliefIndex.build([LiveBelief("bel_1", OLD, "active", 0.8, now, now)])
    proposal = Proposal(0, "add", NEW, 0.7, "r", ("ep_1",))
    unsettled = GateResult(index=0, gate="needs_review", reasons=(Reason("unsettled", "bel_1"),))
    async with httpx.AsyncClient() as http:
        (result,) = await settle_unsettled(judge(fake_llm, http), [proposal], [unsettled], index)
    assert result == GateResult(
        index=0, gate="needs_review", reasons=(Reason("contradicts", "bel_1"),)
    )
