"""`credence demo`: load the demo agents and episodes, reflect once, serve with a pairing link."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import msgspec

from credence.access.pairing import create_pairing_code
from credence.access.principal import Principal
from credence.clock import fixed_clock, rfc3339
from credence.db import demo as db_demo
from credence.db.engine import Connection
from credence.memory.lifecycle.beliefs import BeliefHooks, BeliefService
from credence.memory.lifecycle.decisions import Keep, etag
from credence.models import AgentIn, EpisodeIn, JobIn, JobInputIn, ProposalIn, ProposedBy
from credence.reflection.seed import Manifest, apply_manifest, strip_comments
from credence.services import Services
from credence.settings import Settings

# A built wheel carries the example manifests inside the package (setup.py copies them); a
# source checkout reads the top-level examples/.
PACKAGED_EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CHECKOUT_EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
EXAMPLES = PACKAGED_EXAMPLES if PACKAGED_EXAMPLES.is_dir() else CHECKOUT_EXAMPLES
DEMO_MANIFEST = EXAMPLES / "demo.json"
DEMO_ACTOR = Principal(key_id="demo-seed", scope="admin", agents=None, label="demo seed")
JOB_TIMEOUT_S = 120.0


class DemoBelief(msgspec.Struct, frozen=True, kw_only=True):
    """A belief the demo reviewer kept some days ago (so decay and contradictions show)."""

    agent_id: str
    content: str
    confidence: float
    reviewed_days_ago: float


class DemoEpisode(EpisodeIn, frozen=True, kw_only=True):
    """An episode with the stable key that makes loading idempotent."""

    key: str


class DemoManifest(msgspec.Struct, frozen=True, kw_only=True):
    """examples/demo.json."""

    agents: list[AgentIn]
    beliefs: list[DemoBelief] = msgspec.field(default_factory=list)
    episodes: dict[str, list[DemoEpisode]] = msgspec.field(default_factory=dict)


class DemoReport(msgspec.Struct, kw_only=True):
    """What preparing the demo did, for the banner."""

    agents: list[str]
    new_episodes: int
    new_beliefs: int
    jobs: list[str]
    pending: int
    pairing_code: str
    pairing_expires_at: str


def load_demo_manifest(path: Path = DEMO_MANIFEST) -> DemoManifest:
    """Read and validate the demo manifest (keys starting with "_" are annotations)."""
    raw = strip_comments(json.loads(path.read_text(encoding="utf-8")))
    return msgspec.convert(raw, DemoManifest)


async def load_episodes(services: Services, manifest: DemoManifest) -> int:
    """Ingest the demo episodes that are not stored yet; returns how many were new."""
    added = 0
    for agent_id, episodes in manifest.episodes.items():

        async def stored(conn: Connection, agent_id: str = agent_id) -> set[str]:
            return await db_demo.demo_episode_keys(conn, agent_id)

        known = await services.store.read(stored)
        fresh = [
            msgspec.structs.replace(episode, metadata={**episode.metadata, "demo_key": episode.key})
            for episode in episodes
            if episode.key not in known
        ]
        if fresh:
            await services.episodes.ingest(agent_id, fresh)
            added += len(fresh)
    return added


async def seed_beliefs(services: Services, manifest: DemoManifest) -> int:
    """Propose and keep the already-reviewed beliefs, back-dated, unless they exist already."""
    added = 0
    for seed in manifest.beliefs:

        async def exists(conn: Connection, seed: DemoBelief = seed) -> bool:
            return await db_demo.belief_exists(conn, seed.agent_id, seed.content)

        if await services.store.read(exists):
            continue
        then = fixed_clock(services.clock() - timedelta(days=seed.reviewed_days_ago))
        past = BeliefService(services.store, services.embedder, then, BeliefHooks())
        proposal = ProposalIn(op="add", belief=seed.content, confidence=seed.confidence)
        (result,) = await past.propose(
            seed.agent_id, [proposal], ProposedBy(key_id=DEMO_ACTOR.key_id), DEMO_ACTOR.actor
        )
        if not result.accepted or result.belief_id is None:
            continue
        await past.decide(result.belief_id, Keep(), DEMO_ACTOR, if_match=etag(1))
        added += 1
    if added:
        services.hooks.changed([seed.agent_id for seed in manifest.beliefs])
    return added


async def reflect_all(services: Services, agent_ids: list[str]) -> list[str]:
    """Run one reflection job per agent with the default reflector; one summary line each."""
    from credence.memory.ingest.redact import REDACTION_SECRET
    from credence.reflection import jobs
    from credence.reflection.engine import runner_of

    runner = runner_of(services)
    if runner is None:
        raise RuntimeError("the reflection component is not running")
    lines = []
    for agent_id in agent_ids:
        request = JobIn(workflow_id="agent-reflection", input_data=JobInputIn(agent_id=agent_id))
        job = await jobs.submit(
            services.store,
            agent_id=agent_id,
            trigger="manual",
            input_data=jobs.manual_input(
                request,
                bool(services.settings.llm_url),
                services.store.secret(REDACTION_SECRET),
            ),
            now=rfc3339(services.clock()),
            submitted_by="demo",
        )
        runner.wake()
        finished = await runner.wait(job.id, JOB_TIMEOUT_S)
        if finished is None:
            lines.append(f"{agent_id}: job {job.id} still running")
            continue
        output = finished.output_data
        accepted = sum(1 for r in output.results if r.accepted) if output else 0
        considered = output.episodes_considered if output else 0
        lines.append(
            f"{agent_id}: {finished.status}, {considered} episodes, {accepted} new pending"
            + (f" ({finished.error})" if finished.error else "")
        )
    return lines


async def prepare(settings: Settings, manifest_path: Path = DEMO_MANIFEST) -> DemoReport:
    """Bring the data dir to the demo state (idempotently) and mint a pairing code."""
    from credence.app import create_app

    manifest = load_demo_manifest(manifest_path)
    app = create_app(msgspec.structs.replace(settings, scheduler=False))
    async with app.lifespan():
        services: Services = app.state.services
        await apply_manifest(services.store, Manifest(agents=manifest.agents), services.clock)
        new_episodes = await load_episodes(services, manifest)
        new_beliefs = await seed_beliefs(services, manifest)
        agent_ids = [agent.id for agent in manifest.agents]
        job_lines = await reflect_all(services, agent_ids)
        pending = await services.store.read(db_demo.pending_beliefs)

        async def mint(conn: Connection) -> tuple[str, str]:
            return await create_pairing_code(
                conn, agents=None, label="demo phone", clock=services.clock
            )

        code, expires_at = await services.store.write(mint)
    return DemoReport(
        agents=agent_ids,
        new_episodes=new_episodes,
        new_beliefs=new_beliefs,
        jobs=job_lines,
        pending=pending,
        pairing_code=code,
        pairing_expires_at=expires_at,
    )
