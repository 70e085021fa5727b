"""The gate on the development and regression pair sets through the bundled sentence model."""

from __future__ import annotations

import pytest
from harness.gate_eval import (
    RARE_PHENOMENA,
    SETS,
    Case,
    Outcome,
    classify,
    load,
    per_phenomenon,
    run,
    summary,
)

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


def test_phenomena_of_one_or_two_pairs_are_counted_together() -> None:
    def outcome(phenomenon: str, got: str) -> Outcome:
        case = Case(id=got, phenomenon=phenomenon, old="a", new="b", expect="duplicate")
        return Outcome(case=case, got=got, reasons=())

    outcomes = [outcome("synonym", "duplicate") for _ in range(3)]
    outcomes += [outcome("idiom", "duplicate"), outcome("acronym", "passed")]
    assert per_phenomenon(outcomes) == {RARE_PHENOMENA: (1, 2), "synonym": (3, 3)}


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


# Blind sets of corrections worded close to the belief they change (and, from set 5, true
# paraphrases beside them): (set, cases, corrections rejected at most, paraphrases caught at
# least). Each set was run as found, held out while the one before it was tuned on, then tuned
# on. Rejected as first run held out: set 2 18, set 3 11, set 4 4, set 5 3 (of 130), set 6 5,
# set 7 6, set 8 3, set 9 0, set 10 11, set 11 8, set 12 4, set 13 4, set 14 9, set 15 2,
# set 16 3, set 17 3, set 18 2, set 19 3, set 20 4, set 21 0 and set 22 3 (of 100). Paraphrases
# gained after 67ccf5f came from acronyms, temperatures, "died", WordNet's verb phrases and ranks
# in words; after ca740ae (set 21's round) from units, ordinals, addresses, light verbs, lengths
# of time, weekdays, "pay" / "cost" and possessives; in set 23's round (2026-12-06, held out 24
# and 25) from phrasings said plainly ("would rather have", "reports to", "goes running", "is
# the owner of", an allergy told from its cause), known acronyms, a relation told from its
# other end, "every second Friday" and a passive's agent owned by the user. A comment's
# history may end before its floor.
BLIND_SETS = [
    # Left: a comma-set clause and "any" / "every".
    ("corrections1", 150, 2, None),
    # Left: "a new tire" / "new tires" (a count read as a plural costs paraphrases) and a role
    # swap with a pronoun; "in third grade" / "third in his grade" reads as two ranks.
    ("corrections2", 150, 2, None),
    # Left: "a couple of friends" / "a couple", "owns" / "uses", "auditing a course" /
    # "taking it for credit": words whose meanings the model blurs.
    ("corrections3", 150, 3, None),
    # Left: a scope narrowed in a reworded sentence ("their partner" / "the user" swapped across
    # a compound sentence is reviewed since set 21's round).
    ("corrections4", 150, 1, None),
    # 56 of 70 paraphrases caught at 47d1354 and after every round (the readings cost none),
    # 59 (general synonyms: "ends" / "expires", "mother" / "mom", "kids" / "children"), then 60.
    ("mixed5", 200, 0, 63),
    # Corrections rejected 12 of 100 at 47d1354, 6 after tuning on sets 2 to 4, 5 after set 5,
    # then 2; paraphrases caught 73 of 100 at all three, 76, 78, then 79.
    ("mixed6", 200, 1, 87),
    # Corrections rejected 9 of 100 at 47d1354, 6 after tuning on sets 2 to 5 and after set 6,
    # then 1, then 0 (a part named for all, on set 25's round); paraphrases caught 55, 54 (one
    # lost to those readings), 56, 57, 58, 59, 60, 61, 65, then 75.
    ("mixed7", 200, 0, 75),
    # Corrections rejected 4 of 100 at 47d1354, 3 after tuning on sets 2 to 6 and after set 7,
    # then 1; paraphrases caught 55, 57 throughout, 59, 60, then 61.
    ("mixed8", 200, 1, 74),
    # Never tuned on: corrections rejected 3 of 100 at 47d1354, 0 after tuning on sets 2 to 7,
    # after set 8 and after set 10; paraphrases caught 63, 65 at all three, 67, then 68.
    ("mixed9", 200, 0, 76),
    # Corrections rejected 16 of 100 at 47d1354, 11 as found (after sets 2 to 8), then 4;
    # paraphrases caught 65, then 64 at both, 74 (word orders, spelt numbers, ages and negation
    # words read as such, sets 10 to 16), then 76 (synonyms); rejected 3 once "in fifth grade"
    # read as a rank. Left: two idioms ("has their back" / "is on their back"), "the senior
    # engineer" / "a senior engineer".
    ("mixed10", 200, 3, 84),
    # Corrections rejected 16 of 100 at 47d1354, 8 as found, 7 after set 10, 2, 1 after set 14,
    # then 0; paraphrases caught 63, 62, 62, 63, 69, 73, then 74.
    ("mixed11", 200, 0, 89),
    # Corrections rejected 7 of 100 at 47d1354, 4 as found (after set 10) and after set 11,
    # then 1; paraphrases caught 55, 57, 60, 64, then 65. Left: "the user's brother-in-law lent
    # them" / "the user lent their brother-in-law" (a hyphenated noun splits into three words).
    ("mixed12", 200, 1, 80),
    # Corrections rejected 4 of 100 at 47d1354, 4 as found (after set 11) and after set 12, then
    # 2, then 1 ("client-facing documents" / "all documents", a part named for all); paraphrases
    # caught 69, 70, 75, 76, then 83. Left: "in any of the user's repositories" / "in the
    # user's work repositories", a prohibition narrowed.
    ("mixed13", 200, 1, 83),
    # Corrections rejected 13 of 100 at 47d1354, 9 as found (after set 12), 8 after set 13,
    # then 3, then 2 ("feature branches" / "any branch"); paraphrases caught 65, 72, 75, 76, 78,
    # then 88. Left: "decaf coffee" / "coffee" (a word dropped reads as saying less), "owns" /
    # "uses" ("own" and "use" are stop words).
    ("mixed14", 200, 2, 88),
    # Corrections rejected 7 of 100 at 47d1354, 2 as found (after set 13) and after set 14, then
    # 1; paraphrases caught 64, 70, 71, 72, then 73. Left: "splits the rent evenly" / "splits the
    # rent".
    ("mixed15", 200, 1, 85),
    # Held out until set 17 was written: corrections rejected 7 of 100 at 47d1354, 3 as found
    # (after set 14) and after set 15, then 1; paraphrases caught 53, then 56 at both, 57
    # (negation words), 62, 64, then 65. Left: "a rental property" / "rental
    # properties".
    ("mixed16", 200, 1, 80),
    # Held out for one round: corrections rejected 7 of 100 at 47d1354, 3 as found (after set 15,
    # on 02ec9f0) and after set 16, then 1; paraphrases caught 49, 51 at e929c21, 52 as found,
    # 53, 54, 58, 60, then 62. Left: "the user's husband handles the bills" / "the user handles
    # the bills, not their husband".
    ("mixed17", 200, 1, 77),
    # Held out for one round: corrections rejected 6 of 100 at 47d1354, 2 at e929c21, as found
    # (cb4c8bb) and after set 17, then 0; paraphrases caught 59, 58 at e929c21, 63 as found,
    # then 64.
    ("mixed18", 200, 0, 76),
    # Held out for one round: corrections rejected 5 of 100 at 47d1354, 3 at e929c21 and as
    # found (a83e682), then 0; paraphrases caught 53 at both, 58 as found, 60, 61, then 62.
    ("mixed19", 200, 0, 73),
    # Held out for one round: corrections rejected 4 of 100 as found (67ccf5f), 3 after set
    # 19's first readings, then 0; paraphrases caught 71, 73 (acronyms, temperatures), 74, then
    # 79 after the set 21 round, 84, then 86 after set 22's.
    ("mixed20", 200, 0, 93),
    # Held out for one round: corrections rejected 1 of 100 on 67ccf5f, 0 as found (a56c763);
    # paraphrases caught 69 on 67ccf5f, 68 as found, then 79 (units, ordinals, addresses, light
    # verbs, lengths of time).
    ("mixed21", 200, 0, 90),
    # Held out for one round: corrections rejected 3 of 100 and paraphrases caught 55 as found
    # (4296150, the code of ca740ae); 2 and 61 after set 21's round, unread; then tuned on: 0 and
    # 73 (a bare present before the other's past, dates, capital PM, US dollars, WordNet nouns,
    # an existential "there is", street words, a handing-over said from either end).
    ("mixed22", 200, 0, 86),
    # Held out for two rounds: corrections rejected 2 of 100 and paraphrases caught 69 as found
    # (867a9b8); 2 and 64 on ca740ae, before set 21's round; 2 and 73 after set 22's, unread;
    # then tuned on: 0 and 84 (a cause put in front, "the boss's boss", "able to", "'21",
    # "water/day", a purpose, "whenever", "cut back on", "unless", street addresses).
    ("mixed23", 200, 0, 90),
    # Held out for two rounds: corrections rejected 2 of 100 and paraphrases caught 76 on
    # 3fd0525, 77 as found (dc7b6a9), 78 after set 22's round, 83 after set 23's, unread; then
    # tuned on: 0 and 93 (the user named by a pronoun when roles trade, "not allowed" /
    # "forbidden", "Saturday mornings", lists of three, "looks after", a parent's kin, "direct
    # report", "has no objection to", "50/50", "version 3.11 of Python").
    ("mixed24", 200, 0, 95),
    # Held out for three rounds: corrections rejected 0 of 100 and paraphrases caught 74 as
    # found (6cdd73d), 79 after set 23's round and after set 24's, unread; then tuned on: 0 and
    # 92 ("$2 million", slashed dates, "not a fan of", "harder than" / "easier than", "made up
    # of", "grew up", "Dec", "early bird", "Python version 3.11", "never skips breakfast").
    ("mixed25", 200, 0, 92),
    # Held out: written from the product description alone; corrections rejected 1 of 100 and
    # paraphrases caught 72 as found (c8bb14f), 76 after set 24's round, 79 after set 25's,
    # unread.
    ("mixed26", 200, 1, 79),
    # Held out: written from the product description alone; corrections rejected 2 of 100 and
    # paraphrases caught 68 as found (996a3a4), 69 after set 25's round, unread.
    ("mixed27", 200, 2, 69),
    # Held out: written from the product description alone; corrections rejected 1 of 100 and
    # paraphrases caught 70 as found (55ed1a8), unread.
    ("mixed28", 200, 1, 70),
    # Synonyms, tuned on: near-synonym changes rejected 3 of 100 as found (5997516), then 2;
    # paraphrases caught 60, 64, 66 (WordNet's verb phrases), 68, then 74. Left: a stronger word
    # of one kind ("small" / "tiny", "painted" / "stained"), which WordNet links as one and
    # many paraphrases need (reading them apart cost 45 paraphrases over the sets).
    ("synonyms1", 200, 2, 89),
]


@pytest.mark.parametrize(("name", "cases", "rejected", "caught"), BLIND_SETS)
def test_blind_corrections_in_close_words_stay_reviewed(
    embed, name: str, cases: int, rejected: int, caught: int | None
) -> None:
    outcomes = run(load(SETS[name]), embed)
    assert len(outcomes) == cases
    assert summary(outcomes)["corrections_rejected"] <= rejected
    if caught is not None:
        paraphrases = [o for o in outcomes if o.case.expect == "duplicate"]
        assert sum(o.got == "duplicate" for o in paraphrases) >= caught
