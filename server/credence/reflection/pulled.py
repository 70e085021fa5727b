"""The one episode struct of a reflection job: what pull reads and every reflector is given."""

from __future__ import annotations

import msgspec
import numpy as np


class PulledEpisode(msgspec.Struct, frozen=True):
    """An episode as pull hands it on; ``interventions`` are (trigger, user's words).

    ``seq`` orders episodes by arrival (the heuristic reads them in that order); ``embedding``
    is the stored summary vector, None when it is missing or of another model's width.
    """

    id: str
    summary: str
    interventions: tuple[tuple[str, str], ...]
    origin: str
    seq: int = 0
    embedding: np.ndarray | None = None
