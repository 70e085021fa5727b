"""What the gate reads and answers: ops, thresholds, live beliefs, proposals, verdicts."""

from __future__ import annotations

from datetime import datetime
from typing import Final

import msgspec
import numpy

from credence.memory.semantics.relation import COMPARE_COSINE
from credence.models import BeliefOp, GateVerdict
from credence.models.reasons import Reason

OPS = ("add", "strengthen", "weaken", "forget", "supersede")
# Ops that bring new wording into memory; the others restate their target's content.
CONTENT_OPS = frozenset({"add", "supersede"})
CONTRADICTION_STATUSES = frozenset({"pending", "active"})

JACCARD_THRESHOLD = 0.4
# Close enough to compare (all-MiniLM-L6-v2 cosine, chosen on the development gate set): below
# it no pair of the set was the same lesson in any form. Structure decides the relation above.
COSINE_THRESHOLD = COMPARE_COSINE
# The nearest neighbours by cosine each proposal is judged against.
MAX_NEIGHBOURS = 8
# The structural look-alikes (shared canonical content) each proposal is judged against.
MAX_STRUCTURAL = 12
UNSUPPORTED_LANGUAGE = "unsupported_language"
COSINE_JACCARD_FLOOR = 0.2
STRONG_COSINE = 0.85
MAX_CONTRADICTIONS = 3
# Same polarity and this close in the bundled model's space: the same lesson in other words.
NEAR_DUPLICATE_COSINE = 0.92
# Canonical tokens either side may own and still be a paraphrase or value change of the other
# (a value change rewrites at most two short slots; a paraphrase or negation owns none).
MAX_STRUCTURAL_DIFFERENCE = 2
MAX_CHANGE_CHARS = 60
UNSOURCED = "unsourced"

SAFE: Final = "safe"
NEEDS_REVIEW: Final = "needs_review"
DUPLICATE: Final = "duplicate"

# Which of several beliefs sharing one duplicate key is named: the one a reviewer most needs
# to see (active memory first, then what is already waiting, then past refusals).
STATUS_RANK = {"active": 0, "pending": 1, "forgotten": 2}
# A restated past refusal matters most: it is named before a restated live belief.
NEAR_RANK = {"forgotten": 0, "active": 1, "pending": 2}
# Above any Jaccard or cosine, so value changes are named first.
VALUE_CHANGE_SCORE = 2.0
EPSILON = 1e-9
# Cosines come from float32 products, so "at the threshold" may miss it by rounding.
COSINE_TOLERANCE = 1e-6


class LiveBelief(msgspec.Struct, frozen=True):
    """A belief as the gate sees it. ``embedding`` is L2-normalised float32 when present.

    Equality compares the embedding array too, so compare ids rather than whole structs.
    """

    id: str
    content: str
    status: str
    confidence: float
    created_at: datetime
    updated_at: datetime
    embedding: numpy.ndarray | None = None


class Proposal(msgspec.Struct, frozen=True):
    """One diff proposed by a reflector; ``index`` is its position in the reflector's answer."""

    index: int
    op: BeliefOp
    belief: str
    confidence: float
    rationale: str
    source_episodes: tuple[str, ...]
    target_belief_id: str | None = None


class GateResult(msgspec.Struct, frozen=True):
    """The gate's verdict on one proposal: ``safe``, ``needs_review`` or ``duplicate``, and
    the reasons for it."""

    index: int
    gate: GateVerdict
    reasons: tuple[Reason, ...]
