"""Benchmark: the heuristic reflector's lessons on the dev (tune, held-back) and frozen fixtures."""

from __future__ import annotations

import math

from harness.reflection_eval import DEV, DEV2, DEV3, DEV4, DEV5, FROZEN, run_file

from benchmarks.figures import figure
from credence.memory.semantics.model import MiniLMEmbedder

# Which fixtures, under which figure prefix: the dev halves, the second dev set (written blind
# by an outside helper, tuned on after its first score), then the frozen set never tuned on.
SETS = (
    ("reflection_dev_tune", DEV, "tune"),
    ("reflection_dev_held_back", DEV, "held_back"),
    ("reflection_dev2", DEV2, None),
    ("reflection_dev3", DEV3, None),
    ("reflection_dev4", DEV4, None),
    ("reflection_dev5", DEV5, None),
    ("reflection_frozen", FROZEN, None),
)


def measure() -> list[dict]:
    """Per set: share of expected lessons proposed (target ≥ 3 of 4), spurious proposals and
    forbidden words in proposals (targets 0), and the raw lessons found and expected."""
    embed = MiniLMEmbedder().embed_sync
    rows: list[dict] = []
    for prefix, path, split in SETS:
        totals = run_file(path, embed, split)
        if not totals:
            continue
        expected = totals["expected"]
        found = totals["found"] / expected if expected else 0.0
        kinds = sorted(key.split(":", 1)[1] for key in totals if key.startswith("expected:"))
        rows += [
            figure(
                f"{prefix}_found_{kind}",
                [float(totals.get(f"found:{kind}", 0))],
                float(math.ceil(0.75 * totals[f"expected:{kind}"])),
                unit="count",
                better="higher",
            )
            for kind in kinds
        ]
        rows += [
            figure(f"{prefix}_lessons_found", [found], 0.75, unit="ratio", better="higher"),
            figure(
                f"{prefix}_lessons_found_count",
                [float(totals["found"])],
                float(math.ceil(0.75 * expected)),
                unit="count",
                better="higher",
            ),
            figure(
                f"{prefix}_spurious_proposals",
                [float(totals["spurious"])],
                0.0,
                unit="count",
                better="lower",
            ),
            figure(
                f"{prefix}_forbidden_words",
                [float(totals["forbidden"])],
                0.0,
                unit="count",
                better="lower",
            ),
        ]
    return rows
