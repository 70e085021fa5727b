"""What the reviewer decided that a reflector should learn from: refusals and rewrites."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from credence.memory.redact import REDACTION_SECRET, redact

if TYPE_CHECKING:
    from credence.db.engine import Database

MAX_ENTRIES = 50

# Forgotten by the reviewer, not by the machinery: a kept `forget` proposal ends as forgotten
# ("applied:…"), and before migration 0004 a retired belief was forgotten "superseded_by:…".
# Untrusted text never reaches a model, refused or not.
_REFUSED = (
    "SELECT id, content, forgotten_reason, decided_at FROM beliefs"
    " WHERE agent_id = ? AND status = 'forgotten' AND provenance != 'untrusted'"
    " AND (forgotten_reason IS NULL OR (forgotten_reason NOT LIKE 'applied:%'"
    "      AND forgotten_reason NOT LIKE 'superseded_by:%'))"
    " ORDER BY decided_at DESC, id DESC LIMIT ?"
)
# Rewritten by the reviewer and still memory. A proposal that came from third-party content
# keeps "untrusted_source" in its review reasons after the Edit makes it the owner's.
_EDITED = (
    "SELECT id, proposed_content, content, decided_at FROM beliefs"
    " WHERE agent_id = ? AND status = 'active' AND proposed_content IS NOT NULL"
    " AND proposed_content != content"
    " AND NOT EXISTS (SELECT 1 FROM json_each(review_reasons) WHERE value = 'untrusted_source')"
    " ORDER BY decided_at DESC, id DESC LIMIT ?"
)
_FORGOTTEN_BY = "forgotten_by:"


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


def _reason(stored: str | None, digest_key: bytes) -> str | None:
    if stored is None:
        return None
    if stored.startswith(_FORGOTTEN_BY):
        return "forgotten on an approved forget request"
    # Whatever a reviewer typed goes to a model: it is redacted like everything else sent.
    return redact(stored, digest_key=digest_key).text


async def recent_feedback(
    store: Database, agent_id: str, limit: int = MAX_ENTRIES
) -> ReviewerFeedback:
    """The agent's newest refusals and rewrites (at most ``limit`` of each)."""
    key = store.secret(REDACTION_SECRET)
    refused = await store.fetchall(_REFUSED, (agent_id, limit))
    edited = await store.fetchall(_EDITED, (agent_id, limit))
    return ReviewerFeedback(
        refused=[
            Refusal(r["id"], r["content"], _reason(r["forgotten_reason"], key), r["decided_at"])
            for r in refused
        ],
        edited=[
            Rewrite(r["id"], r["proposed_content"], r["content"], r["decided_at"]) for r in edited
        ],
    )
