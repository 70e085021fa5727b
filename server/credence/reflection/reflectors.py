"""The three reflectors behind the propose step: llm, heuristic (the default) and stub."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

from credence.clock import Clock
from credence.embed import Embedder
from credence.memory.feedback import ReviewerFeedback
from credence.memory.gate import LiveBelief, Proposal
from credence.reflection import heuristic
from credence.reflection.llm import ChatClient, LLMError, Sleep, plan_prompt
from credence.reflection.prompt import PromptEpisode
from credence.settings import Settings

DEFAULT_LLM_MODEL = "default"


class ReflectorError(RuntimeError):
    """The reflector could not produce an answer; the message says why."""


@dataclass(frozen=True)
class PulledEpisode:
    """An episode as pull hands it on: the fields reflectors and the gate need."""

    id: str
    seq: int
    summary: str
    interventions: tuple[tuple[str, str], ...]
    origin: str
    embedding: np.ndarray | None


@dataclass(frozen=True)
class Reflection:
    """A reflector's raw answer and what it covered."""

    answer: str
    considered: list[str]
    partial: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None


def resolve(requested: str | None, agent_default: str | None, settings: Settings) -> str:
    """The reflector a job uses: the job's choice, else the agent's, else llm when configured."""
    if requested is not None:
        return requested
    if agent_default is not None:
        return agent_default
    return "llm" if settings.llm_url else "heuristic"


def proposals_to_answer(proposals: Sequence[Proposal]) -> str:
    """Render proposals as the strict JSON array a model would answer with."""
    entries = []
    for proposal in proposals:
        entry: dict[str, Any] = {
            "op": proposal.op,
            "belief": proposal.belief,
            "confidence": proposal.confidence,
            "rationale": proposal.rationale,
            "source_episodes": list(proposal.source_episodes),
        }
        if proposal.target_belief_id is not None:
            entry["target_belief_id"] = proposal.target_belief_id
        entries.append(entry)
    return json.dumps(entries, ensure_ascii=False)


def _matrix(episodes: Sequence[PulledEpisode], dim: int) -> np.ndarray:
    matrix = np.zeros((len(episodes), dim), dtype=np.float32)
    for row, episode in enumerate(episodes):
        if episode.embedding is not None and episode.embedding.shape[0] == dim:
            matrix[row] = episode.embedding
    return matrix


async def reflect(
    name: str,
    episodes: Sequence[PulledEpisode],
    active: Sequence[LiveBelief],
    *,
    max_items: int,
    stub_output: str | None,
    embedder: Embedder,
    http: httpx.AsyncClient,
    settings: Settings,
    clock: Clock,
    sleep: Sleep = asyncio.sleep,
    feedback: ReviewerFeedback | None = None,
    forgotten: Sequence[LiveBelief] = (),
) -> Reflection:
    """Run one reflector over ``episodes`` (best-ranked first) and the agent's active beliefs.

    What the reviewer refused teaches both real reflectors: the llm one reads ``feedback`` in
    its prompt; the heuristic one drops lessons that near-duplicate a ``forgotten`` belief.
    """
    ids = [e.id for e in episodes]
    if name == "stub":
        if stub_output is None:
            raise ReflectorError("the stub reflector needs input_data.stub_output")
        return Reflection(answer=stub_output, considered=ids)
    if name == "heuristic":
        ordered = sorted(episodes, key=lambda e: e.seq)
        heuristic_episodes = [
            heuristic.HeuristicEpisode(
                id=e.id, summary=e.summary, interventions=e.interventions, origin=e.origin
            )
            for e in ordered
        ]
        texts = heuristic.intervention_texts(heuristic_episodes)
        said = await embedder.embed(texts) if texts else None
        drafts = heuristic.reflect(
            heuristic_episodes,
            _matrix(ordered, embedder.dim) if ordered else None,
            list(active),
            max_items=heuristic.UNBOUNDED if forgotten else max_items,
            intervention_embeddings=said,
        )
        proposals = drafts
        if forgotten and drafts:
            vectors = await embedder.embed([p.belief for p in drafts])
            proposals = heuristic.drop_refused(drafts, vectors, forgotten, max_items)
        return Reflection(answer=proposals_to_answer(proposals), considered=ids)
    if name == "llm":
        return await _reflect_llm(
            episodes,
            active,
            max_items=max_items,
            http=http,
            settings=settings,
            clock=clock,
            sleep=sleep,
            dim=embedder.dim,
            feedback=feedback,
        )
    raise ReflectorError(f"unknown reflector {name!r}")


async def _reflect_llm(
    episodes: Sequence[PulledEpisode],
    active: Sequence[LiveBelief],
    *,
    max_items: int,
    http: httpx.AsyncClient,
    settings: Settings,
    clock: Clock,
    sleep: Sleep,
    dim: int,
    feedback: ReviewerFeedback | None,
) -> Reflection:
    if not settings.llm_url:
        raise ReflectorError("the llm reflector needs CREDENCE_LLM_URL")
    if not episodes:  # nothing to reflect on: never pay for a call
        return Reflection(answer="[]", considered=[])
    prompt_episodes = [
        PromptEpisode(id=e.id, summary=e.summary, interventions=e.interventions, origin=e.origin)
        for e in episodes
    ]
    cap = settings.llm_token_cap
    try:
        plan = plan_prompt(
            prompt_episodes,
            _matrix(episodes, dim),
            active,
            max_items=max_items,
            token_cap=cap,
            feedback=feedback,
        )
        client = ChatClient(
            http,
            settings.llm_url,
            settings.llm_model or DEFAULT_LLM_MODEL,
            settings.llm_api_key,
            settings.llm_timeout_s,
            clock=clock,
            sleep=sleep,
        )
        answer = await client.complete(
            plan.messages,
            max_tokens=plan.max_completion_tokens,
            prompt_tokens=plan.prompt_tokens,
            token_cap=cap,
        )
    except LLMError as exc:
        raise ReflectorError(f"llm: {exc}") from exc
    partial = None
    if plan.omitted:
        partial = {
            "reason": "token_cap",
            "detail": (
                f"{len(plan.omitted)} of {len(episodes)} episodes left out to fit the token cap"
                f" of {cap}; they stay un-reflected for the next run"
            ),
            "episodes_omitted": len(plan.omitted),
        }
    if answer.finish_reason == "length":
        partial = {
            "reason": "token_cap",
            "detail": (
                f"the answer was cut at {plan.max_completion_tokens} completion tokens"
                " (finish_reason length)" + (f"; {partial['detail']}" if partial else "")
            ),
            "episodes_omitted": len(plan.omitted),
        }
    usage = {
        "attempts": answer.attempts,
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "token_cap": cap,
        "finish_reason": answer.finish_reason,
    }
    return Reflection(answer=answer.text, considered=plan.considered, partial=partial, usage=usage)
