"""A labelled retrieval set: agents' active beliefs and task queries, each needing one belief.

Generated deterministically from the templates and vocabulary below. Every agent holds one
belief per (service, aspect), with slot values (tools, teams, people, numbers, regions,
formats) drawn per agent, so the same topic recurs across agents with other values. A query
names its service and asks about its aspect in other words than the belief uses. Around the
belief it needs sit near-topic distractors (the same service's other aspects, the same aspect
of every other service, the same topic in other agents), beliefs of the agent's other role, and
confident general lessons that no query is about: the belief a query needs is kept with a
lower confidence than almost all of them, so confidence alone never finds it.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np

from credence.clock import rfc3339
from credence.memory.read.prompt_block import block_nonce, parse_prompt_block
from credence.memory.semantics.model import TOKENIZER_FILE
from credence.memory.semantics.tokens import normalise

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from credence.db.store import Store
    from credence.embed import Embedder

SEED = 16
AGENTS = {
    "ops-bot": ("oncall", "release"),
    "dev-bot": ("backend", "frontend"),
    "support-bot": ("tier1", "tier2"),
    "data-bot": ("etl", "reporting"),
}
SERVICES = (
    "billing",
    "search",
    "auth",
    "payments",
    "inventory",
    "shipping",
    "notifications",
    "ledger",
    "gateway",
    "scheduler",
    "checkout",
    "catalog",
    "profiles",
    "media",
    "analytics",
    "invoicing",
    "recommendations",
    "onboarding",
    "geocoding",
    "telemetry",
    "warehouse",
    "pricing",
    "subscriptions",
    "messaging",
    "identity",
    "reviews",
    "loyalty",
    "refunds",
    "fulfilment",
    "compliance",
)
TOOLS = ("yarn", "pnpm", "bun", "terraform", "helm", "ansible", "bazel", "gradle", "poetry", "uv")
TEAMS = ("platform", "data", "security", "mobile", "growth", "infra", "finance", "web")
PEOPLE = ("Dana", "Priya", "Tomasz", "Aiko", "Lars", "Fatima", "Mateo", "Chen", "Olu", "Sven")
REGIONS = ("eu-west-1", "us-east-2", "ap-south-1", "eu-central-1", "us-west-2", "sa-east-1")
FORMATS = ("CSV", "Parquet", "JSON lines", "PDF", "XLSX", "Avro")
CHECKS = ("the linter", "the contract tests", "the load test", "the migration dry run")

# (belief template, query templates): the query asks what the belief answers, in other words.
ASPECTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Deploy {service} with {tool}, never by hand",
        ("ship a new release of {service}", "how do we roll out {service} to production"),
    ),
    (
        "The {service} service keeps its logs for {days} days",
        ("how long are {service} logs retained", "can I still read last month's {service} logs"),
    ),
    (
        "Page the {team} team when {service} latency exceeds {ms} ms",
        ("{service} latency is high, who gets paged", "{service} responses are slow, alert whom"),
    ),
    (
        "Back up the {service} database every {hours} hours to {region}",
        ("how often is the {service} database backed up", "where do {service} backups go"),
    ),
    (
        "{service} exports its reports as {fmt}",
        ("what file format do {service} reports come in", "export a {service} report"),
    ),
    (
        "Ask {person} before changing the {service} schema",
        ("I need to alter a {service} table column", "who approves {service} schema changes"),
    ),
    (
        "Rotate the {service} API keys every {days} days",
        ("when do the {service} API keys get rotated", "is the {service} key due for rotation"),
    ),
    (
        "The {service} staging cluster runs in {region}",
        ("which region hosts {service} staging", "connect to the {service} staging environment"),
    ),
    (
        "Run {check} before merging changes to {service}",
        ("checks required before merging a {service} pull request", "merge my {service} change"),
    ),
    (
        "The {service} rate limit is {rpm} requests per minute per client",
        ("what is the {service} rate limit", "how many {service} requests per minute may I send"),
    ),
)
# Confident lessons no query asks about: without a query they fill the whole top ten.
GENERAL = (
    "Always write a failing test before fixing a bug",
    "Prefer small pull requests that do one thing",
    "Write commit messages in the imperative mood",
    "Never paste customer data into chat tools",
    "Summarise long threads before asking for a decision",
    "Use UTC in every timestamp you write down",
    "Reply to customers in the language they wrote in",
    "Keep meeting notes in the shared drive",
    "Double-check units when converting numbers",
    "Link the ticket in every pull request description",
    "Close stale branches after a release",
    "Label flaky tests instead of retrying them silently",
)
QUERIES_PER_AGENT = 30
EPISODES_PER_AGENT = 60
# Finished turns in the shape the turn extractor writes them, so blocks carry real specifics.
EPISODE_TEMPLATE = "Request: {request} {service} | Did: {did} | Outcome: {outcome}"
REQUESTS = ("release", "debug a timeout in", "add a field to", "review the alerts of", "migrate")
DIDS = (
    "edited the config and opened a pull request",
    "ran the test suite, then the deploy script",
    "read the dashboards and the last day of logs",
    "wrote a migration and a rollback for it",
    "paired with the owners and updated the runbook",
)
OUTCOMES = (
    "merged after one review round",
    "CI failed on a flaky contract test",
    "latency back under the alert threshold",
    "the customer confirmed the fix",
    "rolled back after the error rate doubled",
)


@dataclass(frozen=True)
class SetBelief:
    """One active belief of the set."""

    belief_id: str
    agent_id: str
    role: str | None
    content: str
    confidence: float
    age_days: float


@dataclass(frozen=True)
class SetQuery:
    """A task query, the role it is asked for, and the one belief it needs."""

    agent_id: str
    role: str | None
    text: str
    needed: str


@dataclass(frozen=True)
class SetEpisode:
    """One finished turn of an agent, some days ago."""

    agent_id: str
    summary: str
    age_days: float


@dataclass(frozen=True)
class RetrievalSet:
    """The beliefs, the labelled queries over them, and the agents' recent episodes."""

    beliefs: tuple[SetBelief, ...]
    queries: tuple[SetQuery, ...]
    episodes: tuple[SetEpisode, ...]


def build(seed: int = SEED) -> RetrievalSet:
    """The set, the same for the same seed."""
    rng = random.Random(seed)
    beliefs: list[SetBelief] = []
    queries: list[SetQuery] = []
    episodes: list[SetEpisode] = []
    for agent_id, roles in AGENTS.items():
        agent_beliefs: dict[tuple[int, int], SetBelief] = {}
        for s, service in enumerate(SERVICES):
            for a, (template, _) in enumerate(ASPECTS):
                role = rng.choice((None, roles[0], roles[1]))
                content = template.format(
                    service=service,
                    tool=rng.choice(TOOLS),
                    team=rng.choice(TEAMS),
                    person=rng.choice(PEOPLE),
                    region=rng.choice(REGIONS),
                    fmt=rng.choice(FORMATS),
                    check=rng.choice(CHECKS),
                    days=rng.choice((7, 14, 30, 45, 90, 180)),
                    hours=rng.choice((1, 4, 6, 12, 24)),
                    ms=rng.choice((200, 250, 500, 800, 1200)),
                    rpm=rng.choice((60, 120, 300, 600, 1000)),
                )
                content = content[0].upper() + content[1:]
                belief = SetBelief(
                    f"b_{agent_id}_{s:02d}_{a:02d}",
                    agent_id,
                    role,
                    content,
                    round(rng.uniform(0.7, 0.99), 3),
                    round(rng.uniform(0, 60), 2),
                )
                agent_beliefs[(s, a)] = belief
        for g, lesson in enumerate(GENERAL):
            beliefs.append(
                SetBelief(f"b_{agent_id}_general_{g:02d}", agent_id, None, lesson, 0.99, 1.0)
            )
        for s, a in rng.sample(sorted(agent_beliefs), QUERIES_PER_AGENT):
            belief = agent_beliefs[(s, a)]
            # Needed beliefs are kept with less confidence than nearly every distractor.
            agent_beliefs[(s, a)] = SetBelief(
                belief.belief_id,
                agent_id,
                belief.role,
                belief.content,
                round(rng.uniform(0.55, 0.7), 3),
                belief.age_days,
            )
            role = belief.role if belief.role is not None else rng.choice((None, *roles))
            text = rng.choice(ASPECTS[a][1]).format(service=SERVICES[s])
            queries.append(SetQuery(agent_id, role, text, belief.belief_id))
        beliefs += agent_beliefs.values()
        for _ in range(EPISODES_PER_AGENT):
            summary = EPISODE_TEMPLATE.format(
                request=rng.choice(REQUESTS),
                service=rng.choice(SERVICES),
                did=rng.choice(DIDS),
                outcome=rng.choice(OUTCOMES),
            )
            episodes.append(SetEpisode(agent_id, summary, round(rng.uniform(0, 30), 2)))
    return RetrievalSet(tuple(beliefs), tuple(queries), tuple(episodes))


async def seed(store: Store, embedder: Embedder, now: datetime, data: RetrievalSet) -> None:
    """Store the set's agents, its beliefs as active, human-kept memory, and its episodes.

    Rows go straight into the tables (the triggers index their text), with real embeddings.
    """
    vectors = np.asarray(await embedder.embed([b.content for b in data.beliefs]), dtype="<f4")
    episode_vectors = np.asarray(
        await embedder.embed([e.summary for e in data.episodes]), dtype="<f4"
    )
    stamp = rfc3339(now)

    async def work(conn) -> None:
        await conn.run_many(
            "INSERT INTO agents(id, name, roles, settings, created_at, updated_at)"
            " VALUES (?, ?, ?, '{\"lambda_per_day\": 0.02}', ?, ?)",
            [
                (agent_id, agent_id, json.dumps(list(roles)), stamp, stamp)
                for agent_id, roles in AGENTS.items()
            ],
        )
        rows = []
        for belief, vector in zip(data.beliefs, vectors, strict=True):
            made = rfc3339(now - timedelta(days=belief.age_days))
            rows.append(
                (
                    belief.belief_id,
                    belief.agent_id,
                    belief.role,
                    belief.content,
                    normalise(belief.content),
                    belief.confidence,
                    made,
                    made,
                    stamp,
                    vector.tobytes(),
                )
            )
        await conn.run_many(
            "INSERT INTO beliefs(id, agent_id, role, content, content_key, status, confidence,"
            " op, provenance, created_at, updated_at, decided_by, decided_at, version, embedding)"
            " VALUES (?, ?, ?, ?, ?, 'active', ?, 'add', 'clean', ?, ?, 'key:set', ?, 2, ?)",
            rows,
        )
        await conn.run_many(
            "INSERT INTO episodes(id, agent_id, session_id, finished_at, summary, origin,"
            " created_at, embedding) VALUES (?, ?, 'set', ?, ?, 'clean', ?, ?)",
            [
                (
                    f"ep_{n:05d}",
                    episode.agent_id,
                    rfc3339(now - timedelta(days=episode.age_days)),
                    episode.summary,
                    stamp,
                    vector.tobytes(),
                )
                for n, (episode, vector) in enumerate(
                    zip(data.episodes, episode_vectors, strict=True)
                )
            ],
        )
        # Made by this embedder: a server started on this data has nothing to backfill.
        await conn.run("UPDATE beliefs SET embedding_model = ?", (embedder.name,))
        await conn.run("UPDATE episodes SET embedding_model = ?", (embedder.name,))

    await store.write(work)


def recall_at(served: list[list[str]], data: RetrievalSet) -> float:
    """The share of queries whose needed belief is among the ids served for it."""
    found = sum(q.needed in ids for q, ids in zip(data.queries, served, strict=True))
    return found / len(data.queries)


def bundled_tokenizer() -> Tokenizer:
    """The sentence model's WordPiece tokenizer, bundled with Credence, from its own file."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_FILE))
    tokenizer.no_padding()  # the file's settings pad and truncate to 128: counts must not
    tokenizer.no_truncation()
    return tokenizer


def block_tokens(block: str, tokenizer: Tokenizer) -> tuple[int, int]:
    """(tokens of the block's items' text, tokens of the whole block)."""
    items = parse_prompt_block(block, block_nonce(block))
    encodings = tokenizer.encode_batch([item.text for item in items], add_special_tokens=False)
    content = sum(len(encoding.ids) for encoding in encodings)
    return content, len(tokenizer.encode(block, add_special_tokens=False).ids)
