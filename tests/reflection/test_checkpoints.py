"""Step checkpoints: typed JSON, readable when older versions wrote them as dicts."""

from __future__ import annotations

import json

import pytest

from credence.models import JobPartial, JobUsage
from credence.reflection.checkpoints import (
    AnswerMeta,
    CheckCheckpoint,
    ProposeCheckpoint,
    PullCheckpoint,
    SubmitCheckpoint,
    encode,
    resume,
)

USAGE = JobUsage(
    attempts=2, prompt_tokens=900, completion_tokens=120, token_cap=4000, finish_reason="stop"
)
PARTIAL = JobPartial(reason="token_cap", detail="2 of 5 episodes left out", episodes_omitted=2)


def _old(value: dict) -> str:
    """A checkpoint as versions before typed steps stored it."""
    return json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize(
    "checkpoint",
    [
        PullCheckpoint(
            episode_ids=["ep_1", "ep_é"],
            untrusted=["ep_1"],
            ranking="newest",
            active_beliefs=3,
            refused=1,
            edited=2,
        ),
        AnswerMeta(reflector="llm", considered=["ep_1"], partial=PARTIAL, usage=USAGE),
        ProposeCheckpoint(
            reflector="stub", considered=["ep_1"], reused_answer=True, valid=2, dropped=1
        ),
        CheckCheckpoint(
            safe=1, needs_review=2, duplicate=3, live_beliefs=40, gated_against=5, decayed=6
        ),
        SubmitCheckpoint(accepted=3, rejected=1),
    ],
)
def test_a_checkpoint_reads_back_as_written(checkpoint) -> None:
    assert resume(encode(checkpoint), type(checkpoint)) == checkpoint


def test_field_names_are_the_keys_earlier_versions_stored() -> None:
    pull = PullCheckpoint(episode_ids=["ep_1"])
    assert list(json.loads(encode(pull))) == [
        "episode_ids",
        "untrusted",
        "ranking",
        "active_beliefs",
        "refused",
        "edited",
    ]
    propose = ProposeCheckpoint(reflector="stub", considered=[])
    assert list(json.loads(encode(propose))) == [
        "reflector",
        "considered",
        "partial",
        "usage",
        "reused_answer",
        "valid",
        "dropped",
    ]


def test_an_old_pull_checkpoint_resumes_with_its_episodes() -> None:
    stored = _old(
        {
            "episode_ids": ["ep_2", "ep_1"],
            "untrusted": [],
            "ranking": "newest",
            "active_beliefs": 4,
            "refused": 0,
            "edited": 0,
        }
    )
    found = resume(stored, PullCheckpoint)
    assert found is not None
    assert found.episode_ids == ["ep_2", "ep_1"] and found.ranking == "newest"


def test_an_old_pull_checkpoint_without_a_ranking_counts_as_recall() -> None:
    found = resume(_old({"episode_ids": ["ep_1"], "untrusted": []}), PullCheckpoint)
    assert found == PullCheckpoint(episode_ids=["ep_1"], ranking="recall")


def test_an_old_answer_meta_resumes_with_its_usage_and_partial() -> None:
    stored = _old(
        {
            "reflector": "llm",
            "considered": ["ep_1", "ep_2"],
            "partial": {"reason": "token_cap", "detail": "2 of 5 episodes left out",
                        "episodes_omitted": 2},
            "usage": {"attempts": 2, "prompt_tokens": 900, "completion_tokens": 120,
                      "token_cap": 4000, "finish_reason": "stop"},
        }
    )  # fmt: skip
    assert resume(stored, AnswerMeta) == AnswerMeta(
        reflector="llm", considered=["ep_1", "ep_2"], partial=PARTIAL, usage=USAGE
    )


def test_a_finished_propose_step_resumes_as_its_answer_meta() -> None:
    stored = _old(
        {
            "reflector": "stub",
            "considered": ["ep_1"],
            "partial": None,
            "usage": None,
            "reused_answer": False,
            "valid": 1,
            "dropped": 0,
        }
    )
    assert resume(stored, AnswerMeta) == AnswerMeta(reflector="stub", considered=["ep_1"])


@pytest.mark.parametrize(
    ("stored", "kind"),
    [
        (None, PullCheckpoint),
        ("", PullCheckpoint),
        ("not json", PullCheckpoint),
        (_old({"episodes": 3}), PullCheckpoint),
        (_old({"episode_ids": "ep_1"}), PullCheckpoint),
        (_old({"episode_ids": ["ep_1"], "ranking": "alphabetical"}), PullCheckpoint),
        (_old(["ep_1"]), PullCheckpoint),
        (_old({"considered": ["ep_1"]}), AnswerMeta),
        (_old({"reflector": "oracle", "considered": []}), AnswerMeta),
        (_old({"reflector": "llm", "considered": [], "usage": {"tokens": 3}}), AnswerMeta),
    ],
)
def test_an_unreadable_checkpoint_means_running_the_step_afresh(stored, kind) -> None:
    assert resume(stored, kind) is None
