"""Gate evaluation over the dev, regression and frozen pair sets, scored per phenomenon."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import numpy

CORPORA = Path(__file__).resolve().parent / "corpora"
SETS = {
    "dev": CORPORA / "dev" / "gate_pairs.jsonl",
    # A second development set, written blind (without reading the gate or the first set).
    "dev2": CORPORA / "dev" / "gate_pairs_2.jsonl",
    # A third, written from the product description before the paraphrase rules were tuned.
    "dev3": CORPORA / "dev" / "gate_pairs_3.jsonl",
    # A fourth, written blind by another helper on 2026-12-03 (160 pairs, 70 of them duplicates).
    "dev4": CORPORA / "dev" / "gate_pairs_4.jsonl",
    # A fifth, written blind by another helper later on 2026-12-03 (160 pairs, 60 duplicates).
    "dev5": CORPORA / "dev" / "gate_pairs_5.jsonl",
    # A sixth, written blind by another helper on 2026-12-04 (160 pairs, 60 duplicates).
    "dev6": CORPORA / "dev" / "gate_pairs_6.jsonl",
    # A seventh, written blind by another helper on 2026-12-05 (160 pairs, 66 duplicates).
    "dev7": CORPORA / "dev" / "gate_pairs_7.jsonl",
    # Corrections worded close to the belief they change, written blind by a helper asked to
    # make a naive check take them for duplicates (2026-12-05); tuned on after its first run.
    "corrections1": CORPORA / "dev" / "corrections_1.jsonl",
    # A second such set by another helper, held out for one round, then tuned on (2026-12-05).
    "corrections2": CORPORA / "dev" / "corrections_2.jsonl",
    # A third by another helper (2026-12-05), held out for one round, then tuned on.
    "corrections3": CORPORA / "dev" / "corrections_3.jsonl",
    # A fourth (2026-12-05), in the words an assistant stores memories in; held out for one
    # round, then tuned on.
    "corrections4": CORPORA / "dev" / "corrections_4.jsonl",
    # A fifth (2026-12-05): 130 such corrections and 70 true paraphrases, so that the cost of
    # every reading in duplicates is measured too; held out for two rounds, then tuned on.
    "mixed5": CORPORA / "dev" / "mixed_5.jsonl",
    # A sixth (2026-12-05): 100 corrections and 100 paraphrases; held out for one round, then
    # tuned on.
    "mixed6": CORPORA / "dev" / "mixed_6.jsonl",
    # A seventh (2026-12-05), half about software work, half about the user's life: 100 and 100;
    # held out for two rounds, then tuned on.
    "mixed7": CORPORA / "dev" / "mixed_7.jsonl",
    # An eighth (2026-12-05), the subtle changes a quick reader misses: 100 and 100; held out
    # for one round, then tuned on.
    "mixed8": CORPORA / "dev" / "mixed_8.jsonl",
    # A ninth (2026-12-05), a third of it about how the user wants to be written to: 100 and
    # 100; held out for two rounds, never tuned on.
    "mixed9": CORPORA / "dev" / "mixed_9.jsonl",
    # A tenth (2026-12-05), no more than four corrections of any one kind: 100 and 100; held out
    # for one round, then tuned on.
    "mixed10": CORPORA / "dev" / "mixed_10.jsonl",
    # An eleventh (2026-12-05), no more than three of any one kind: 100 and 100; held out for
    # one round, then tuned on.
    "mixed11": CORPORA / "dev" / "mixed_11.jsonl",
    # A twelfth (2026-12-05), written as an adversarial tester of the gate: 100 and 100; held
    # out for one round, then tuned on.
    "mixed12": CORPORA / "dev" / "mixed_12.jsonl",
    # A thirteenth (2026-12-05), everyday facts about a person, some sentences long: 100 and
    # 100; held out for one round, then tuned on.
    "mixed13": CORPORA / "dev" / "mixed_13.jsonl",
    # A fourteenth (2026-12-05), half instructions to an assistant: 100 and 100; held out for
    # one round, then tuned on.
    "mixed14": CORPORA / "dev" / "mixed_14.jsonl",
    # A fifteenth (2026-12-05), what a person corrects about themselves: 100 and 100; held out
    # for one round, then tuned on.
    "mixed15": CORPORA / "dev" / "mixed_15.jsonl",
    # A sixteenth (2026-12-05), every part of speech: 100 and 100; held out for two rounds,
    # then tuned on.
    "mixed16": CORPORA / "dev" / "mixed_16.jsonl",
    # A seventeenth (2026-12-05), no two pairs of one kind: 100 and 100; held out for one round,
    # then tuned on.
    "mixed17": CORPORA / "dev" / "mixed_17.jsonl",
    # An eighteenth (2026-12-05), what an assistant learns over months: 100 and 100; held out
    # for one round, then tuned on.
    "mixed18": CORPORA / "dev" / "mixed_18.jsonl",
    # A nineteenth (2026-12-05), rules for acting on the user's behalf: 100 and 100; held out
    # for one round, then tuned on.
    "mixed19": CORPORA / "dev" / "mixed_19.jsonl",
    # A twentieth (2026-12-05): 100 and 100, no two pairs of one kind; held out for one round,
    # then tuned on.
    "mixed20": CORPORA / "dev" / "mixed_20.jsonl",
    # A twenty-first (2026-12-05), a household's year: 100 and 100; held out for one round,
    # then tuned on.
    "mixed21": CORPORA / "dev" / "mixed_21.jsonl",
    # A twenty-second (2026-12-06): 100 and 100, no more than two pairs of one kind; held out.
    "mixed22": CORPORA / "dev" / "mixed_22.jsonl",
    # A twenty-third (2026-12-06), a year of work, commute, health and money: 100 and 100; held
    # out, to be tuned on after set 22.
    "mixed23": CORPORA / "dev" / "mixed_23.jsonl",
    # A twenty-fourth (2026-12-06), by another helper from the product description alone, run as
    # found on dc7b6a9 (2 corrections rejected, 77 paraphrases caught), held out for two
    # rounds, then tuned on.
    "mixed24": CORPORA / "dev" / "mixed_24.jsonl",
    # A twenty-fifth (2026-12-06), by another helper from the product description alone; held
    # out while sets 23 and 24 were tuned on, then tuned on.
    "mixed25": CORPORA / "dev" / "mixed_25.jsonl",
    # A twenty-sixth (2026-12-06), by another helper from the product description alone, run as
    # found on c8bb14f (counts only) and held out.
    "mixed26": CORPORA / "dev" / "mixed_26.jsonl",
    # A twenty-seventh (2026-12-06), by another helper from the product description alone, run
    # as found on 996a3a4 (counts only) and held out.
    "mixed27": CORPORA / "dev" / "mixed_27.jsonl",
    # A twenty-eighth (2026-12-06), by another helper from the product description alone, run
    # as found on 55ed1a8 (counts only) and held out.
    "mixed28": CORPORA / "dev" / "mixed_28.jsonl",
    # Synonyms (2026-12-05): 70 synonym paraphrases, 15 negative restatements, 15 number
    # formats and 100 words swapped for related words that mean something else; tuned on.
    "synonyms1": CORPORA / "dev" / "synonyms_1.jsonl",
    "regression": CORPORA / "regression" / "gate_pairs.jsonl",
    "frozen": CORPORA / "frozen" / "gate_pairs.jsonl",
}
DUPLICATE, CONTRADICTION, COMPATIBLE, REFINEMENT, REVIEW = (
    "duplicate",
    "contradiction",
    "compatible",
    "refinement",
    "review",
)
# Labels other authors may use for the same expectations.
_ALIASES = {
    "dup": DUPLICATE,
    "paraphrase": DUPLICATE,
    "duplicate": DUPLICATE,
    "contradiction": CONTRADICTION,
    "contradicts": CONTRADICTION,
    "conflict": CONTRADICTION,
    "correction": CONTRADICTION,
    "value_change": CONTRADICTION,
    "compatible": COMPATIBLE,
    "unrelated": COMPATIBLE,
    "distinct": COMPATIBLE,
    "refinement": REFINEMENT,
    "review": REVIEW,
    "flag": REVIEW,
    "flagged": REVIEW,
}
# The targets, checked on the frozen set.
TARGETS = {
    "overall": 0.80,
    "duplicates_caught": 0.70,
    "contradictions_flagged": 0.80,
    "corrections_rejected": 0,
    "false_contradictions": 0.03,
}
NOW = datetime(2026, 6, 1, tzinfo=UTC)


class Case(msgspec.Struct, frozen=True):
    """One labelled pair: the belief in memory, the proposal, what the gate should do."""

    id: str
    phenomenon: str
    old: str
    new: str
    expect: str


class Outcome(msgspec.Struct, frozen=True):
    """What the gate did with one case."""

    case: Case
    got: str  # duplicate | contradiction | flagged | passed
    reasons: tuple[str, ...]

    @property
    def right(self) -> bool:
        """Whether the gate's answer is the one the case expects."""
        expect = self.case.expect
        if expect == DUPLICATE:
            return self.got == DUPLICATE
        if expect == CONTRADICTION:
            return self.got == CONTRADICTION
        if expect == REVIEW:
            return self.got in (CONTRADICTION, "flagged")
        # compatible and refinement: never rejected, never a contradiction.
        return self.got in ("passed", "flagged")


def halves(cases: Sequence[Case]) -> tuple[list[Case], list[Case]]:
    """The development set split in two by a stable hash of each case's id: rules are tuned on
    the first half and the second, held back, shows whether they generalise."""
    tune = [case for case in cases if zlib.crc32(case.id.encode()) % 2 == 0]
    held = [case for case in cases if zlib.crc32(case.id.encode()) % 2 == 1]
    return tune, held


def _field(row: dict, *names: str) -> str:
    for name in names:
        value = row.get(name)
        if isinstance(value, str) and value:
            return value
    raise ValueError(f"case has none of {names}: {sorted(row)}")


def load(path: Path) -> list[Case]:
    """Read a JSONL set; each row names old, new, expect (or aliases) and a phenomenon."""
    if not path.exists():
        return []
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        row = json.loads(line)
        expect = _field(row, "expect", "expected", "label", "relation").strip().lower()
        cases.append(
            Case(
                id=str(row.get("id", f"{path.stem}-{number}")),
                phenomenon=str(row.get("phenomenon") or row.get("category") or "other"),
                old=_field(row, "old", "existing", "belief", "a", "memory"),
                new=_field(row, "new", "proposal", "proposed", "b", "candidate"),
                expect=_ALIASES.get(expect, expect),
            )
        )
    return cases


def classify(gate_verdict: str, reasons: Sequence[str]) -> str:
    """The observable outcome: rejected, flagged as a contradiction, flagged, or passed."""
    if gate_verdict == "duplicate":
        return DUPLICATE
    if any(reason.startswith(("contradicts:", "contradicts_in_batch:")) for reason in reasons):
        return CONTRADICTION
    flags = [reason for reason in reasons if reason != "unsourced"]
    return "flagged" if flags else "passed"


def run(cases: Sequence[Case], embed: Callable[[list[str]], numpy.ndarray]) -> list[Outcome]:
    """Gate every case's proposal (an add) against its old belief held active in memory."""
    from credence.memory.semantics.gate import BeliefIndex, LiveBelief, Proposal, gate
    from credence.models.reasons import encode

    texts = sorted({case.old for case in cases} | {case.new for case in cases})
    vectors = dict(zip(texts, embed(texts), strict=True)) if texts else {}
    outcomes = []
    for case in cases:
        index = BeliefIndex.build(
            [LiveBelief("bel_old", case.old, "active", 0.8, NOW, NOW, vectors[case.old])]
        )
        proposal = Proposal(0, "add", case.new, 0.7, "eval", ("ep_1",))
        (result,) = gate([proposal], index, frozenset(), vectors[case.new][None, :])
        reasons = tuple(encode(r) for r in result.reasons)
        outcomes.append(Outcome(case, classify(result.gate, reasons), reasons))
    return outcomes


def _ratio(hits: int, total: int) -> float:
    return hits / total if total else float("nan")


def summary(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """The issue's figures: overall, duplicates caught, contradictions flagged, corrections
    rejected as duplicates (a count), false contradictions on compatible pairs."""
    dupes = [o for o in outcomes if o.case.expect == DUPLICATE]
    contra = [o for o in outcomes if o.case.expect == CONTRADICTION]
    compatible = [o for o in outcomes if o.case.expect == COMPATIBLE]
    corrections = [o for o in outcomes if o.case.expect in (CONTRADICTION, REFINEMENT, REVIEW)]
    return {
        "overall": _ratio(sum(o.right for o in outcomes), len(outcomes)),
        "duplicates_caught": _ratio(sum(o.got == DUPLICATE for o in dupes), len(dupes)),
        "contradictions_flagged": _ratio(sum(o.got == CONTRADICTION for o in contra), len(contra)),
        "corrections_rejected": sum(o.got == DUPLICATE for o in corrections),
        "false_contradictions": _ratio(
            sum(o.got == CONTRADICTION for o in compatible), len(compatible)
        ),
        "cases": len(outcomes),
    }


# A phenomenon needs this many pairs for its own figure; rarer ones are counted together (a
# set written with at most two pairs per phenomenon has no ratio worth a line per label).
MIN_PHENOMENON_PAIRS = 3
RARE_PHENOMENA = "(phenomena of one or two pairs)"


def per_phenomenon(outcomes: Sequence[Outcome]) -> dict[str, tuple[int, int]]:
    """(right, total) per phenomenon of at least ``MIN_PHENOMENON_PAIRS`` pairs, the rarer
    ones summed under ``RARE_PHENOMENA``."""
    table: dict[str, tuple[int, int]] = {}
    for outcome in outcomes:
        right, total = table.get(outcome.case.phenomenon, (0, 0))
        table[outcome.case.phenomenon] = (right + outcome.right, total + 1)
    found: dict[str, tuple[int, int]] = {}
    for phenomenon, (right, total) in sorted(table.items()):
        if total < MIN_PHENOMENON_PAIRS:
            phenomenon = RARE_PHENOMENA
        seen_right, seen_total = found.get(phenomenon, (0, 0))
        found[phenomenon] = (seen_right + right, seen_total + total)
    return found


def report(name: str, outcomes: Sequence[Outcome]) -> str:
    """A printable report: the issue's figures beside their targets, then each phenomenon."""
    figures = summary(outcomes)
    lines = [f"{name}: {figures['cases']} pairs"]
    for key, target in TARGETS.items():
        value = figures[key]
        shown = f"{value:d}" if isinstance(value, int) else f"{value:.3f}"
        lines.append(f"  {key:<24} {shown:>7}   target {target}")
    for phenomenon, (right, total) in per_phenomenon(outcomes).items():
        lines.append(f"  - {phenomenon:<30} {right:>3}/{total:<3}")
    return "\n".join(lines)
