"""What each step of a reflection job persists when it finishes, and how a retry reads it back."""

from __future__ import annotations

import logging
from typing import Literal, TypeVar

import msgspec

from credence.models import JobPartial, JobUsage, ReflectorName

log = logging.getLogger("credence.reflection")

# A checkpoint is stored as JSON in its step's ``output`` column. Field names are the keys of the
# dicts earlier versions stored, so a job interrupted before an upgrade resumes from them.

Ranking = Literal["recall", "newest"]


class PullCheckpoint(msgspec.Struct, frozen=True):
    """The episodes pull chose (a retry reflects on the same ones) and what it read."""

    episode_ids: list[str]
    untrusted: list[str] = msgspec.field(default_factory=list)
    ranking: Ranking = "recall"
    active_beliefs: int = 0
    refused: int = 0
    edited: int = 0


class AnswerMeta(msgspec.Struct, frozen=True):
    """What the stored answer covers: written with the answer, before anything applies it."""

    reflector: ReflectorName
    considered: list[str]
    partial: JobPartial | None = None
    usage: JobUsage | None = None


class ProposeCheckpoint(AnswerMeta, frozen=True):
    """The answer's metadata, whether a retry reused it, and how many entries parsed."""

    reused_answer: bool = False
    valid: int = 0
    dropped: int = 0


class CheckCheckpoint(msgspec.Struct, frozen=True):
    """The gate's verdict counts, how many beliefs it weighed, and the decayed count."""

    safe: int
    needs_review: int
    duplicate: int
    live_beliefs: int
    gated_against: int
    decayed: int


class SubmitCheckpoint(msgspec.Struct, frozen=True):
    """How many proposals became (or already were) pending beliefs, and how many did not."""

    accepted: int
    rejected: int


Checkpoint = PullCheckpoint | AnswerMeta | CheckCheckpoint | SubmitCheckpoint
C = TypeVar("C", PullCheckpoint, AnswerMeta)


def encode(checkpoint: Checkpoint) -> str:
    """The checkpoint as the JSON text a step's ``output`` column holds."""
    return msgspec.json.encode(checkpoint).decode()


def resume(stored: str | None, kind: type[C]) -> C | None:
    """The checkpoint a step left on an earlier attempt, or None to run the step afresh.

    A checkpoint that is not valid JSON of ``kind`` (written by a version that stored other
    fields) is logged and ignored rather than failing the job: a retry may always redo a step.
    """
    if not stored:
        return None
    try:
        return msgspec.json.decode(stored, type=kind)
    except msgspec.DecodeError as exc:  # ValidationError is a DecodeError
        log.warning("ignoring an unreadable %s checkpoint: %s", kind.__name__, exc)
        return None
