"""Benchmark: the llm reflector's prompt in tokens, with and without the REFUSED/EDITED blocks."""

from __future__ import annotations

import asyncio
import random
import re
import tempfile
from pathlib import Path

from harness.fakes.llm import FakeLLM

from benchmarks.figures import figure
from credence.app import create_app
from credence.clock import rfc3339
from credence.memory.semantics.model import count_tokens
from credence.models import EpisodeIn, InterventionIn
from credence.reflection import jobs
from credence.reflection.engine import Engine
from credence.reflection.prompt import FEEDBACK_TOKEN_BUDGET, feedback_span
from credence.settings import Settings

SEED = 20261216
EPISODES = 30
ACTIVE = 20  # plus the EDITED ones, active too
REFUSED = 40
EDITED = 20
LEASE_S = 60.0
_WORDS_TEXT = (
    "deploy staging rollback migration friday pdf ingester upload invoice report export webhook"
    " token cache expiry metric units grams email draft reply formal signature database index"
    " tests push branch review lockfile yarn bun workspace docker python timeout retry queue"
)
_WORDS = _WORDS_TEXT.split()


def _sentence(rng: random.Random, words: int = 10) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


async def _seed(services, agent_id: str, rng: random.Random, decisions: bool) -> None:
    now = rfc3339(services.clock())
    # Both agents hold the same active memory (the rewritten beliefs included); only the taught
    # one remembers its refusals and the proposals' original words.
    beliefs = [(f"active {n}: {_sentence(rng)}", "active", None, None) for n in range(ACTIVE)]
    beliefs += [
        (f"kept {n}: {_sentence(rng)}", "active", None, f"draft {n}: {_sentence(rng, 14)}")
        for n in range(EDITED)
    ]
    beliefs += [
        (f"refused {n}: {_sentence(rng)}", "forgotten", f"Too vague: {_sentence(rng, 6)}", None)
        for n in range(REFUSED)
    ]
    if not decisions:
        beliefs = [
            (text, "active", None, None) for text, status, _, _ in beliefs if status == "active"
        ]
    rows = [
        {
            "id": f"b_{agent_id[:4]}{n:022d}",
            "content": content,
            "status": status,
            "reason": reason,
            "proposed": proposed,
            # Decision times shuffled, so refusals and rewrites interleave newest first.
            "at": f"2030-01-01T00:{(n * 37) % 60:02d}:{n % 60:02d}.000Z",
            "now": now,
        }
        for n, (content, status, reason, proposed) in enumerate(beliefs)
    ]

    async def insert(conn):
        await conn.run(
            "INSERT INTO agents(id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (agent_id, agent_id.title(), now, now),
        )
        await conn.run_many(
            "INSERT INTO beliefs(id, agent_id, content, content_key, status, confidence, op,"
            " provenance, created_at, updated_at, decided_at, forgotten_reason, proposed_content)"
            f" VALUES (:id, '{agent_id}', :content, lower(:content), :status, 0.7, 'add',"
            " 'clean', :now, :now, :at, :reason, :proposed)",
            rows,
        )

    await services.store.write(insert)
    episodes = [
        EpisodeIn(
            session_id="s1",
            summary=_sentence(rng, 30),
            interventions=[InterventionIn("steer", _sentence(rng, 6))],
        )
        for _ in range(EPISODES)
    ]
    await services.episodes.ingest(agent_id, episodes)


async def _prompt_tokens(services, engine: Engine, fake: FakeLLM, agent_id: str) -> int:
    job = await jobs.submit(
        services.store,
        agent_id=agent_id,
        trigger="manual",
        input_data={"agent_id": agent_id, "reflector": "llm"},
        now=rfc3339(services.clock()),
    )
    claimed = await jobs.claim(services.store, engine.owner, services.clock(), LEASE_S)
    assert claimed == job.id
    await engine.run(job.id)
    done = await jobs.get(services.store, job.id)
    assert done is not None and done.status == "succeeded", done
    messages = fake.requests[-1].body["messages"]
    return sum(count_tokens(_ID.sub(_FIXED_ID, message["content"])) for message in messages)


# Ids made at run time (episodes, jobs) are random base32, which the tokenizer cuts into more or
# fewer pieces from run to run; counted as one fixed id each, the two prompts compare as the
# same text would.
_ID = re.compile(r"\b([a-z]+)_[0-9a-z]{26}\b")


def _FIXED_ID(match: re.Match[str]) -> str:
    return f"{match.group(1)}_{'0' * 26}"


async def _measure_async() -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as fake:
        settings = Settings(data_dir=Path(tmp), scheduler=False, llm_url=fake.url)
        app = create_app(settings, components=[])
        async with app.lifespan():
            services = app.state.services
            await _seed(services, "plain", random.Random(SEED), decisions=False)
            await _seed(services, "taught", random.Random(SEED), decisions=True)
            engine = Engine(services.reflection, "wrk_bench", lease_s=LEASE_S)
            without = await _prompt_tokens(services, engine, fake, "plain")
            taught = await _prompt_tokens(services, engine, fake, "taught")
            user = fake.requests[-1].body["messages"][1]["content"]
            blocks = count_tokens(feedback_span(user))
            assert "BEGIN REFUSED" in user and "BEGIN EDITED" in user
    shape = f"{EPISODES} episodes, {ACTIVE + EDITED} active beliefs"
    return [
        figure(
            f"llm reflector prompt without REFUSED/EDITED ({shape})",
            [float(without)],
            settings.llm_token_cap,
            unit="tokens",
        ),
        figure(
            f"llm reflector prompt with REFUSED/EDITED ({REFUSED} refusals, {EDITED} rewrites)",
            [float(taught)],
            float(without + FEEDBACK_TOKEN_BUDGET),
            unit="tokens",
        ),
        figure(
            "REFUSED + EDITED blocks (bundled WordPiece tokenizer)",
            [float(blocks)],
            float(FEEDBACK_TOKEN_BUDGET),
            unit="tokens",
        ),
    ]


def measure() -> list[dict]:
    """Token counts of one llm reflection prompt per agent, as the loopback model received it."""
    return asyncio.run(_measure_async())


if __name__ == "__main__":
    for row in measure():
        print(f"{row['name']}: {row['median']:.0f} {row['unit']} (target {row['target']})")
