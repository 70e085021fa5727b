"""Review load: one simulated week of a 5-agent team with 2 reviewers, on an injected clock.

Drives the real store, belief service, review ledger and policy planner (notify.review): nightly
reflection runs at their cron times, a few proposals during the day (conflicts included), and
two reviewers who decide at their own hours. Prints pushes per reviewer per day, pushes inside
quiet hours, the longest a pending belief waited without a push about it, and duplicates.
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from benchmarks.figures import figure
from credence.access.keys import create_key
from credence.access.principal import principal_from_row
from credence.clock import rfc3339
from credence.db import agents as db_agents
from credence.db import keys as db_keys
from credence.db import make_store
from credence.db import notices as notices_db
from credence.db import push as push_db
from credence.db.push import NewSubscription
from credence.errors import DomainError
from credence.memory.lifecycle.beliefs import BeliefHooks, BeliefService
from credence.memory.lifecycle.decisions import Forget, Keep
from credence.memory.semantics.embedders import make_embedder
from credence.models import ProposalIn, ProposedBy
from credence.notify import policy, preferences, review, tokens
from credence.notify.outbox import OutboxConfig

SEED = 20261202
START = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)  # a Monday
DAYS = 7
AGENTS = {"coder": (3, 0), "writer": (2, 30), "ingest": (4, 0), "support": (1, 0), "ops": (3, 15)}
REVIEWERS = {
    "berlin": {
        "zone": "Europe/Berlin",
        "policy": {
            "mode": "digest",
            "quiet_hours": {"start": "22:00", "end": "07:00", "time_zone": "Europe/Berlin"},
        },
        "reviews_at": ((8, 30), (18, 0)),
    },
    "new_york": {
        "zone": "America/New_York",
        "policy": {
            "mode": "each",
            "quiet_hours": {"start": "22:00", "end": "07:00", "time_zone": "America/New_York"},
        },
        "reviews_at": ((12, 0),),
    },
}
WORDS = [
    *("retry", "cache", "log", "deploy", "upload", "split", "compress", "validate", "rotate"),
    *("index", "archive", "review", "restart", "pin", "batch", "stream", "encrypt", "quote"),
    *("format", "sort", "merge", "lint", "test", "profile", "measure", "throttle"),
]


class Clock:
    """The injected clock every part of the simulation reads."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _events(rng: random.Random) -> list[tuple[datetime, str, Any]]:
    """Nightly runs at cron times, a few daytime proposals (1 in 3 a conflict), review times."""
    events: list[tuple[datetime, str, Any]] = []
    for day in range(DAYS):
        date = START + timedelta(days=day)
        for agent, (hour, minute) in AGENTS.items():
            size = rng.randint(3, 10)
            events.append((date.replace(hour=hour, minute=minute), "run", (agent, size)))
        for _ in range(rng.randint(2, 4)):
            at = date + timedelta(hours=rng.uniform(8, 20))
            events.append((at, "proposal", (rng.choice(list(AGENTS)), rng.random() < 1 / 3)))
        for name, spec in REVIEWERS.items():
            zone = ZoneInfo(spec["zone"])
            local = date.astimezone(zone).date()
            if local.weekday() >= 5:
                continue  # nobody reviews at the weekend: reminders have to work
            for hour, minute in spec["reviews_at"]:
                at = datetime(local.year, local.month, local.day, hour, minute, tzinfo=zone)
                events.append((at.astimezone(UTC), "review", name))
    return sorted(events, key=lambda e: e[0])


async def _simulate() -> dict[str, Any]:
    rng = random.Random(SEED)
    clock = Clock(START - timedelta(days=1))
    with tempfile.TemporaryDirectory() as tmp:
        store = make_store(None, Path(tmp) / "credence.db")
        await store.open()
        try:
            return await _run(store, clock, rng)
        finally:
            await store.close()


async def _setup(store: Any, clock: Clock) -> tuple[dict[str, str], dict[str, Any]]:
    """Agents, one reviewer key per person with its policy, one subscribed device each."""
    subscription_of: dict[str, str] = {}
    principals: dict[str, Any] = {}

    async def work(conn: Any) -> None:
        for agent in AGENTS:
            await db_agents.insert(
                conn,
                agent_id=agent,
                name=agent.title(),
                roles="[]",
                settings="{}",
                now=rfc3339(clock()),
            )
        for name, spec in REVIEWERS.items():
            _, info = await create_key(conn, scope="reviewer", agents=None, label=name, clock=clock)
            principal = principal_from_row(
                next(k for k in await db_keys.all_keys(conn) if k.id == info["id"])
            )
            principals[name] = principal
            await preferences.save_settings(conn, principal, spec["policy"], clock)
            endpoint = f"https://push.example-corp.org/{name}"
            _, row = await push_db.upsert_subscription(
                conn,
                NewSubscription(info["id"], endpoint, "p", "a", None),
                subscription_id=f"sub_{name}",
                now=rfc3339(clock()),
                keep=20,
            )
            subscription_of[row.id] = name

    await store.write(work)
    return subscription_of, principals


class Team:
    """The agents' proposals and the reviewers' decisions, through the real belief service."""

    def __init__(self, beliefs: BeliefService, store: Any, rng: random.Random) -> None:
        self.beliefs = beliefs
        self.store = store
        self.rng = rng
        self.kept: dict[str, list[str]] = defaultdict(list)
        self.counter = 0

    def text(self) -> str:
        """A fresh lesson (never a duplicate the gate would refuse)."""
        self.counter += 1
        return f"{' '.join(self.rng.sample(WORDS, 5))} before step {self.counter}"

    async def propose(self, agent: str, count: int, conflict: bool) -> None:
        """A batch of additions, or one proposal that weakens a kept belief."""
        proposals = [ProposalIn(op="add", belief=self.text(), confidence=0.7) for _ in range(count)]
        if conflict and self.kept[agent]:
            target = self.rng.choice(self.kept[agent])
            proposals = [
                ProposalIn(op="weaken", belief=self.text(), confidence=0.6, target_belief_id=target)
            ]
        await self.beliefs.propose(agent, proposals, ProposedBy(key_id="key_bench"), "key:bench")

    async def review(self, principal: Any) -> None:
        """Decide about 70 % of what is pending (60 % of that kept)."""
        rows = await self.store.fetchall(
            "SELECT id, agent_id, version FROM beliefs WHERE status = 'pending'"
        )
        for row in rows:
            if self.rng.random() >= 0.7:
                continue
            keep = self.rng.random() < 0.6
            try:
                await self.beliefs.decide(
                    row["id"],
                    Keep() if keep else Forget("no"),
                    principal,
                    if_match=f'"{row["version"]}"',
                )
            except DomainError:
                continue
            if keep:
                self.kept[row["agent_id"]].append(row["id"])


async def _run(store: Any, clock: Clock, rng: random.Random) -> dict[str, Any]:
    config = OutboxConfig(
        secret=store.secret(tokens.SECRET_NAME),
        ttl_seconds=86400,
        base_url="https://credence.example-corp.org",
        clock=clock,
    )
    hooks = BeliefHooks()
    hooks.in_txn_pending.append(review.pending_hook(clock))
    team = Team(BeliefService(store, make_embedder(None, None, None), clock, hooks), store, rng)
    subscription_of, principals = await _setup(store, clock)
    pending_since: dict[tuple[str, str], datetime] = {}
    longest_wait = timedelta(0)

    async def advance(until: datetime) -> None:
        nonlocal longest_wait
        for _ in range(10_000):
            due = await store.read(notices_db.next_due)
            step = min(until, max(clock.now, datetime.fromisoformat(due))) if due else until
            await _track(store, pending_since)
            longest_wait = max(longest_wait, _oldest(pending_since, step))
            clock.now = step
            for planned in await review.run_due(store, config):
                for _, ids in planned.sends:
                    for belief_id in ids:
                        pending_since[(planned.recipient_id, belief_id)] = clock.now
            if step >= until:
                return
        raise RuntimeError("the planner keeps being due without progress")

    for at, kind, detail in _events(rng):
        await advance(at)
        if kind == "run":
            await team.propose(detail[0], detail[1], False)
        elif kind == "proposal":
            await team.propose(detail[0], 1, detail[1])
        else:
            await team.review(principals[detail])
        await advance(clock.now)
    await advance(START + timedelta(days=DAYS))
    pushes = await store.fetchall(
        "SELECT subscription_id, created_at, payload, urgency FROM push_outbox ORDER BY created_at"
    )
    return _figures(pushes, subscription_of, longest_wait)


async def _track(store: Any, since: dict[tuple[str, str], datetime]) -> None:
    """Start the wait of each pending belief a reviewer owns and drop decided ones."""
    rows = await store.fetchall(
        "SELECT n.recipient_id, n.belief_id, n.created_at FROM review_notices n"
        " JOIN beliefs b ON b.id = n.belief_id WHERE b.status = 'pending' AND n.escalation = 0"
    )
    live = set()
    for row in rows:
        key = (row["recipient_id"], row["belief_id"])
        live.add(key)
        since.setdefault(key, datetime.fromisoformat(row["created_at"]))
    for key in [k for k in since if k not in live]:
        del since[key]


def _oldest(since: dict[tuple[str, str], datetime], now: datetime) -> timedelta:
    return max((now - at for at in since.values()), default=timedelta(0))


def _figures(pushes: list[Any], subscription_of: dict[str, str], longest: timedelta) -> dict:
    per_day: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
    quiet_violations = 0
    told: dict[str, set[str]] = defaultdict(set)
    duplicates = 0
    for row in pushes:
        name = subscription_of[row["subscription_id"]]
        spec = REVIEWERS[name]
        at = datetime.fromisoformat(row["created_at"])
        per_day[name][at.astimezone(ZoneInfo(spec["zone"])).date()] += 1
        chosen = policy.parse(spec["policy"])
        if policy.held_until(chosen, at, row["urgency"]) is not None:
            quiet_violations += 1
        message = json.loads(row["payload"])
        if "waiting since" in message.get("body", ""):
            continue  # a reminder repeats on purpose
        ids = message.get("belief_ids") or [message.get("belief_id")]
        for belief_id in ids:
            duplicates += belief_id in told[name]
            told[name].add(belief_id)
    return {
        "per_day": {name: sorted(days.values()) for name, days in per_day.items()},
        "quiet": quiet_violations,
        "duplicates": duplicates,
        "longest_hours": longest.total_seconds() / 3600,
    }


def measure() -> list[dict]:
    """Run the simulated week once and report its figures against their targets."""
    result = asyncio.run(_simulate())
    per_day = result["per_day"]
    for name, counts in per_day.items():
        print(f"review load: {name} pushes per day {counts}")
    berlin = [float(c) for c in per_day.get("berlin", [0])]
    new_york = [float(c) for c in per_day.get("new_york", [0])]
    return [
        figure("review: pushes per day, digest reviewer (Berlin)", berlin, 3, unit="count"),
        figure("review: busiest day, digest reviewer (Berlin)", [max(berlin)], 3, unit="count"),
        figure("review: pushes per day, each-mode reviewer (New York)", new_york, 60, unit="count"),
        figure("review: pushes inside quiet hours", [float(result["quiet"])], 0, unit="count"),
        figure("review: beliefs pushed twice", [float(result["duplicates"])], 0, unit="count"),
        figure(
            "review: longest pending wait without a push",
            [result["longest_hours"]],
            24,
            unit="h",
        ),
    ]


if __name__ == "__main__":
    for row in measure():
        print(row)
