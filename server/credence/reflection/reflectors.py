"""The three reflectors behind the propose step: llm, heuristic (the default) and stub."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

import httpx
import msgspec
import numpy as np

from credence.clock import Clock
from credence.embed import Embedder
from credence.memory.lifecycle.feedback import ReviewerFeedback
from credence.memory.semantics.gate import LiveBelief, Proposal
from credence.models import JobPartial, JobUsage, ReflectorName
from credence.reflection import heuristic
from credence.reflection.llm import ChatClient, LLMError, Sleep, plan_prompt
from credence.reflection.pulled import PulledEpisode
from credence.settings import Settings

DEFAULT_LLM_MODEL = "default"


class ReflectorError(RuntimeError):
    """The reflector could not produce an answer; the message says why."""


class Reflection(msgspec.Struct, frozen=True):
    """A reflector's raw answer and what it covered."""

    answer: str
    considered: list[str]
    partial: JobPartial | None = None
    usage: JobUsage | None = None


class Reflector(Protocol):
    """Turns pulled episodes (best-ranked first) into a raw answer: a JSON array of diffs.

    A reflector is chosen once, by name, when a job's propose step builds it (:func:`choose`);
    after that it is an object with this one method.
    """

    name: ReflectorName

    async def reflect(
        self,
        episodes: Sequence[PulledEpisode],
        active: Sequence[LiveBelief],
        *,
        max_items: int,
        feedback: ReviewerFeedback,
        forgotten: Sequence[LiveBelief],
    ) -> Reflection:
        """Reflect once; raises ReflectorError (or EmbeddingUnavailable) when it cannot."""
        ...


def resolve(
    requested: ReflectorName | None, agent_default: ReflectorName | None, settings: Settings
) -> ReflectorName:
    """The reflector a job uses: the job's choice, else the agent's, else llm when configured."""
    if requested is not None:
        return requested
    if agent_default is not None:
        return agent_default
    return "llm" if settings.llm_url else "heuristic"


def choose(
    name: ReflectorName,
    *,
    stub_output: str | None,
    embedder: Embedder,
    http: httpx.AsyncClient,
    settings: Settings,
    clock: Clock,
    sleep: Sleep,
) -> Reflector:
    """Build the reflector called ``name`` with what it needs; ReflectorError when it cannot run."""
    if name == "stub":
        if stub_output is None:
            raise ReflectorError("the stub reflector needs input_data.stub_output")
        return StubReflector(stub_output)
    if name == "heuristic":
        return HeuristicReflector(embedder)
    if name == "llm":
        if not settings.llm_url:
            raise ReflectorError("the llm reflector needs CREDENCE_LLM_URL")
        client = ChatClient(
            http,
            settings.llm_url,
            settings.llm_model or DEFAULT_LLM_MODEL,
            settings.llm_api_key,
            settings.llm_timeout_s,
            clock=clock,
            sleep=sleep,
        )
        return LLMReflector(client, settings.llm_token_cap, embedder.dim)
    raise ReflectorError(f"unknown reflector {name!r}")


def proposals_to_answer(proposals: Sequence[Proposal]) -> str:
    """Render proposals as the strict JSON array a model would answer with."""
    entries = []
    for proposal in proposals:
        entry: dict[str, object] = {
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


async def _belief_matrix(active: Sequence[LiveBelief], embedder: Embedder) -> np.ndarray | None:
    """Rows aligned with ``active``: each belief's stored embedding, or its text embedded now."""
    if not active:
        return None
    matrix = np.zeros((len(active), embedder.dim), dtype=np.float32)
    missing = []
    for row, belief in enumerate(active):
        if belief.embedding is not None and belief.embedding.shape == (embedder.dim,):
            matrix[row] = belief.embedding
        else:
            missing.append(row)
    if missing:
        matrix[missing] = await embedder.embed([active[row].content for row in missing])
    return matrix


class StubReflector:
    """Answers with the text the job was submitted with (tests, demos, replays)."""

    name: ReflectorName = "stub"

    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def reflect(
        self,
        episodes: Sequence[PulledEpisode],
        active: Sequence[LiveBelief],
        *,
        max_items: int,
        feedback: ReviewerFeedback,
        forgotten: Sequence[LiveBelief],
    ) -> Reflection:
        """The stored answer, covering every pulled episode."""
        return Reflection(answer=self.answer, considered=[e.id for e in episodes])


class HeuristicReflector:
    """Lessons from the user's corrections and rules, with no model call.

    What the reviewer refused teaches it too: lessons that near-duplicate a forgotten belief
    are dropped before the cap applies.
    """

    name: ReflectorName = "heuristic"

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    async def reflect(
        self,
        episodes: Sequence[PulledEpisode],
        active: Sequence[LiveBelief],
        *,
        max_items: int,
        feedback: ReviewerFeedback,
        forgotten: Sequence[LiveBelief],
    ) -> Reflection:
        """Run the heuristic over ``episodes`` in arrival order."""
        embedder = self.embedder
        ordered = sorted(episodes, key=lambda e: e.seq)
        texts = heuristic.intervention_texts(ordered)
        sentences = heuristic.sentence_texts(ordered)
        said = sentence_rows = None
        if texts:  # one call: the interventions, then their sentences
            rows = await embedder.embed(texts + sentences)
            said, sentence_rows = rows[: len(texts)], rows[len(texts) :]
        drafts = heuristic.reflect(
            ordered,
            _matrix(ordered, embedder.dim) if ordered else None,
            list(active),
            max_items=heuristic.UNBOUNDED if forgotten else max_items,
            intervention_embeddings=said,
            active_embeddings=await _belief_matrix(active, embedder) if said is not None else None,
            sentence_embeddings=sentence_rows,
        )
        proposals = drafts
        if forgotten and drafts:
            vectors = await embedder.embed([p.belief for p in drafts])
            proposals = heuristic.drop_refused(drafts, vectors, forgotten, max_items)
        return Reflection(
            answer=proposals_to_answer(proposals), considered=[e.id for e in episodes]
        )


class LLMReflector:
    """One chat completion under the token cap; the reviewer's feedback is in its prompt."""

    name: ReflectorName = "llm"

    def __init__(self, client: ChatClient, token_cap: int, dim: int) -> None:
        self.client = client
        self.token_cap = token_cap
        self.dim = dim

    async def reflect(
        self,
        episodes: Sequence[PulledEpisode],
        active: Sequence[LiveBelief],
        *,
        max_items: int,
        feedback: ReviewerFeedback,
        forgotten: Sequence[LiveBelief],
    ) -> Reflection:
        """Ask the model once (with retries); episodes that do not fit the cap stay out."""
        if not episodes:  # nothing to reflect on: never pay for a call
            return Reflection(answer="[]", considered=[])
        cap = self.token_cap
        try:
            plan = plan_prompt(
                episodes,
                _matrix(episodes, self.dim),
                active,
                max_items=max_items,
                token_cap=cap,
                feedback=feedback,
            )
            answer = await self.client.complete(
                plan.messages,
                max_tokens=plan.max_completion_tokens,
                prompt_tokens=plan.prompt_tokens,
                token_cap=cap,
            )
        except LLMError as exc:
            raise ReflectorError(f"llm: {exc}") from exc
        partial = None
        if plan.omitted:
            partial = JobPartial(
                reason="token_cap",
                detail=(
                    f"{len(plan.omitted)} of {len(episodes)} episodes left out to fit the token"
                    f" cap of {cap}; they stay un-reflected for the next run"
                ),
                episodes_omitted=len(plan.omitted),
            )
        if answer.finish_reason == "length":
            partial = JobPartial(
                reason="token_cap",
                detail=(
                    f"the answer was cut at {plan.max_completion_tokens} completion tokens"
                    " (finish_reason length)" + (f"; {partial.detail}" if partial else "")
                ),
                episodes_omitted=len(plan.omitted),
            )
        usage = JobUsage(
            attempts=answer.attempts,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            token_cap=cap,
            finish_reason=answer.finish_reason,
        )
        return Reflection(
            answer=answer.text, considered=plan.considered, partial=partial, usage=usage
        )
