"""The gate on the development and regression pair sets through the bundled sentence model."""

from __future__ import annotations

import pytest
from harness.gate_eval import SETS, classify, load, run, summary

from credence.memory.semantics.model import MiniLMEmbedder


@pytest.fixture(scope="module")
def embed():
    return MiniLMEmbedder().embed_sync


def test_every_phenomenon_of_the_issue_has_development_cases() -> None:
    phenomena = {case.phenomenon for case in load(SETS["dev"])}
    for wanted in (
        "synonym",
        "antonym",
        "swapped_preference",
        "scoped_exception",
        "refinement",
        "person_change",
        "tool_change",
        "number_change",
        "unit_change",
        "format_change",
        "time_change",
        "locale_change",
        "number_format",
        "same_shape_different_subject",
        "multilingual",
        "both_negative",
    ):
        assert wanted in phenomena


def test_the_development_set_meets_the_issue_targets(embed) -> None:
    figures = summary(run(load(SETS["dev"]), embed))
    assert figures["corrections_rejected"] == 0
    assert figures["overall"] >= 0.8
    assert figures["duplicates_caught"] >= 0.7
    assert figures["contradictions_flagged"] >= 0.8
    assert figures["false_contradictions"] <= 0.03


def test_every_regression_case_stays_fixed(embed) -> None:
    outcomes = run(load(SETS["regression"]), embed)
    assert outcomes
    assert [o.case.id for o in outcomes if not o.right] == []


def test_a_duplicate_verdict_outranks_any_reason_and_unsourced_is_no_flag() -> None:
    assert classify("duplicate", ("contradicts:x",)) == "duplicate"
    assert classify("needs_review", ("unsourced",)) == "passed"
    assert classify("needs_review", ("contradicts_in_batch:1",)) == "contradiction"
    assert classify("needs_review", ("unsettled:x",)) == "flagged"


def test_the_blind_development_set_never_rejects_a_correction(embed) -> None:
    cases = load(SETS["dev2"])
    assert len(cases) > 200
    figures = summary(run(cases, embed))
    assert figures["corrections_rejected"] == 0
    assert figures["false_contradictions"] <= 0.03


def test_the_third_development_set_never_rejects_a_correction(embed) -> None:
    cases = load(SETS["dev3"])
    assert len(cases) >= 80
    outcomes = run(cases, embed)
    assert summary(outcomes)["corrections_rejected"] == 0
    # "turned on" / "turned off" and "two-space" / "four-space" were once rejected as near
    # duplicates; an opposite or another number is never one.
    wrongly_rejected = {"d3-065", "d3-078"}
    assert all(o.got != "duplicate" for o in outcomes if o.case.id in wrongly_rejected)


def test_the_fourth_development_set_runs_whole_and_never_rejects_a_correction(embed) -> None:
    # Its first run raised TypeError inside the gate (d4-053, a reordering); every case must
    # now be judged.
    cases = load(SETS["dev4"])
    assert len(cases) == 160
    outcomes = run(cases, embed)
    assert len(outcomes) == len(cases)
    assert summary(outcomes)["corrections_rejected"] == 0


@pytest.mark.parametrize(
    ("name", "false_contradictions"), [("dev5", 0.032), ("dev6", 0.032), ("dev7", 0.0)]
)
def test_the_later_blind_sets_never_reject_a_correction(
    embed, name: str, false_contradictions: float
) -> None:
    # dev5 was tuned on after its first run (1 correction rejected, 6.2% false contradictions);
    # dev6 and dev7 were not: these floors are their first runs, kept so a change cannot slip
    # below them.
    figures = summary(run(load(SETS[name]), embed))
    assert figures["cases"] == 160
    assert figures["corrections_rejected"] == 0
    assert figures["false_contradictions"] <= false_contradictions


def test_blind_corrections_in_close_words_stay_reviewed(embed) -> None:
    # 150 corrections written blind to fool a naive check; first run: 15 rejected as duplicates.
    # The two left: a comma-set clause and "any" / "every".
    outcomes = run(load(SETS["corrections1"]), embed)
    assert len(outcomes) == 150
    assert summary(outcomes)["corrections_rejected"] <= 2


def test_a_second_blind_set_tuned_on_after_its_first_run_stays_reviewed(embed) -> None:
    # 42 of 150 rejected at the start of 2026-12-05, 18 on its first run as a held-out set, then
    # tuned on. The three left: "a new tire" / "new tires" (a count read as a plural costs
    # paraphrases), "in third grade" / "third in his grade", and a role swap with a pronoun.
    outcomes = run(load(SETS["corrections2"]), embed)
    assert len(outcomes) == 150
    assert summary(outcomes)["corrections_rejected"] <= 3


def test_a_third_blind_set_tuned_on_after_its_first_run_stays_reviewed(embed) -> None:
    # 20 of 150 rejected at 47d1354, before set 2 was tuned on; 11 on its first run as a held-out
    # set, then tuned on. The three left: "a couple of friends" / "a couple", "owns" / "uses",
    # "auditing a course" / "taking it for credit": words whose meanings the model blurs.
    outcomes = run(load(SETS["corrections3"]), embed)
    assert len(outcomes) == 150
    assert summary(outcomes)["corrections_rejected"] <= 3


def test_a_fourth_blind_set_tuned_on_after_its_first_run_stays_reviewed(embed) -> None:
    # 9 of 150 rejected at 47d1354, 6 after tuning on set 2, 4 after tuning on set 3 (each run
    # once before it was tuned on), then tuned on. The two left: a scope narrowed in a reworded
    # sentence and two agents swapped across a compound sentence.
    outcomes = run(load(SETS["corrections4"]), embed)
    assert len(outcomes) == 150
    assert summary(outcomes)["corrections_rejected"] <= 2


def test_a_fifth_blind_set_tuned_on_after_its_first_run_stays_reviewed(embed) -> None:
    # 130 corrections and 70 paraphrases. Corrections rejected: 8 at 47d1354, 4 after tuning
    # on sets 2 and 3, 3 after set 4 (each run before it was tuned on), then 1; paraphrases
    # caught: 56 of 70 throughout, so the readings cost no duplicate here.
    outcomes = run(load(SETS["mixed5"]), embed)
    assert len(outcomes) == 200
    figures = summary(outcomes)
    assert figures["corrections_rejected"] <= 1
    assert sum(o.got == "duplicate" for o in outcomes if o.case.expect == "duplicate") >= 56
