"""Episode ingest (redaction before anything is stored or embedded) and listing."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from credence.clock import Clock, rfc3339
from credence.db import episodes as db_episodes
from credence.db.engine import Connection
from credence.db.episodes import EpisodeRecord
from credence.errors import InsufficientStorage
from credence.ids import new_id
from credence.memory.ingest.provenance import combine_origin, third_party_reasons
from credence.memory.ingest.redact import REDACTION_SECRET, redact, redact_value
from credence.models import Episode, EpisodeIn, Intervention

if TYPE_CHECKING:
    from credence.db.engine import Database
    from credence.embed import Embedder


MAX_METADATA_BYTES = 64 * 1024


class EpisodeRejected(ValueError):
    """An episode cannot be stored as sent (the message says which field and why)."""


class AgentMissing(LookupError):
    """The agent an operation names does not exist."""


def embedding_text(summary: str, interventions: Sequence[tuple[str, str]]) -> str:
    """The text an episode is embedded and searched by."""
    return "\n".join([summary, *(text for _, text in interventions)])


def prepare(
    item: EpisodeIn, agent_id: str, now: str, index: int, digest_key: bytes
) -> tuple[dict[str, Any], int]:
    """Redact and normalise one incoming episode into a row (no I/O); returns (row, redacted)."""
    texts = [item.summary, item.session_id, item.role_label or ""]
    if any("\x00" in text for text in [*texts, *(i.text for i in item.interventions)]):
        # PostgreSQL text cannot hold NUL; refuse it on both engines alike.
        raise EpisodeRejected(f"episodes[{index}]: text must not contain NUL characters")
    if item.finished_at is None:
        finished_at = now
    else:
        try:
            finished_at = rfc3339(item.finished_at)
        except (ValueError, OverflowError) as exc:
            raise EpisodeRejected(f"episodes[{index}].finished_at: {exc}") from None
    summary = redact(item.summary, digest_key=digest_key)
    count = summary.count
    interventions = []
    for intervention in item.interventions:
        text = redact(intervention.text, digest_key=digest_key)
        count += text.count
        interventions.append((intervention.trigger, text.text))
    session = redact(item.session_id, digest_key=digest_key)
    role_label = redact(item.role_label, digest_key=digest_key) if item.role_label else None
    metadata, metadata_count = redact_value(item.metadata, digest_key=digest_key)
    metadata_json = json.dumps(metadata, ensure_ascii=False)
    count += session.count + metadata_count + (role_label.count if role_label else 0)
    reasons = third_party_reasons(summary.text, metadata)
    row = {
        "id": new_id("ep"),
        "agent_id": agent_id,
        "session_id": session.text,
        "role_label": role_label.text if role_label else None,
        "finished_at": finished_at,
        "summary": summary.text,
        "interventions": json.dumps([{"trigger": t, "text": x} for t, x in interventions]),
        "intervention_text": "\n".join(x for _, x in interventions),
        "origin": combine_origin(item.origin, reasons),
        "untrusted_reasons": json.dumps(
            (["declared"] if item.origin == "untrusted" else []) + reasons
        ),
        "metadata": metadata_json,
        "redactions": count,
        "created_at": now,
        "reflected_at": None,
        "embedding_text": embedding_text(summary.text, interventions),
    }
    try:
        size = len(metadata_json.encode("utf-8"))
    except UnicodeEncodeError:
        raise EpisodeRejected(f"episodes[{index}].metadata: invalid unicode") from None
    if size > MAX_METADATA_BYTES:
        raise EpisodeRejected(
            f"episodes[{index}].metadata: {size} bytes as JSON, at most {MAX_METADATA_BYTES}"
        )
    return row, count


def episode_from_row(row: EpisodeRecord) -> Episode:
    """Turn a stored episode into the API's Episode."""
    return Episode(
        id=row.id,
        agent_id=row.agent_id,
        session_id=row.session_id,
        role_label=row.role_label,
        finished_at=row.finished_at,
        summary=row.summary,
        interventions=[Intervention(**i) for i in row.interventions],
        origin=row.origin,
        untrusted_reasons=row.untrusted_reasons,
        metadata=row.metadata,
        redactions=row.redactions,
        reflected_at=row.reflected_at,
        created_at=row.created_at,
    )


def stored_size(row: dict[str, Any]) -> int:
    """The characters an episode row stores, as the quota counts them (the migration too)."""
    texts = ("summary", "interventions", "metadata", "session_id", "role_label")
    return sum(len(row[name] or "") for name in texts)


class EpisodeService:
    """Stores episodes for agents: redacted, provenance-checked, embedded, all-or-nothing."""

    def __init__(
        self, store: Database, embedder: Embedder, clock: Clock, quota_bytes: int = 0
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.quota_bytes = quota_bytes  # per agent; 0: no quota

    async def ingest(
        self, agent_id: str, items: Sequence[EpisodeIn]
    ) -> tuple[list[EpisodeRecord], int]:
        """Store the episodes in one transaction; returns (stored episodes, secrets redacted)."""
        now = rfc3339(self.clock())
        digest_key = self.store.secret(REDACTION_SECRET)
        prepared = [prepare(item, agent_id, now, i, digest_key) for i, item in enumerate(items)]
        rows = [row for row, _ in prepared]
        vectors = await self.embedder.embed([row.pop("embedding_text") for row in rows])
        for row, vector in zip(rows, vectors, strict=True):
            row["embedding"] = np.asarray(vector, dtype="<f4").tobytes()
            row["embedding_model"] = self.embedder.name

        added = sum(stored_size(row) for row in rows)

        async def work(conn: Connection) -> None:
            if self.quota_bytes:
                used = await db_episodes.stored_bytes(conn, agent_id)
                if used + added > self.quota_bytes:
                    raise InsufficientStorage(
                        f"agent {agent_id!r} has used its episode quota: {used} of"
                        f" {self.quota_bytes} bytes stored, these episodes need {added} more"
                        " (CREDENCE_EPISODE_QUOTA_MB)"
                    )
            if not await db_episodes.insert_episodes(conn, agent_id, rows):
                raise AgentMissing(agent_id)
            await db_episodes.add_stored_bytes(conn, agent_id, added)

        await self.store.write(work)
        stored = [EpisodeRecord.inserted(row) for row in rows]
        return stored, sum(count for _, count in prepared)

    async def list_rows(
        self,
        agent_id: str,
        *,
        since: str | None,
        reflected: bool | None,
        limit: int,
        cursor: int | None,
    ) -> tuple[list[EpisodeRecord], str | None]:
        """Episodes oldest first with optional filters; returns (episodes, next cursor)."""
        found = db_episodes.EpisodeFilter(since, reflected)
        rows = await self.store.read(
            lambda conn: db_episodes.list_episodes(
                conn, agent_id, found, after_seq=cursor, limit=limit + 1
            )
        )
        next_cursor = str(rows[limit - 1].seq) if len(rows) > limit else None
        return rows[:limit], next_cursor

    async def get_row(self, agent_id: str, episode_id: str) -> EpisodeRecord | None:
        """One episode of the agent, or None."""
        return await self.store.read(
            lambda conn: db_episodes.get_episode(conn, agent_id, episode_id)
        )
