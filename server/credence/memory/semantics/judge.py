"""An optional LLM judge for pairs structure cannot settle: it can only route to review."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Final

import httpx
import msgspec

from credence.memory.semantics.belief_index import BeliefIndex
from credence.memory.semantics.gate_terms import GateResult, Proposal
from credence.memory.semantics.relation import Relation, relate
from credence.models import GateVerdict
from credence.models.reasons import Reason

# What the judge is asked; the answer must be one JSON object and nothing else.
PROMPT: Final = (
    "You compare two short rules an assistant keeps about its user. Answer with one JSON "
    'object and nothing else: {"relation": R, "why": W} where R is one of "duplicate" '
    '(the same rule in other words), "contradiction" (following one breaks the other, or a '
    'value such as a person, tool, number, unit, time or place changed), "refinement" (the '
    'second adds detail to the first), "compatible" or "unrelated"; W is at most 20 words.'
)
RELATIONS: Final = frozenset(
    {"duplicate", "contradiction", "refinement", "compatible", "unrelated"}
)
MAX_WHY_CHARS: Final = 160
# The gate waits at most this long for the judge before it keeps the offline answer.
JUDGE_TIMEOUT_S: Final = 10.0


class Verdict(msgspec.Struct, frozen=True):
    """The judge's strict answer."""

    relation: str
    why: str = ""


class LLMJudge:
    """Asks an OpenAI-compatible chat endpoint about one pair at a time.

    Answers are cached by the pair's digest; at most ``budget`` requests are sent per run
    (:meth:`new_run` starts one); a timeout, an HTTP error, a spent budget or an answer that
    is not the strict JSON object falls back to the offline relation. The judge never makes a
    pair a duplicate: a "duplicate" answer leaves the pair for a reviewer, a "contradiction"
    flags it. Nothing is rejected on the judge's word alone.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 10.0,
        budget: int = 20,
    ) -> None:
        self.http = http
        self.endpoint = f"{url.rstrip('/')}/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.budget = budget
        self.spent = 0
        self._cache: dict[str, Verdict] = {}

    def new_run(self) -> None:
        """Start a new run: the request budget is full again; cached answers stay."""
        self.spent = 0

    async def settle(self, old: str, new: str, offline: Relation) -> Relation:
        """The relation after asking the judge, or ``offline`` when it cannot answer."""
        verdict = await self._verdict(old, new)
        if verdict is None:
            return offline
        why = verdict.why[:MAX_WHY_CHARS]
        if verdict.relation == "contradiction":
            return Relation(
                "contradiction",
                offline.score,
                offline.contradiction or "value_change",
                offline.changes,
                f"LLM judge: {why}",
            )
        # Any other answer keeps the offline kind; a pair it calls a duplicate still goes to a
        # human, who sees the judge's note.
        return msgspec.structs.replace(offline, evidence=f"LLM judge ({verdict.relation}): {why}")

    async def _verdict(self, old: str, new: str) -> Verdict | None:
        digest = pair_digest(old, new)
        if digest in self._cache:
            return self._cache[digest]
        if self.spent >= self.budget:
            return None
        self.spent += 1
        verdict = await self._ask(old, new)
        if verdict is not None:
            self._cache[digest] = verdict
        return verdict

    async def _ask(self, old: str, new: str) -> Verdict | None:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": json.dumps({"first": old, "second": new})},
            ],
        }
        try:
            response = await self.http.post(
                self.endpoint, json=body, headers=headers, timeout=self.timeout_s
            )
            response.raise_for_status()
            content = response.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError):
            return None
        return parse_verdict(content)


def parse_verdict(content: object) -> Verdict | None:
    """The strict answer in ``content``, or None for anything else."""
    if not isinstance(content, str):
        return None
    try:
        verdict = msgspec.json.decode(content.strip(), type=Verdict)
    except msgspec.ValidationError:
        return None
    except msgspec.DecodeError:
        return None
    return verdict if verdict.relation in RELATIONS else None


def pair_digest(old: str, new: str) -> str:
    """The cache key of an ordered pair."""
    return hashlib.sha256(f"{old}\x00{new}".encode()).hexdigest()


async def settle_unsettled(
    judge: LLMJudge,
    proposals: Sequence[Proposal],
    results: Sequence[GateResult],
    index: BeliefIndex,
) -> list[GateResult]:
    """Ask the judge about each ``unsettled`` pair; a contradiction becomes ``contradicts``
    the same belief. Verdicts only gain flags: nothing becomes a duplicate here."""
    judge.new_run()
    settled = []
    for proposal, result in zip(proposals, results, strict=True):
        reasons = list(result.reasons)
        for position, reason in enumerate(result.reasons):
            belief_id = reason.target
            if reason.kind != "unsettled" or belief_id is None:
                continue
            content = index.content_of(belief_id)
            if content is None:
                continue
            offline = relate(content, proposal.belief, 0.0)
            answer = await judge.settle(content, proposal.belief, offline)
            if answer.kind == "contradiction":
                reasons[position] = Reason("contradicts", belief_id)
        gate: GateVerdict = result.gate
        settled.append(GateResult(index=result.index, gate=gate, reasons=tuple(reasons)))
    return settled
