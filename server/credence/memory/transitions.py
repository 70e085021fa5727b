"""How one decision moves beliefs: each transition versioned and audited, retirements undone."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from credence.db import beliefs as rows_of
from credence.memory import audit
from credence.memory.text import normalise

if TYPE_CHECKING:
    from credence.db.engine import Connection

__all__ = ["RESTATING_OPS", "RETIRED", "Outcome", "problem"]

RETIRED = ("forgotten", "superseded")
# Ops whose kept belief restates its target with a new confidence: the target is retired with it.
# A `supersede` target is retired only when the reviewer names it in `retire`.
RESTATING_OPS = ("strengthen", "weaken")


@dataclass(frozen=True)
class Outcome:
    """An HTTP-shaped result computed inside a transaction (so it can be stored for replay)."""

    status_code: int
    body: bytes
    headers: dict[str, str]


def problem(
    status_code: int, detail: str, headers: dict[str, str] | None = None, **extra: Any
) -> Outcome:
    """A problem-details answer (``extra`` goes under ``"extra"``)."""
    body: dict[str, Any] = {"status_code": status_code, "detail": detail}
    if extra:
        body["extra"] = extra
    return Outcome(status_code, msgspec.json.encode(body), headers or {})


async def transition(
    conn: Connection,
    row: Any,
    new_status: str,
    action: str,
    actor: str,
    now: str,
    *,
    forgotten_reason: str | None = None,
    content: str | None = None,
    embedding: np.ndarray | None = None,
    detail: str = "",
    superseded_by: str | None = None,
) -> None:
    """Move one belief to ``new_status`` (bumping its version) and audit the change."""
    version = row["version"] + 1
    new_content = content if content is not None else row["content"]
    await rows_of.update_decided(
        conn,
        row["id"],
        status=new_status,
        version=version,
        now=now,
        decided_by=actor if action != "reopened" else None,
        forgotten_reason=forgotten_reason if new_status == "forgotten" else None,
        content=new_content,
        content_key=normalise(new_content),
        provenance="owner" if content is not None else row["provenance"],
        embedding=np.asarray(embedding, dtype="<f4").tobytes() if embedding is not None else None,
        superseded_by=superseded_by if new_status == "superseded" else None,
        keep_proposed_text=content is not None,
    )
    await audit.append(
        conn,
        belief_id=row["id"],
        agent_id=row["agent_id"],
        action=action,
        actor=actor,
        at=now,
        before_status=row["status"],
        after_status=new_status,
        before_content=row["content"],
        after_content=new_content,
        version=version,
        detail=detail or (forgotten_reason or ""),
    )


async def forget_target(conn: Connection, row: Any, actor: str, now: str, reason: str) -> None:
    """Forget the belief a kept `forget` proposal points at."""
    target_id = row["target_belief_id"]
    if target_id is None:
        return
    target = await rows_of.get(conn, target_id, lock=True)
    if target is None or target["status"] in RETIRED:
        return
    await transition(conn, target, "forgotten", "superseded", actor, now, forgotten_reason=reason)


async def with_restated(conn: Connection, row: Any, retiring: list[Any]) -> list[Any]:
    """``retiring`` plus the target a strengthen / weaken proposal restates, if still live."""
    target_id = row["target_belief_id"]
    if row["op"] not in RESTATING_OPS or target_id is None:
        return retiring
    if any(r["id"] == target_id for r in retiring):
        return retiring
    target = await rows_of.get(conn, target_id, lock=True)
    if target is None or target["status"] in RETIRED:
        return retiring
    return [*retiring, target]


async def retirable(conn: Connection, row: Any, retire: Sequence[str]) -> list[Any] | Outcome:
    """The rows ``retire`` names, or the 422 / 409 problem that refuses the whole decision.

    Only what the belief itself says it replaces may be retired: an id its review reasons flag
    as ``contradicts:<id>``, or its target when its op is ``supersede``.
    """
    if not retire:
        return []
    if row["op"] == "forget":
        return problem(422, "a forget proposal retires only its target; retire does not apply")
    reasons = json.loads(row["review_reasons"])
    allowed = {r.removeprefix("contradicts:") for r in reasons if r.startswith("contradicts:")}
    if row["op"] == "supersede" and row["target_belief_id"] is not None:
        allowed.add(row["target_belief_id"])
    unflagged = [belief_id for belief_id in retire if belief_id not in allowed]
    if unflagged:
        return problem(
            422,
            "retire may name only beliefs this one contradicts or supersedes",
            not_retirable=unflagged,
        )
    found = await rows_of.by_ids(conn, row["agent_id"], retire, lock=True)
    by_id = {r["id"]: r for r in found}
    missing = [belief_id for belief_id in retire if belief_id not in by_id]
    if missing:
        return problem(422, "retire names beliefs that do not exist", not_retirable=missing)
    inactive = [belief_id for belief_id in retire if by_id[belief_id]["status"] != "active"]
    if inactive:
        return problem(
            409,
            "only an active belief can be retired",
            not_active={belief_id: by_id[belief_id]["status"] for belief_id in inactive},
        )
    return [by_id[belief_id] for belief_id in retire]


async def retire(conn: Connection, targets: Sequence[Any], by: str, actor: str, now: str) -> None:
    """Mark each target superseded by belief ``by`` (audited as ``superseded``)."""
    for target in targets:
        await transition(
            conn,
            target,
            "superseded",
            "superseded",
            actor,
            now,
            detail=f"superseded_by:{by}",
            superseded_by=by,
        )


async def restore_targets(conn: Connection, row: Any, actor: str, now: str) -> None:
    """Undoing a decision brings back whatever that decision retired."""
    for target in await rows_of.retired_by(conn, row["agent_id"], row["id"]):
        restored = "pending" if target["provenance"] == "untrusted" else "active"
        await transition(conn, target, restored, "restored", actor, now)
