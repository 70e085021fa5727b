"""The llm reflector: one OpenAI-compatible chat completion under a token cap, with retries."""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np

from credence.clock import Clock
from credence.memory.lifecycle.feedback import ReviewerFeedback
from credence.memory.semantics.gate import LiveBelief
from credence.memory.semantics.model import count_tokens
from credence.observe import metrics, tracing
from credence.reflection.cluster import greedy_clusters
from credence.reflection.prompt import build_messages, fit_feedback
from credence.reflection.pulled import PulledEpisode

MAX_ATTEMPTS = 4
BACKOFF_S = (1.0, 2.0, 4.0)
# A job waits at most this long for one Retry-After; a longer ask fails the step with the wait.
MAX_RETRY_WAIT_S = 30.0
MAX_COMPLETION_TOKENS = 2048
MAX_PROMPT_BELIEFS = 100
CLUSTER_COSINE = 0.75
# No tokenizer for an unknown model: estimate conservatively from UTF-8 bytes.
BYTES_PER_TOKEN = 3.5
MESSAGE_OVERHEAD_TOKENS = 8
_SNIPPET = 300

Sleep = Callable[[float], Awaitable[None]]


class LLMError(RuntimeError):
    """The model could not give an answer (down, refused, timed out, over the token cap)."""


@dataclass(frozen=True)
class PromptPlan:
    """What one call will show the model, fitted to the token cap."""

    messages: list[dict[str, str]]
    considered: list[str]
    omitted: list[str]
    beliefs_shown: int
    prompt_tokens: int
    max_completion_tokens: int


@dataclass(frozen=True)
class LLMAnswer:
    """The model's raw text and what producing it cost."""

    text: str
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None


def estimate_tokens(messages: Sequence[dict[str, str]]) -> int:
    """A conservative token estimate for chat messages (no model tokenizer is available)."""
    total = 0
    for message in messages:
        total += MESSAGE_OVERHEAD_TOKENS + math.ceil(
            len(message["content"].encode("utf-8")) / BYTES_PER_TOKEN
        )
    return total


def _relevant_beliefs(
    active: Sequence[LiveBelief], episode_vectors: np.ndarray, limit: int
) -> list[LiveBelief]:
    """The active beliefs most similar to the episodes (then the most confident), at most limit."""
    candidates = [b for b in active if b.status == "active"]
    if len(candidates) <= limit:
        return candidates

    def relevance(belief: LiveBelief) -> float:
        if belief.embedding is None or episode_vectors.size == 0:
            return -1.0
        vector = np.asarray(belief.embedding, dtype=np.float32).ravel()
        if vector.shape[0] != episode_vectors.shape[1]:
            return -1.0
        return float(np.max(episode_vectors @ vector))

    ranked = sorted(candidates, key=lambda b: (-relevance(b), -b.confidence, b.id))
    return ranked[:limit]


def plan_prompt(
    episodes: Sequence[PulledEpisode],
    embeddings: np.ndarray,
    active: Sequence[LiveBelief],
    *,
    max_items: int,
    token_cap: int,
    feedback: ReviewerFeedback | None = None,
) -> PromptPlan:
    """Fit the prompt to the cap by leaving out the lowest-ranked episodes (pure).

    The reviewer's recent refusals and rewrites (``feedback``) get their own fixed budget,
    counted with the bundled tokenizer, before episodes are fitted around them.

    ``episodes`` come best-ranked first with ``embeddings`` aligned. The completion keeps a
    reserve (a quarter of the cap, at most MAX_COMPLETION_TOKENS); the prompt gets the rest.
    Shown episodes are clustered greedily by cosine and listed by cluster. Raises LLMError
    when not even one episode fits.
    """
    reserve = min(MAX_COMPLETION_TOKENS, token_cap // 4)
    budget = token_cap - reserve
    vectors = np.asarray(embeddings, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(episodes):
        raise ValueError(f"{vectors.shape} embeddings for {len(episodes)} episodes")
    beliefs = _relevant_beliefs(active, vectors, MAX_PROMPT_BELIEFS)
    lessons = fit_feedback(feedback, count_tokens) if feedback is not None else None

    def build(count: int) -> list[dict[str, str]]:
        shown = list(range(count))
        clusters = greedy_clusters(vectors[shown], CLUSTER_COSINE) if count else []
        grouped = [[episodes[shown[i]] for i in cluster] for cluster in clusters]
        return build_messages(grouped, beliefs, max_items, lessons)

    count = len(episodes)
    messages = build(count)
    if estimate_tokens(messages) > budget:
        low, high = 0, count  # invariant: `low` fits (or is 0), `high` does not
        while high - low > 1:
            middle = (low + high) // 2
            if estimate_tokens(build(middle)) <= budget:
                low = middle
            else:
                high = middle
        count = low
        if count == 0:
            raise LLMError(
                f"the token cap of {token_cap} leaves no room for a single episode"
                f" next to {len(beliefs)} active beliefs; raise CREDENCE_LLM_TOKEN_CAP"
            )
        messages = build(count)
    prompt_tokens = estimate_tokens(messages)
    return PromptPlan(
        messages=messages,
        considered=[e.id for e in episodes[:count]],
        omitted=[e.id for e in episodes[count:]],
        beliefs_shown=len(beliefs),
        prompt_tokens=prompt_tokens,
        max_completion_tokens=max(1, min(MAX_COMPLETION_TOKENS, token_cap - prompt_tokens)),
    )


def retry_after_seconds(value: str | None, clock: Clock) -> float | None:
    """Seconds a Retry-After header asks for (delta-seconds or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment is None or moment.tzinfo is None:
        return None
    return max(0.0, (moment - clock()).total_seconds())


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


def _content_of(payload: Any) -> tuple[str, str | None, dict[str, Any]]:
    if not isinstance(payload, dict):
        raise LLMError("the chat completion is not a JSON object")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LLMError("the chat completion has no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # some servers answer with content parts
        content = (
            "".join(part.get("text", "") for part in content if isinstance(part, dict)) or None
        )
    if not isinstance(content, str):
        raise LLMError("the chat completion's message has no text content")
    finish = choices[0].get("finish_reason")
    usage = payload.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    return content, finish if isinstance(finish, str) else None, usage


class ChatClient:
    """``POST {url}/chat/completions`` with temperature 0, a timeout and bounded retries."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        model: str,
        api_key: str | None,
        timeout_s: float,
        *,
        clock: Clock,
        sleep: Sleep = asyncio.sleep,
        max_attempts: int = MAX_ATTEMPTS,
        max_retry_wait_s: float = MAX_RETRY_WAIT_S,
    ) -> None:
        self.http = http
        self.endpoint = f"{url.rstrip('/')}/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.clock = clock
        self.sleep = sleep
        self.max_attempts = max_attempts
        self.max_retry_wait_s = max_retry_wait_s

    async def complete(
        self, messages: list[dict[str, str]], *, max_tokens: int, prompt_tokens: int, token_cap: int
    ) -> LLMAnswer:
        """One answer for ``messages``, in a GenAI client span with the token usage."""
        with tracing.llm_span("openai", self.model, urlsplit(self.endpoint).hostname) as span:
            answer = await self._complete(
                messages, max_tokens=max_tokens, prompt_tokens=prompt_tokens, token_cap=token_cap
            )
            tracing.record_usage(span, answer.prompt_tokens, answer.completion_tokens)
            if answer.finish_reason:
                span.set_attribute("gen_ai.response.finish_reasons", [answer.finish_reason])
        metrics.observe_llm_tokens(answer.prompt_tokens, answer.completion_tokens)
        return answer

    async def _complete(
        self, messages: list[dict[str, str]], *, max_tokens: int, prompt_tokens: int, token_cap: int
    ) -> LLMAnswer:
        """One answer for ``messages``; retries 429/5xx/timeouts within the token cap."""
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": max_tokens,
            "stream": False,
        }
        # Tokens a server may have spent on attempts that gave no answer: a timed-out request
        # may have been processed in full, so it counts as its prompt plus the whole completion.
        spent = 0
        problem = ""
        for attempt in range(1, self.max_attempts + 1):
            if spent + prompt_tokens + max_tokens > token_cap:
                raise LLMError(
                    f"another attempt would pass the token cap of {token_cap}"
                    f" (after {attempt - 1} attempts: {problem})"
                )
            wait = BACKOFF_S[min(attempt - 1, len(BACKOFF_S) - 1)]
            try:
                response = await self.http.post(
                    self.endpoint, json=body, headers=headers, timeout=self.timeout_s
                )
            except httpx.TimeoutException:
                spent += prompt_tokens + max_tokens
                problem = f"timed out after {self.timeout_s:g} s"
            except httpx.HTTPError as exc:
                problem = f"unreachable: {type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if status == 200:
                    try:
                        payload = response.json()
                    except (ValueError, json.JSONDecodeError):
                        raise LLMError(
                            f"the model answered HTTP 200 with a body that is not JSON:"
                            f" {_snippet(response.text)}"
                        ) from None
                    content, finish, usage = _content_of(payload)
                    return LLMAnswer(
                        text=content,
                        attempts=attempt,
                        prompt_tokens=_count(usage.get("prompt_tokens"), prompt_tokens),
                        completion_tokens=_count(
                            usage.get("completion_tokens"),
                            math.ceil(len(content.encode("utf-8")) / BYTES_PER_TOKEN),
                        ),
                        finish_reason=finish,
                    )
                problem = f"HTTP {status}: {_snippet(response.text)}"
                if status != 429 and status < 500:
                    raise LLMError(f"the model refused the request: {problem}")
                asked = retry_after_seconds(response.headers.get("Retry-After"), self.clock)
                if asked is not None:
                    if asked > self.max_retry_wait_s:
                        raise LLMError(
                            f"{problem}; it asked to retry after {asked:g} s, longer than the"
                            f" {self.max_retry_wait_s:g} s a job waits"
                        )
                    wait = asked
            if attempt < self.max_attempts:
                await self.sleep(wait)
        raise LLMError(f"no answer after {self.max_attempts} attempts: {problem}")


def _count(reported: Any, estimate: int) -> int:
    if isinstance(reported, int) and not isinstance(reported, bool) and reported >= 0:
        return reported
    return estimate
