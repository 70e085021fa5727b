"""Tests for the built-in heuristic reflector."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy
import pytest

from credence.memory.gate import LiveBelief, Proposal
from credence.reflection.heuristic import (
    HeuristicEpisode,
    drop_refused,
    imperative,
    intervention_texts,
    main_clause_negative,
    reflect,
)

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def episode(episode_id: str, *interventions: tuple[str, str], origin: str = "clean"):
    return HeuristicEpisode(
        id=episode_id,
        summary=f"summary of {episode_id}",
        interventions=interventions,
        origin=origin,
    )


def active(belief_id: str, content: str, confidence: float = 0.6) -> LiveBelief:
    return LiveBelief(belief_id, content, "active", confidence, NOW, NOW)


def identical(count: int) -> numpy.ndarray:
    return numpy.tile(numpy.array([[1.0, 0.0]], dtype=numpy.float32), (count, 1))


def orthogonal(count: int) -> numpy.ndarray:
    return numpy.eye(count, dtype=numpy.float32)


def test_a_correction_repeated_in_two_episodes_becomes_a_lesson() -> None:
    episodes = [
        episode("ep_a", ("steer", "No, use metric units please")),
        episode("ep_b", ("followup", "also add a summary")),
        episode("ep_c", ("denial", "Can you use metric units? I told you before.")),
    ]
    assert reflect(episodes, orthogonal(3), []) == [
        Proposal(
            index=0,
            op="add",
            belief="Use metric units.",
            confidence=0.75,
            rationale=(
                "The user said this in 2 episodes (steer/denial): "
                '"No, use metric units please"; "Can you use metric units? I told you before.".'
            ),
            source_episodes=("ep_a", "ep_c"),
        )
    ]


def test_a_single_or_same_episode_intervention_is_not_enough() -> None:
    once = [episode("ep_a", ("steer", "use metric units")), episode("ep_b")]
    twice_in_one = [episode("ep_a", ("steer", "use metric units"), ("steer", "metric units!"))]
    assert reflect(once, None, []) == []
    assert reflect(twice_in_one, None, []) == []


@pytest.mark.parametrize(("support", "confidence"), [(2, 0.75), (3, 0.875), (4, 0.9375), (7, 0.95)])
def test_confidence_grows_with_support_and_is_capped(support: int, confidence: float) -> None:
    episodes = [episode(f"ep_{n}", ("steer", "Use metric units")) for n in range(support)]
    [proposal] = reflect(episodes, None, [])
    assert proposal.confidence == pytest.approx(confidence)
    assert proposal.source_episodes == tuple(f"ep_{n}" for n in range(support))


def test_opposite_polarity_interventions_are_separate_lessons() -> None:
    episodes = [
        episode("ep_1", ("steer", "Indent with tabs")),
        episode("ep_2", ("steer", "Don't indent with tabs")),
        episode("ep_3", ("steer", "indent with tabs!")),
        episode("ep_4", ("denial", "no, do not indent with tabs")),
        episode("ep_5", ("steer", "indent with tabs please")),
    ]
    proposals = reflect(episodes, None, [])
    assert [(p.belief, p.source_episodes) for p in proposals] == [
        ("Indent with tabs.", ("ep_1", "ep_3", "ep_5")),
        ("Don't indent with tabs.", ("ep_2", "ep_4")),
    ]


def test_the_negation_of_an_active_belief_is_proposed_as_a_supersede() -> None:
    episodes = [
        episode("ep_1", ("denial", "Never retry failed uploads")),
        episode("ep_2", ("denial", "stop, never retry failed uploads")),
    ]
    beliefs = [
        active("bel_unrelated", "Summarise in English"),
        active("bel_retry", "Retry uploads"),
    ]
    [proposal] = reflect(episodes, None, beliefs)
    assert proposal.op == "supersede"
    assert proposal.target_belief_id == "bel_retry"
    assert proposal.belief == "Never retry failed uploads."
    assert "bel_retry" in proposal.rationale


def test_restating_an_active_belief_strengthens_it() -> None:
    episodes = [
        episode("ep_1", ("steer", "Indent with spaces")),
        episode("ep_2", ("steer", "please indent with spaces, not tabs")),
    ]
    [proposal] = reflect(episodes, None, [active("bel_spaces", "Indent with spaces.", 0.6)])
    assert proposal.op == "strengthen"
    assert proposal.target_belief_id == "bel_spaces"
    assert proposal.belief == "Indent with spaces."
    # Noisy-or of the old 0.6 and the new 0.75.
    assert proposal.confidence == pytest.approx(0.9)


def test_nothing_to_strengthen_when_the_belief_is_already_at_the_cap() -> None:
    episodes = [episode("ep_1", ("steer", "Use spaces")), episode("ep_2", ("steer", "use spaces"))]
    assert reflect(episodes, None, [active("bel_spaces", "Use spaces", 0.95)]) == []


def test_only_active_beliefs_are_related() -> None:
    episodes = [episode("ep_1", ("steer", "Use spaces")), episode("ep_2", ("steer", "use spaces"))]
    pending = LiveBelief("bel_p", "Use spaces", "pending", 0.5, NOW, NOW)
    [proposal] = reflect(episodes, None, [pending])
    assert proposal.op == "add"


def test_episode_similarity_links_interventions_with_moderate_overlap() -> None:
    # {metric, unit, recipe} vs {metric, unit, weather, report}: Jaccard 0.4.
    episodes = [
        episode("ep_1", ("steer", "Use metric units in recipes")),
        episode("ep_2", ("steer", "Metric units in the weather report")),
    ]
    assert reflect(episodes, orthogonal(2), []) == []
    [proposal] = reflect(episodes, identical(2), [])
    assert proposal.source_episodes == ("ep_1", "ep_2")


def test_intervention_embeddings_link_paraphrases() -> None:
    episodes = [
        episode("ep_1", ("steer", "Keep answers short"), ("followup", "thanks")),
        episode("ep_2", ("denial", "too long, be brief")),
    ]
    texts = intervention_texts(episodes)
    assert texts == ["Keep answers short", "thanks", "too long, be brief"]
    paraphrase = numpy.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]])
    assert reflect(episodes, None, []) == []
    [proposal] = reflect(episodes, None, [], intervention_embeddings=paraphrase)
    assert proposal.belief == "Keep answers short."
    assert proposal.source_episodes == ("ep_1", "ep_2")


def test_strongest_support_first_and_capped_at_max_items() -> None:
    episodes = []
    for lesson, times in [("Cite sources", 2), ("Use metric units", 4), ("Reply in French", 3)]:
        episodes += [episode(f"ep_{lesson[:3]}_{n}", ("steer", lesson)) for n in range(times)]
    proposals = reflect(episodes, None, [])
    assert [(p.index, p.belief) for p in proposals] == [
        (0, "Use metric units."),
        (1, "Reply in French."),
        (2, "Cite sources."),
    ]
    assert [p.belief for p in reflect(episodes, None, [], max_items=2)] == [
        "Use metric units.",
        "Reply in French.",
    ]


def test_unknown_triggers_and_contentless_words_are_ignored() -> None:
    episodes = [
        episode("ep_1", ("praise", "Use metric units"), ("denial", "no!")),
        episode("ep_2", ("praise", "Use metric units"), ("denial", "no!")),
    ]
    assert reflect(episodes, None, []) == []


def test_embeddings_must_align() -> None:
    episodes = [episode("ep_1", ("steer", "a b c"))]
    with pytest.raises(ValueError, match="episodes"):
        reflect(episodes, orthogonal(2), [])
    with pytest.raises(ValueError, match="intervention"):
        reflect(episodes, None, [], intervention_embeddings=orthogonal(3))


@pytest.mark.parametrize(
    ("said", "lesson"),
    [
        ("no, use metric units please", "Use metric units."),
        ("Can you please cite your sources?", "Cite your sources."),
        ("I told you, ask before deleting files!", "Ask before deleting files."),
        ("You should run the tests first", "Run the tests first."),
        ("Ok. Make sure to pin versions, thanks", "Pin versions."),
        ("Stop apologising", "Stop apologising."),
        ("No. Never push to main.", "Never push to main."),
        ("thanks", "Thanks."),
    ],
)
def test_imperative_lessons_from_the_users_words(said: str, lesson: str) -> None:
    assert imperative(said) == lesson


def test_imperative_picks_the_sentence_about_the_cluster() -> None:
    said = "That is wrong. Please use metric units in recipes."
    assert imperative(said, frozenset({"metric", "unit"})) == "Use metric units in recipes."


def test_contrastive_tails_do_not_flip_polarity() -> None:
    assert not main_clause_negative("Indent with spaces, not tabs")
    assert not main_clause_negative("Use spaces instead of tabs")
    assert main_clause_negative("Don't indent with tabs")


def test_output_does_not_depend_on_hash_seeds() -> None:
    script = (
        "from credence.reflection.heuristic import HeuristicEpisode as E, reflect\n"
        "eps = [E(f'ep_{n}', 's', (('steer', t),), 'clean') for n, t in enumerate(\n"
        "    ['use metric units', 'cite all sources', 'metric units please', 'cite sources',\n"
        "     'never push to main', 'do not push to main', 'always metric units'])]\n"
        "print(reflect(eps, None, []))\n"
    )
    server = str(Path(__file__).resolve().parents[2] / "server")
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [server, env.get("PYTHONPATH")]))
        result = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1
    assert "Use metric units." in outputs.pop()


def forgotten(belief_id: str, content: str, vector: list[float]) -> LiveBelief:
    return LiveBelief(
        belief_id, content, "forgotten", 0.6, NOW, NOW, numpy.array(vector, dtype=numpy.float32)
    )


def draft(index: int, text: str) -> Proposal:
    return Proposal(index, "add", text, 0.75, "r", ("ep_a", "ep_b"))


def test_lessons_the_reviewer_forgot_are_dropped_before_the_cap() -> None:
    drafts = [
        draft(0, "Use metric units."),
        draft(1, "Answer in French."),
        draft(2, "Never answer in French."),
        draft(3, "Add a summary."),
        draft(4, "Cite sources."),
    ]
    vectors = numpy.array(
        [[1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0.6, 0.8, 0]], dtype=numpy.float32
    )
    refused = [
        forgotten("b_1", "use METRIC units", [0, 0.6, -0.8]),  # same words, unrelated vector
        forgotten("b_2", "Reply in French.", [0, 1, 0]),  # a near-duplicate by embedding
    ]
    kept = drop_refused(drafts, vectors, refused, max_items=2)
    # "Never answer in French." has the opposite polarity: a contradiction, not a repeat.
    assert [(p.index, p.belief) for p in kept] == [
        (0, "Never answer in French."),
        (1, "Add a summary."),
    ]
    assert drop_refused(drafts, vectors, [], max_items=10) == drafts
