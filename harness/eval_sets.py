"""The retrieval and recall sets in the evaluators' shapes: development and frozen.

Development sets are tuned on; the frozen ones (harness/corpora/frozen, written by an outsider
before this code) are only ever measured. Frozen beliefs carry no confidence: all get 0.8.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import conversation_set, paraphrase_set, retrieval_set
from harness.recall_eval import Labelled

FROZEN = Path(__file__).resolve().parent / "corpora" / "frozen"
FROZEN_CONFIDENCE = 0.8

Memory = list[tuple[str, str, float]]
Tasks = list[tuple[str, Any]]


def dev_paraphrase() -> list[tuple[Memory, Tasks]]:
    """The 56 paraphrased tasks over one agent's 424 beliefs."""
    memory, tasks = paraphrase_set.beliefs_and_tasks()
    return [(memory, tasks)]


def dev_templates() -> list[tuple[Memory, Tasks]]:
    """harness/retrieval_set.py: 120 template queries, each over its agent's and role's notes."""
    data = retrieval_set.build()
    scoped: dict[tuple[str, str | None], Tasks] = {}
    for query in data.queries:
        scoped.setdefault((query.agent_id, query.role), []).append((query.text, query.needed))
    return [
        (
            [
                (b.belief_id, b.content, b.confidence)
                for b in data.beliefs
                if b.agent_id == agent and (b.role is None or b.role == role)
            ],
            labelled,
        )
        for (agent, role), labelled in scoped.items()
    ]


def frozen_retrieval() -> list[tuple[Memory, Tasks]]:
    """The frozen retrieval set; a task is answered when any of its answers is served."""
    data = json.loads((FROZEN / "retrieval.json").read_text(encoding="utf-8"))
    memory = [(b["id"], b["text"], FROZEN_CONFIDENCE) for b in data["beliefs"]]
    tasks = [(t["task"], tuple(t["answers"])) for t in data["tasks"]]
    return [(memory, tasks)]


def _turn_text(speaker: str, day: str, text: str) -> str:
    return f"{speaker} ({day}): {text}"


def dev_conversations() -> tuple[list[tuple[str, str]], list[Labelled]]:
    """(turn id, stored text) and labelled questions of the development conversations."""
    turns, questions = conversation_set.build()
    return (
        [(t.turn_id, _turn_text(t.speaker, t.day, t.text)) for t in turns],
        [Labelled(q.text, q.evidence, q.kind) for q in questions],
    )


def frozen_conversations() -> tuple[list[tuple[str, str]], list[Labelled]]:
    """The frozen recall set, stored the same way as the development one."""
    turns = [
        json.loads(line)
        for line in (FROZEN / "recall" / "turns.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    questions = [
        json.loads(line)
        for line in (FROZEN / "recall" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return (
        [(t["id"], _turn_text(t["speaker"], t["date"], t["text"])) for t in turns],
        [Labelled(q["question"], tuple(q["evidence"]), q["kind"]) for q in questions],
    )
