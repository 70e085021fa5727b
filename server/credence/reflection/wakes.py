"""Wakes: cron schedules (UTC) and named events that submit reflection jobs."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

from credence.clock import parse_rfc3339, rfc3339
from credence.db import jobs as db_jobs
from credence.db import wakes as db_wakes
from credence.errors import Conflict, Unprocessable
from credence.models import Job, ReflectionSettings, Wake, WakeIn, WakeInput, WakePatch
from credence.reflection import jobs
from credence.reflection.cron import CronRejected, check_cron, latest_window, next_window

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database
    from credence.db.wakes import WakeAgent, WakeRecord

log = logging.getLogger("credence.reflection")


class WakeRejected(Unprocessable):
    """A wake definition that cannot work (the message names the field)."""


class WakeConflict(Conflict):
    """A wake with this id already exists."""


def window_key(window: datetime) -> str:
    """The job key of one scheduled window: one job per (workflow, agent, window)."""
    return "cron:" + window.strftime("%Y-%m-%dT%H:%MZ")


def wake_from_row(row: WakeRecord, now: datetime) -> Wake:
    """Turn a stored wake into the API's Wake (with its next fire time when it has a cron)."""
    next_fire = None
    if row.kind == "cron" and row.cron and row.enabled:
        try:
            check_cron(row.cron)
        except CronRejected:
            pass  # a row the API would refuse (written by hand or an older version) never fires
        else:
            next_fire = rfc3339(next_window(row.cron, now))
    return Wake(
        id=row.id,
        kind=row.kind,
        workflow_id=row.workflow_id,
        cron=row.cron,
        event=row.event,
        agent_ids=row.agent_ids,
        enabled=bool(row.enabled),
        description=row.description,
        input_data=msgspec.convert(row.input_data, WakeInput),
        created_at=row.created_at,
        updated_at=row.updated_at,
        last_fired_at=row.last_fired_at,
        next_fire_at=next_fire,
    )


def _validate(kind: str, cron: str | None, event: str | None) -> None:
    if kind == "cron":
        if event is not None:
            raise WakeRejected("event: only event wakes have an event name")
        if cron is not None:
            check_cron(cron)
    else:
        if event is None:
            raise WakeRejected("event: an event wake needs the event name it listens for")
        if cron is not None:
            raise WakeRejected("cron: only cron wakes have a schedule")


def as_seen_by(wake: Wake, agents: frozenset[str] | None) -> Wake | None:
    """The wake as a key limited to ``agents`` sees it (None: every agent), or None if unseen.

    A wake for every agent is seen by all; one for a list of agents only by keys covering one
    of them, and only those of its agents the key covers are shown.
    """
    if agents is None or wake.agent_ids is None:
        return wake
    shown = [agent_id for agent_id in wake.agent_ids if agent_id in agents]
    return msgspec.structs.replace(wake, agent_ids=shown) if shown else None


async def list_wakes(store: Database, now: datetime) -> list[Wake]:
    """Every wake, by id."""
    rows = await store.read(db_wakes.all_wakes)
    return [wake_from_row(row, now) for row in rows]


async def get_wake(store: Database, wake_id: str, now: datetime) -> Wake | None:
    """One wake, or None."""
    row = await store.read(lambda conn: db_wakes.get(conn, wake_id), inline=True)
    return wake_from_row(row, now) if row is not None else None


def _agents_json(agent_ids: list[str] | None) -> str | None:
    return json.dumps(agent_ids) if agent_ids is not None else None


def _input_value(value: Any) -> dict[str, Any]:
    return msgspec.to_builtins(value) if value is not None else {}


def _input_json(value: Any) -> str:
    return json.dumps(_input_value(value), ensure_ascii=False)


async def upsert_wake_rows(conn: Connection, data: WakeIn, now: str, *, replace: bool) -> str:
    """Insert a wake (or, with ``replace``, make an existing one match); returns what happened.

    The answer is ``created``, ``updated`` or ``unchanged``; without ``replace`` an existing
    wake raises WakeConflict.
    """
    _validate(data.kind, data.cron, data.event)
    values = {
        "kind": data.kind,
        "cron": data.cron,
        "event": data.event,
        "agent_ids": _agents_json(data.agent_ids),
        "enabled": int(data.enabled),
        "input_data": _input_json(data.input_data),
        "description": data.description,
    }
    if await db_wakes.insert(conn, data.id, values, now):
        return "created"
    if not replace:
        raise WakeConflict(f"wake {data.id!r} already exists")
    existing = await db_wakes.get(conn, data.id, lock=True)
    if existing is not None and _same_definition(existing, data):
        return "unchanged"
    await db_wakes.replace(conn, data.id, values, now)
    return "updated"


def _same_definition(existing: WakeRecord, data: WakeIn) -> bool:
    # Compared decoded: the stored JSON's spelling does not make a wake differ.
    return (
        existing.kind == data.kind
        and existing.cron == data.cron
        and existing.event == data.event
        and existing.agent_ids == data.agent_ids
        and existing.enabled == int(data.enabled)
        and existing.input_data == _input_value(data.input_data)
        and existing.description == data.description
    )


async def create_wake(store: Database, data: WakeIn, now: datetime) -> Wake:
    """Create a wake; WakeRejected for a definition that cannot work, WakeConflict if taken."""

    async def work(conn: Connection) -> None:
        await upsert_wake_rows(conn, data, rfc3339(now), replace=False)

    await store.write(work)
    wake = await get_wake(store, data.id, now)
    assert wake is not None
    return wake


async def update_wake(
    store: Database, wake_id: str, patch: WakePatch, now: datetime
) -> Wake | None:
    """Apply a patch; None when there is no such wake."""

    async def work(conn: Connection) -> bool:
        row = await db_wakes.get(conn, wake_id, lock=True)
        if row is None:
            return False
        cron, event = row.cron, row.event
        agent_ids = _agents_json(row.agent_ids)
        if patch.cron is not None and patch.follow_agent_cron:
            raise WakeRejected("cron: give a schedule or follow_agent_cron, not both")
        if patch.agent_ids is not None and patch.all_agents:
            raise WakeRejected("agent_ids: give a list or all_agents, not both")
        if patch.cron is not None or patch.follow_agent_cron:
            if row.kind != "cron":
                raise WakeRejected("cron: only cron wakes have a schedule")
            cron = patch.cron
        if patch.event is not None:
            event = patch.event
        if patch.agent_ids is not None:
            agent_ids = _agents_json(patch.agent_ids)
        if patch.all_agents:
            agent_ids = None
        _validate(row.kind, cron, event)
        await db_wakes.patch(
            conn,
            wake_id,
            cron=cron,
            event=event,
            agent_ids=agent_ids,
            enabled=int(patch.enabled) if patch.enabled is not None else None,
            description=patch.description,
            input_data=_input_json(patch.input_data) if patch.input_data is not None else None,
            now=rfc3339(now),
        )
        return True

    if not await store.write(work):
        return None
    return await get_wake(store, wake_id, now)


async def delete_wake(store: Database, wake_id: str) -> bool:
    """Delete a wake (its jobs stay); False when there is no such wake."""

    return await store.write(lambda conn: db_wakes.delete(conn, wake_id))


def _reflection_of(agent: WakeAgent) -> ReflectionSettings:
    return msgspec.convert(agent.settings, ReflectionSettings)


def _targets(wake: WakeRecord, agents: Iterable[WakeAgent]) -> list[WakeAgent]:
    wanted = wake.agent_ids
    return [
        agent
        for agent in agents
        if (wanted is None or agent.id in wanted) and _reflection_of(agent).enabled
    ]


def due_windows(
    wakes: Iterable[WakeRecord], agents: list[WakeAgent], now: datetime
) -> list[dict[str, Any]]:
    """The cron windows due at ``now``: the latest scheduled time of each (wake, agent) pair.

    Only the latest window counts (a service that was down catches up once, not once per
    missed night), and never a window from before the wake or the agent existed. A wake
    without a cron follows each agent's own ``reflection.cron``.
    """
    due = []
    for wake in wakes:
        if wake.kind != "cron" or not wake.enabled:
            continue
        for agent in agents:
            # Each pair on its own: a row the API would refuse (a cron that never fires,
            # settings written by hand or by an older version) is logged and skipped, and every
            # other wake still fires.
            try:
                item = _due_window(wake, agent, now)
            except Exception as exc:  # whatever is wrong with the row, skip it
                _report_skipped(wake.id, agent.id, exc)
                continue
            if item is not None:
                due.append(item)
    return due


def _due_window(wake: WakeRecord, agent: WakeAgent, now: datetime) -> dict[str, Any] | None:
    if not _targets(wake, [agent]):
        return None
    expression = wake.cron or _reflection_of(agent).cron
    check_cron(expression)
    window = latest_window(expression, now)
    born = max(parse_rfc3339(wake.created_at), parse_rfc3339(agent.created_at))
    if window < born:
        return None
    return {
        "wake_id": wake.id,
        "agent_id": agent.id,
        "window_key": window_key(window),
        "input_data": {**wake.input_data, "agent_id": agent.id},
    }


_reported: set[tuple[str, str, str]] = set()


def _report_skipped(wake_id: str, agent_id: str, exc: Exception) -> None:
    # Once per process and problem: the scheduler ticks every few seconds.
    problem = (wake_id, agent_id, str(exc))
    if problem in _reported:
        return
    if len(_reported) > 1000:
        _reported.clear()
    _reported.add(problem)
    log.warning("wake %s skipped for agent %s: %s", wake_id, agent_id, exc)


async def tick(store: Database, now: datetime, seen: set[tuple[str, str]]) -> list[str]:
    """Submit the job of every due cron window not seen yet; returns the new job ids.

    ``seen`` remembers (agent, window key) pairs already ensured by this process so a quiet
    tick costs two reads and no write. Another process or replica submitting the same window
    first is harmless: the unique window key keeps it to one job. On PostgreSQL each wake is
    claimed with ``SKIP LOCKED`` for the tick; a wake another replica holds is left to it and
    looked at again next tick.
    """
    wakes = await store.read(db_wakes.enabled_cron)
    if not wakes.records and not wakes.unreadable:
        return []
    agents = await store.read(db_wakes.agents)
    # Stored JSON that does not decode (written by hand or by an older version) skips its wake
    # or agent, logged; every other pair still fires.
    for wake_id, exc in wakes.unreadable.items():
        _report_skipped(wake_id, "*", exc)
    for agent_id, exc in agents.unreadable.items():
        _report_skipped("*", agent_id, exc)
    due = [
        d
        for d in due_windows(wakes.records, agents.records, now)
        if (d["agent_id"], d["window_key"]) not in seen
    ]
    if not due:
        return []
    at = rfc3339(now)

    async def work(conn: Connection) -> tuple[list[str], list[dict[str, Any]]]:
        held = await db_wakes.claim_cron(conn, sorted({d["wake_id"] for d in due}))
        created, ensured = [], []
        for item in due:
            if item["wake_id"] not in held:
                continue
            job_id, new = await jobs.insert_job(
                conn,
                agent_id=item["agent_id"],
                trigger="cron",
                input_data=item["input_data"],
                now=at,
                window_key=item["window_key"],
                wake_id=item["wake_id"],
                submitted_by=f"wake:{item['wake_id']}",
            )
            ensured.append(item)
            if new:
                created.append(job_id)
                await db_wakes.fired(conn, item["wake_id"], at)
        return created, ensured

    created, ensured = await store.write(work)
    seen.update((d["agent_id"], d["window_key"]) for d in ensured)
    return created


async def fire_event(
    store: Database, name: str, agent_id: str, now: datetime, actor: str
) -> tuple[list[str], list[Job]]:
    """Submit a job for each enabled event wake listening for ``name`` that targets the agent.

    A wake that already has a queued job for the agent returns that job instead of queueing
    another: a burst of "episodes ready" events becomes one run, on any number of replicas
    (the wake row is locked while it decides). Agents with reflection disabled get no jobs.
    Returns (wake ids that matched, jobs).
    """
    wakes = await store.read(lambda conn: db_wakes.enabled_event(conn, name))
    agent = await store.read(lambda conn: db_wakes.agent(conn, agent_id))
    if agent is None or not wakes:
        return [], []
    matching = [wake for wake in wakes if _targets(wake, [agent])]
    if not matching:
        return [], []
    at = rfc3339(now)

    async def work(conn: Connection) -> list[str]:
        ids = []
        for wake in matching:
            if not await db_wakes.lock_event(conn, wake.id):
                continue  # disabled or deleted since it was read
            queued = await db_jobs.queued_for_wake(conn, agent_id, wake.id)
            if queued is not None:
                ids.append(queued)
                continue
            job_id, _ = await jobs.insert_job(
                conn,
                agent_id=agent_id,
                trigger="event",
                input_data={**wake.input_data, "agent_id": agent_id},
                now=at,
                wake_id=wake.id,
                submitted_by=actor,
            )
            await db_wakes.fired(conn, wake.id, at)
            ids.append(job_id)
        return ids

    job_ids = await store.write(work)
    found = [await jobs.get(store, job_id) for job_id in job_ids]
    return [wake.id for wake in matching], [job for job in found if job is not None]
