"""`credence seed`: make agents and wakes match an annotated JSON manifest, idempotently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from credence.clock import Clock, rfc3339
from credence.db import wakes as db_wakes
from credence.models import AgentIn, WakeIn
from credence.reflection.cron import CronRejected, check_cron
from credence.reflection.wakes import WakeRejected, upsert_wake_rows

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database
    from credence.db.wakes import WakeRecord


class Manifest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What `credence seed` reads: agents and wakes (keys starting with "$" or "_" are notes)."""

    agents: list[AgentIn] = msgspec.field(default_factory=list)
    wakes: list[WakeIn] = msgspec.field(default_factory=list)


class ManifestError(ValueError):
    """The manifest cannot be applied; the message names the entry and field."""


def strip_comments(value: Any) -> Any:
    """Drop every object key that starts with "$" or "_" (annotations such as "$comment")."""
    if isinstance(value, dict):
        return {k: strip_comments(v) for k, v in value.items() if not str(k).startswith(("$", "_"))}
    if isinstance(value, list):
        return [strip_comments(item) for item in value]
    return value


def load_manifest(path: Path) -> Manifest:
    """Read and validate a manifest file."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path}: {exc}") from None
    try:
        manifest = msgspec.convert(strip_comments(raw), Manifest, strict=True)
    except msgspec.ValidationError as exc:
        raise ManifestError(f"{path}: {exc}") from None
    for position, agent in enumerate(manifest.agents):
        try:
            check_cron(agent.reflection.cron, f"agents[{position}].reflection.cron")
        except CronRejected as exc:
            raise ManifestError(str(exc)) from None
    seen_agents = [a.id for a in manifest.agents]
    seen_wakes = [w.id for w in manifest.wakes]
    for kind, ids in (("agent", seen_agents), ("wake", seen_wakes)):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ManifestError(f"{path}: {kind} ids appear twice: {', '.join(repeated)}")
    return manifest


async def _upsert_agent(conn: Connection, agent: AgentIn, now: str) -> str:
    roles = json.dumps(agent.roles)
    settings = msgspec.json.encode(agent.reflection).decode()
    if await db_wakes.insert_agent(conn, agent.id, agent.name, roles, settings, now):
        return "created"
    existing = await db_wakes.seed_agent_row(conn, agent.id)
    if (
        existing is not None
        and existing.name == agent.name
        and existing.roles == agent.roles
        and existing.settings == msgspec.to_builtins(agent.reflection)
    ):
        return "unchanged"
    await db_wakes.update_agent(conn, agent.id, agent.name, roles, settings, now)
    return "updated"


def _agents_text(agent_ids: list[str] | None) -> str:
    return "every agent" if agent_ids is None else f"[{', '.join(agent_ids)}]"


def merge_wake(
    existing: WakeRecord | None, wake: WakeIn, *, replace: bool
) -> tuple[WakeIn, list[str]]:
    """The wake to store over ``existing`` (None: a new wake), and what that changes.

    Without ``replace`` an existing wake's agents are merged with the manifest's, so seeding
    never narrows who a wake reflects on: a wake for every agent stays one. Each change is a
    note (``agent_ids: [a] -> [a, b]``) the command prints.
    """
    if existing is None:
        return wake, []
    before = existing.agent_ids
    asked = after = wake.agent_ids
    if not replace:
        after = None if before is None or after is None else list(dict.fromkeys([*before, *after]))
        wake = msgspec.structs.replace(wake, agent_ids=after)
    notes = []
    if before != after:
        narrowed = after is not None and (before is None or not set(before) <= set(after))
        warning = " (narrowed: --replace)" if narrowed else ""
        notes.append(f"agent_ids: {_agents_text(before)} -> {_agents_text(after)}{warning}")
    elif not replace and asked is not None and before is None:
        notes.append("agent_ids: kept every agent (merged; --replace narrows it)")
    for name in ("cron", "event", "enabled", "description"):
        stored = getattr(existing, name)
        if stored != (value := getattr(wake, name)) and not (
            name == "enabled" and bool(stored) == value
        ):
            notes.append(f"{name}: {stored!r} -> {value!r}")
    return wake, notes


async def apply_manifest(
    store: Database, manifest: Manifest, clock: Clock, *, replace: bool = False
) -> list[str]:
    """Create or update every agent and wake in one transaction; returns one line per entry.

    An existing wake's agent list is merged with the manifest's unless ``replace`` is given;
    each line says what changed.
    """
    now = rfc3339(clock())

    async def work(conn: Connection) -> list[str]:
        lines = []
        for agent in manifest.agents:
            lines.append(f"agent {agent.id}: {await _upsert_agent(conn, agent, now)}")
        for position, given in enumerate(manifest.wakes):
            existing = await db_wakes.get(conn, given.id, lock=True)
            wake, notes = merge_wake(existing, given, replace=replace)
            try:
                outcome = await upsert_wake_rows(conn, wake, now, replace=True)
            except (WakeRejected, CronRejected) as exc:
                raise ManifestError(f"wakes[{position}] ({wake.id}): {exc}") from None
            detail = f" ({'; '.join(notes)})" if notes else ""
            lines.append(f"wake {wake.id}: {outcome}{detail}")
        return lines

    return await store.write(work)
