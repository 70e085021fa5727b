"""What the reviewer decided that a reflector should learn from: refusals and rewrites."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from credence.db import beliefs as rows_of
from credence.memory.ingest.redact import REDACTION_SECRET, redact

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database

MAX_ENTRIES = 50
ON_FORGET_REQUEST = "forgotten on an approved forget request"


@dataclass(frozen=True)
class Refusal:
    """A lesson the reviewer forgot, with the reason they gave (if any)."""

    belief_id: str
    content: str
    reason: str | None
    at: str


@dataclass(frozen=True)
class Rewrite:
    """A proposal the reviewer rewrote before keeping it: what was proposed, what was kept."""

    belief_id: str
    proposed: str
    kept: str
    at: str


@dataclass(frozen=True)
class ReviewerFeedback:
    """The agent's recent refusals and rewrites, each newest first."""

    refused: list[Refusal]
    edited: list[Rewrite]


def _reason(row: Any, digest_key: bytes) -> str | None:
    if row["forgotten_by"] is not None:
        return ON_FORGET_REQUEST
    stored = row["forgotten_reason"]
    if stored is None:
        return None
    # Whatever a reviewer typed goes to a model: it is redacted like everything else sent.
    return redact(stored, digest_key=digest_key).text


async def recent_feedback(
    store: Database, agent_id: str, limit: int = MAX_ENTRIES
) -> ReviewerFeedback:
    """The agent's newest refusals and rewrites (at most ``limit`` of each)."""
    key = store.secret(REDACTION_SECRET)

    async def work(conn: Connection) -> tuple[list[Any], list[Any]]:
        return await rows_of.refused(conn, agent_id, limit), await rows_of.rewritten(
            conn, agent_id, limit
        )

    refused, edited = await store.read(work)
    return ReviewerFeedback(
        refused=[Refusal(r["id"], r["content"], _reason(r, key), r["decided_at"]) for r in refused],
        edited=[
            Rewrite(r["id"], r["proposed_content"], r["content"], r["decided_at"]) for r in edited
        ],
    )
