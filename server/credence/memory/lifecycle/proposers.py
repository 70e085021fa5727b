"""Who proposed a belief and what they said: the proposer as stored with each pending belief."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from credence.db import jobs as jobs_db
from credence.models import ProposedBy

if TYPE_CHECKING:
    from credence.db.engine import Database


async def credit_starter(store: Database, proposer: ProposedBy) -> ProposedBy:
    """A job's proposals credit the key that started the job, when a key did."""
    job_id = proposer.job_id
    if job_id is None or proposer.key_id is not None:
        return proposer
    started = await store.read(lambda conn: jobs_db.submitted_by(conn, job_id))
    if started is None or not started.startswith("key:"):
        return proposer
    return msgspec.structs.replace(proposer, key_id=started.removeprefix("key:"))


def proposed_by_json(proposer: ProposedBy, note: str | None) -> str:
    """The stored ``proposed_by``: the proposer, and the proposer's own free-text note.

    The note is the proposer's words, kept apart from the gate's review reasons so that no
    client can write a flag the reviewer would take for the gate's.
    """
    stored = msgspec.to_builtins(proposer)
    if note:
        stored["note"] = note
    return msgspec.json.encode(stored).decode()
