"""Export: active and superseded beliefs with provenance and audit, as JSON or Markdown."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from credence.clock import rfc3339
from credence.db import beliefs as rows_of
from credence.memory.ingest.episodes import AgentMissing
from credence.memory.lifecycle.beliefs import belief_from_row
from credence.models import AuditSummary, ExportedBelief, MemoryExport

if TYPE_CHECKING:
    from credence.clock import Clock
    from credence.db.engine import Database

FORMAT_VERSION = 1

# Markdown that would render as a link, image, heading, emphasis, HTML or code: shown literally.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")


async def export_memory(store: Database, clock: Clock, agent_id: str) -> MemoryExport:
    """Read the agent's active memory and each belief's audit trail in one consistent read.

    Raises AgentMissing when the agent does not exist.
    """

    agent, beliefs, trail = await store.read(lambda conn: rows_of.export_snapshot(conn, agent_id))
    if agent is None:
        raise AgentMissing(agent_id)
    by_belief: dict[str, list[Any]] = {}
    for row in trail:
        by_belief.setdefault(row["belief_id"], []).append(row)
    return MemoryExport(
        format_version=FORMAT_VERSION,
        agent_id=agent["id"],
        agent_name=agent["name"],
        exported_at=rfc3339(clock()),
        beliefs=[_exported(row, by_belief.get(row["id"], [])) for row in beliefs],
    )


# Every field of an exported belief but its audit summary, taken from the API's Belief as is.
_BELIEF_FIELDS = tuple(f for f in ExportedBelief.__struct_fields__ if f != "audit")


def _exported(row: Any, trail: Sequence[Any]) -> ExportedBelief:
    belief = belief_from_row(row)
    proposed = next((r["at"] for r in trail if r["action"] == "proposed"), None)
    last = trail[-1] if trail else None
    return ExportedBelief(
        **{name: getattr(belief, name) for name in _BELIEF_FIELDS},
        audit=AuditSummary(
            events=len(trail),
            proposed_at=proposed,
            last_action=last["action"] if last else None,
            last_actor=last["actor"] if last else None,
            last_at=last["at"] if last else None,
            last_row_hash=last["row_hash"] if last else None,
        ),
    )


def markdown_text(text: str) -> str:
    """One line of literal Markdown: whitespace collapsed, every special character escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def render_markdown(export: MemoryExport) -> str:
    """The export as a Markdown document: one section per role, one bullet per belief."""
    active = [b for b in export.beliefs if b.status == "active"]
    retired = [b for b in export.beliefs if b.status != "active"]
    lines = [
        f"# Memory of {markdown_text(export.agent_name)} (`{export.agent_id}`)",
        "",
        f"Exported {export.exported_at}. {len(active)} active"
        f" belief{'s' if len(active) != 1 else ''}, each kept or written by a human"
        " reviewer. Format version "
        f"{export.format_version}.",
    ]
    sections: dict[str, list[ExportedBelief]] = {}
    for belief in active:
        heading = "## All roles" if belief.role is None else f"## Role `{belief.role}`"
        sections.setdefault(heading, []).append(belief)
    if not sections:
        lines += ["", "_No active beliefs._"]
    if retired:
        sections["## Superseded (retired by a newer belief, not active memory)"] = retired
    for heading, beliefs in sections.items():
        lines += ["", heading, ""]
        for belief in beliefs:
            audit = belief.audit
            used = (
                f"used {belief.injection_count}× (last {belief.last_injected_at})"
                if belief.injection_count
                else "not used yet"
            )
            decided = (
                f"decided by {markdown_text(belief.decided_by)} at {belief.decided_at}"
                if belief.decided_by
                else "undecided"
            )
            lines.append(f"- {markdown_text(belief.content)}")
            if belief.superseded_by:
                lines.append(f"  - superseded by `{belief.superseded_by}`")
            lines.append(
                f"  - `{belief.id}` · confidence {belief.confidence:.2f} · provenance"
                f" {belief.provenance} · {decided} · {used}"
            )
            lines.append(
                f"  - audit: {audit.events} event{'s' if audit.events != 1 else ''},"
                f" last {audit.last_action or 'none'} at {audit.last_at or '-'}"
                + (f", row hash `{audit.last_row_hash}`" if audit.last_row_hash else "")
            )
    return "\n".join(lines) + "\n"
