"""The labelled gate corpus through the real gate and the bundled sentence model: floors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from harness.gate_corpus import (
    CATEGORIES,
    COMPATIBLE,
    CORPUS,
    EXACT_DUPLICATE,
    NEGATION_CONTRADICTION,
    PARAPHRASE_DUPLICATE,
    UNRELATED,
    VALUE_CHANGE,
    polarity_conflict,
    run_corpus,
    scores,
)

from credence.memory.semantics.gate import BeliefIndex, LiveBelief, Proposal, gate
from credence.memory.semantics.model import MiniLMEmbedder
from credence.memory.semantics.tokens import analyse
from credence.models.reasons import Reason

NOW = datetime(2026, 6, 1, tzinfo=UTC)
EMBEDDER = MiniLMEmbedder()


@pytest.fixture(scope="module")
def rows():
    return run_corpus(EMBEDDER.embed_sync)


def pairs(category: str) -> list[tuple[str, str]]:
    return [(old, new) for kind, old, new in CORPUS if kind == category]


def seed_negations() -> list[tuple[str, str]]:
    """Negation pairs the seed rule covers: negation in one side and Jaccard ≥ 0.4."""
    found = []
    for old, new in pairs(NEGATION_CONTRADICTION):
        _, old_tokens, old_negative = analyse(old)
        _, new_tokens, new_negative = analyse(new)
        if polarity_conflict(old_tokens, old_negative, new_tokens, new_negative):
            found.append((old, new))
    return found


def test_the_corpus_is_large_and_covers_every_category() -> None:
    assert len(CORPUS) >= 150
    for category in CATEGORIES:
        assert len(pairs(category)) >= 25, category
    assert len(seed_negations()) >= 25


def test_exact_duplicates_are_always_rejected_as_duplicates(rows) -> None:
    for category, old, new, _, reasons in rows:
        if category == EXACT_DUPLICATE:
            assert reasons == ("duplicate_of:bel_old",), (old, new)


def test_paraphrases_are_duplicates(rows) -> None:
    assert scores(rows)[PARAPHRASE_DUPLICATE]["recall"] >= 0.8


def test_value_changes_are_contradictions_and_never_duplicates(rows) -> None:
    assert scores(rows)[VALUE_CHANGE]["recall"] >= 0.8
    for category, old, new, guess, reasons in rows:
        if category != VALUE_CHANGE:
            continue
        assert guess not in (EXACT_DUPLICATE, PARAPHRASE_DUPLICATE), (old, new, reasons)
        if guess == VALUE_CHANGE:
            contradicts = reasons.index("contradicts:bel_old")
            assert reasons[contradicts + 1].startswith("changes:bel_old:"), reasons
            old_value, _, new_value = reasons[contradicts + 1].split(":", 2)[2].partition("→")
            assert old_value.casefold() in old.casefold(), reasons
            assert new_value.casefold() in new.casefold(), reasons


def test_negations_are_contradictions_and_the_seed_rule_holds_fully(rows) -> None:
    assert scores(rows)[NEGATION_CONTRADICTION]["recall"] >= 0.9
    flagged = {(old, new) for _, old, new, _, reasons in rows if "contradicts:bel_old" in reasons}
    assert set(seed_negations()) <= flagged


def test_compatible_and_unrelated_pairs_are_rarely_contradictions(rows) -> None:
    for category in (COMPATIBLE, UNRELATED):
        mine = [row for row in rows if row[0] == category]
        false = [row for row in mine if "contradicts:bel_old" in row[4]]
        assert len(false) / len(mine) <= 0.02, false
        assert not [row for row in mine if row[3] in (EXACT_DUPLICATE, PARAPHRASE_DUPLICATE)]


def test_batch_duplicates_and_batch_negations_hold_fully() -> None:
    for old, new in pairs(EXACT_DUPLICATE):
        first, second = gate(
            [
                Proposal(3, "add", old, 0.7, "", ("ep_1",)),
                Proposal(4, "add", new, 0.7, "", ("ep_1",)),
            ],
            BeliefIndex.build([]),
            frozenset(),
        )
        assert first.gate == "safe" and second.reasons == (Reason("duplicate_in_batch", "3"),), (
            old,
            new,
        )
    for old, new in seed_negations():
        _, second = gate(
            [
                Proposal(0, "add", old, 0.7, "", ("ep_1",)),
                Proposal(1, "add", new, 0.7, "", ("ep_1",)),
            ],
            BeliefIndex.build([]),
            frozenset(),
        )
        assert Reason("contradicts_in_batch", "0") in second.reasons, (old, new)


def test_op_routing_and_untrusted_sources_always_need_review() -> None:
    for category, old, new in CORPUS:
        index = BeliefIndex.build([LiveBelief("bel_old", old, "active", 0.8, NOW, NOW)])
        (weaken,) = gate(
            [Proposal(0, "weaken", new, 0.4, "", ("ep_1",), "bel_old")], index, frozenset()
        )
        assert weaken.gate == "needs_review" and weaken.reasons[0] == Reason("op", "weaken"), (
            old,
            new,
        )
        (untrusted,) = gate(
            [Proposal(0, "add", new, 0.7, "", ("ep_web",))], index, frozenset({"ep_web"})
        )
        assert Reason("untrusted_source") in untrusted.reasons, (category, new)


def test_polarity_conflict_is_the_lexical_floor() -> None:
    never, retry = analyse("Never retry failed uploads"), analyse("Retry failed uploads")
    assert polarity_conflict(never[1], never[2], retry[1], retry[2])
    dont = analyse("Don't retry failed uploads")
    assert not polarity_conflict(never[1], never[2], dont[1], dont[2])
    unrelated = analyse("Summarise meeting notes")
    assert not polarity_conflict(never[1], never[2], unrelated[1], unrelated[2])
