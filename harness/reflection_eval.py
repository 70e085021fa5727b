"""The heuristic reflector on reflection fixtures: lessons found, spurious, forbidden words."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy

from credence.memory.semantics.gate import LiveBelief, Proposal
from credence.reflection.heuristic import (
    intervention_texts,
    reflect,
    sentence_texts,
)
from credence.reflection.pulled import PulledEpisode

CORPORA = Path(__file__).resolve().parent / "corpora"
FROZEN = CORPORA / "frozen" / "reflection.json"
DEV = CORPORA / "dev" / "reflection.json"
# A second development set, written blind by an outside helper; tuned on only after its first
# score was recorded (see the README's reflection figures).
DEV2 = CORPORA / "dev" / "reflection_2.json"
# A third, written blind by another helper from the product description only (2026-12-03);
# its first score is in the README, before the one change it led to.
DEV3 = CORPORA / "dev" / "reflection_3.json"
# A fourth, written blind by another helper from the product description only (2026-12-03,
# later that day); first run: 15 / 32 found, 4 spurious, 2 forbidden words.
DEV4 = CORPORA / "dev" / "reflection_4.json"
# A fifth, written blind by another helper from the product description only (2026-12-04);
# first run: 25 / 32 found, 2 spurious, 0 forbidden words.
DEV5 = CORPORA / "dev" / "reflection_5.json"
# The triggers the API accepts; a fixture's other labels ("praise") are what a client sends
# as a follow-up to the agent's turn.
TRIGGERS = ("steer", "denial", "followup")
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _matches(proposal: Proposal, lesson: dict, ids: dict[str, str]) -> bool:
    text = proposal.belief.casefold()
    if not all(keyword.casefold() in text for keyword in lesson.get("keywords", ())):
        return False
    if lesson.get("kind") == "kept_belief_now_wrong":
        return proposal.op in ("supersede", "forget") and proposal.target_belief_id == ids.get(
            lesson.get("target") or ""
        )
    return True


def _trigger(label: object) -> str:
    return str(label) if label in TRIGGERS else "followup"


def _expected(scenario: dict) -> list[dict]:
    """The lessons a scenario expects: ``expected`` (dev, frozen) or ``lessons`` (dev 2)."""
    return list(scenario.get("expected") or scenario.get("lessons") or [])


def run_scenario(scenario: dict, embed: Callable[[list[str]], numpy.ndarray]) -> dict[str, int]:
    """Reflect on one scenario: expected lessons found, spurious proposals, forbidden words,
    and per kind of lesson ``expected:<kind>`` and ``found:<kind>``."""
    episodes = [
        PulledEpisode(
            id=str(item["id"]),
            summary=str(item.get("summary", "")),
            interventions=tuple(
                (_trigger(said["trigger"]), str(said["text"]))
                for said in item.get("interventions", ())
            ),
            origin="untrusted" if item.get("third_party") else "clean",
        )
        for item in scenario["episodes"]
    ]
    ids = {str(b["id"]): str(b["id"]) for b in scenario.get("active_beliefs", ())}
    active = [
        LiveBelief(str(b["id"]), str(b["text"]), "active", 0.7, NOW, NOW)
        for b in scenario.get("active_beliefs", ())
    ]
    summaries = embed([episode.summary for episode in episodes])
    texts = intervention_texts(episodes)
    said = embed(texts) if texts else None
    beliefs = embed([belief.content for belief in active]) if active else None
    sentences = sentence_texts(episodes)
    proposals = reflect(
        episodes,
        summaries,
        active,
        intervention_embeddings=said,
        active_embeddings=beliefs,
        sentence_embeddings=embed(sentences) if sentences else None,
    )
    expected = _expected(scenario)
    found = sum(1 for lesson in expected if any(_matches(p, lesson, ids) for p in proposals))
    spurious = sum(1 for p in proposals if not any(_matches(p, lesson, ids) for lesson in expected))
    forbidden = sum(
        1
        for p in proposals
        for word in scenario.get("must_not", ())
        if word.casefold() in p.belief.casefold()
    )
    per_kind: dict[str, int] = {}
    for lesson in expected:
        kind = str(lesson.get("kind", "other"))
        per_kind[f"expected:{kind}"] = per_kind.get(f"expected:{kind}", 0) + 1
        if any(_matches(p, lesson, ids) for p in proposals):
            per_kind[f"found:{kind}"] = per_kind.get(f"found:{kind}", 0) + 1
    return per_kind | {
        "expected": len(expected),
        "found": found,
        "proposed": len(proposals),
        "spurious": spurious,
        "forbidden": forbidden,
    }


def run_file(
    path: Path, embed: Callable[[list[str]], numpy.ndarray], split: str | None = None
) -> dict[str, int]:
    """Totals over every scenario of a fixture file (``{"scenarios": [...]}``); with ``split``,
    only the scenarios whose ``split`` field equals it (the dev set's tune/held_back halves)."""
    if not path.exists():
        return {}
    totals: dict[str, int] = {}
    for scenario in json.loads(path.read_text(encoding="utf-8"))["scenarios"]:
        if split is not None and scenario.get("split") != split:
            continue
        for key, value in run_scenario(scenario, embed).items():
            totals[key] = totals.get(key, 0) + value
    return totals
