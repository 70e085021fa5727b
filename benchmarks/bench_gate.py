"""Benchmark: gating 10 proposals against 10,000 live beliefs, building the index, the gate's
precision and recall on the labelled corpus, and the issue's figures per phenomenon on the two
development sets (each in its tune and held-back halves), the regression and the frozen pair
sets, all with the bundled sentence model (all-MiniLM-L6-v2)."""

from __future__ import annotations

import math
import random
import time
from datetime import UTC, datetime, timedelta
from itertools import accumulate

import numpy
from harness.gate_corpus import (
    CATEGORIES,
    EXACT_DUPLICATE,
    NEGATION_CONTRADICTION,
    PARAPHRASE_DUPLICATE,
    VALUE_CHANGE,
    run_corpus,
    scores,
)
from harness.gate_eval import (
    RARE_PHENOMENA,
    SETS,
    TARGETS,
    halves,
    load,
    per_phenomenon,
    report,
    run,
    summary,
)

from benchmarks.figures import figure
from credence.memory.semantics.gate import BeliefIndex, LiveBelief, Proposal, gate
from credence.memory.semantics.model import MINILM_DIM, MiniLMEmbedder

BELIEFS = 10_000
PROPOSALS = 10
DIMENSION = MINILM_DIM
SEED = 20261201


def _words(text: str) -> list[str]:
    return text.split()


_VERBS = _words(
    """retry cache log deploy upload summarise cite compress validate rotate index archive
    review restart pin batch split stream encrypt escape quote translate format sort merge
    rebase lint test profile mock measure benchmark paginate throttle schedule notify"""
)
_NOUNS = _words(
    """pdf upload request response header token session cookie query index table migration
    backup release branch commit ticket invoice report chart email attachment image thumbnail
    transcript summary answer reply citation source timestamp timezone currency unit locale
    secret password key certificate endpoint webhook queue worker job cron retry timeout limit
    quota budget customer user reviewer agent model prompt context file folder bucket log
    metric alert dashboard incident runbook deadline estimate meeting calendar invite"""
)
_QUALIFIERS = _words(
    """large small slow fast nightly weekly remote local production staging legacy new
    failed partial duplicate stale encrypted public private shared external internal manual
    automatic urgent optional"""
)
_TAILS = [
    "before the weekly release",
    "for the finance team",
    "when the network is slow",
    "in production",
    "over 10MB",
    "after a failed deploy",
    "during business hours",
    "for external customers",
    "unless the reviewer asks",
    "on Fridays",
]
_ZIPF: dict[int, list[float]] = {}
_NEGATIONS = ["Never", "Don't", "Do not", "Stop trying to", "Avoid trying to", "No longer"]


def _zipf_choice(rng: random.Random, words: list[str]) -> str:
    # Zipf's law (weight 1/rank): a few words appear in thousands of beliefs, most in a few.
    weights = _ZIPF.setdefault(len(words), list(accumulate(1.0 / rank for rank in range(1, 999))))
    return rng.choices(words, cum_weights=weights[: len(words)])[0]


def _sentence(rng: random.Random) -> str:
    verb = _zipf_choice(rng, _VERBS)
    nouns = " and ".join(_zipf_choice(rng, _NOUNS) + "s" for _ in range(rng.randint(1, 2)))
    qualifier = _zipf_choice(rng, _QUALIFIERS)
    text = f"{verb} {qualifier} {nouns} {rng.choice(_TAILS)}"
    if rng.random() < 0.3:
        text = f"{rng.choice(_NEGATIONS)} {text}"
    return text[0].upper() + text[1:] + "."


def _negated(text: str) -> str:
    for negation in _NEGATIONS:
        if text.startswith(negation + " "):
            rest = text[len(negation) + 1 :]
            return rest[0].upper() + rest[1:]
    return "Never " + text[0].lower() + text[1:]


def _embed(text: str, word_vectors: dict[str, numpy.ndarray]) -> numpy.ndarray:
    """A bag-of-words embedding: sentences that share words point the same way, like real ones."""
    vector = numpy.zeros(DIMENSION, dtype=numpy.float32)
    for word in text.lower().replace(".", "").split():
        if word not in word_vectors:
            seed = sum(word.encode()) * 7919 + len(word)
            word_vectors[word] = numpy.random.default_rng(seed).standard_normal(DIMENSION)
        vector += word_vectors[word]
    return vector / numpy.linalg.norm(vector)


def _corpus(with_embeddings: bool) -> tuple[list[LiveBelief], list[Proposal], numpy.ndarray]:
    rng = random.Random(SEED)
    word_vectors: dict[str, numpy.ndarray] = {}
    start = datetime(2026, 1, 1, tzinfo=UTC)
    beliefs = []
    for number in range(BELIEFS):
        content = _sentence(rng)
        created = start + timedelta(minutes=number)
        beliefs.append(
            LiveBelief(
                id=f"bel_{number:026d}",
                content=content,
                status=rng.choices(["active", "pending", "forgotten"], [6, 2, 2])[0],
                confidence=rng.uniform(0.5, 0.95),
                created_at=created,
                updated_at=created,
                embedding=_embed(content, word_vectors) if with_embeddings else None,
            )
        )
    texts = []
    for number in range(PROPOSALS):
        if number % 3 == 0:  # a near-copy of an existing belief, often a duplicate
            texts.append(beliefs[rng.randrange(BELIEFS)].content.upper())
        elif number % 3 == 1:  # the negation-counterpart of an existing belief
            texts.append(_negated(beliefs[rng.randrange(BELIEFS)].content))
        else:
            texts.append(_sentence(rng))
    proposals = [
        Proposal(
            index=number,
            op="add" if number % 4 else "strengthen",
            belief=text,
            confidence=0.75,
            rationale="bench",
            source_episodes=(f"ep_{number}",),
            target_belief_id=beliefs[number].id if number % 4 == 0 else None,
        )
        for number, text in enumerate(texts)
    ]
    vectors = numpy.stack([_embed(text, word_vectors) for text in texts])
    return beliefs, proposals, vectors


def _timed(action, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        action()
        samples.append((time.perf_counter() - began) * 1000.0)
    return samples


# The floors; compatible/unrelated recall is 1 − the false-contradiction rate (≤ 2%).
RECALL_TARGETS = {
    EXACT_DUPLICATE: 1.0,
    PARAPHRASE_DUPLICATE: 0.8,
    NEGATION_CONTRADICTION: 0.9,
    VALUE_CHANGE: 0.8,
}


def corpus_figures() -> list[dict]:
    """Precision and recall per corpus category through the real gate and bundled embedder."""
    table = scores(run_corpus(MiniLMEmbedder().embed_sync))
    figures = []
    for category in CATEGORIES:
        row = table[category]
        for measure_name in ("precision", "recall"):
            target = RECALL_TARGETS.get(category, 0.98) if measure_name == "recall" else 0.9
            figures.append(
                figure(
                    f"gate_corpus_{category}_{measure_name}",
                    [row[measure_name]],
                    target,
                    unit="ratio",
                    better="higher",
                )
            )
    return figures


# Per phenomenon: what the gate should do decides the floor it is held to.
_PHENOMENON_TARGET = {"duplicate": 0.7, "contradiction": 0.8, "compatible": 0.97}


def set_figures() -> list[dict]:
    """The issue's figures and per-phenomenon accuracy on each pair set, printed as a report."""
    embed = MiniLMEmbedder().embed_sync
    figures = []
    named: dict[str, list] = {}
    for development in ("dev", "dev2"):
        tune, held = halves(load(SETS[development]))
        named |= {f"{development}_tune": tune, f"{development}_held": held}
    named |= {name: load(path) for name, path in SETS.items() if name not in ("dev", "dev2")}
    for name, cases in named.items():
        if not cases:
            print(f"{name}: no cases")
            continue
        outcomes = run(cases, embed)
        print(report(name, outcomes))
        totals = summary(outcomes)
        for key, target in TARGETS.items():
            value = float(totals[key])
            if math.isnan(value):
                continue  # a set of corrections only has no duplicates to catch
            if key == "corrections_rejected":
                figures.append(_ratio(f"gate_{name}_{key}", value, float(target), "lower"))
            else:
                better = "lower" if key == "false_contradictions" else "higher"
                figures.append(_ratio(f"gate_{name}_{key}", value, float(target), better))
        expected = {case.phenomenon: case.expect for case in cases}
        for phenomenon, (right, total) in per_phenomenon(outcomes).items():
            if phenomenon == RARE_PHENOMENA:
                continue  # of mixed expectations: no one floor to hold them to
            target = _PHENOMENON_TARGET.get(expected[phenomenon], 0.8)
            figures.append(_ratio(f"gate_{name}_{phenomenon}", right / total, target, "higher"))
    return figures


def _ratio(name: str, value: float, target: float, better: str) -> dict:
    return figure(name, [value], target, unit="ratio", better=better)


def measure() -> list[dict]:
    """Return build and gate timings, lexical only and with 384-d embeddings, the corpus
    precision and recall per category, and the pair sets' figures per phenomenon."""
    figures = corpus_figures() + set_figures()
    for with_embeddings in (False, True):
        suffix = "_embeddings" if with_embeddings else ""
        beliefs, proposals, vectors = _corpus(with_embeddings)
        build = _timed(lambda beliefs=beliefs: BeliefIndex.build(beliefs), runs=11)
        index = BeliefIndex.build(beliefs)
        embeddings = vectors if with_embeddings else None
        untrusted = frozenset({"ep_3"})
        gate(proposals, index, untrusted, embeddings)  # warm caches once
        run = _timed(
            lambda p=proposals, i=index, u=untrusted, e=embeddings: gate(p, i, u, e), runs=101
        )
        figures.append(figure(f"gate_index_build_10k{suffix}", build, 200.0))
        figures.append(figure(f"gate_10_proposals_vs_10k{suffix}", run, 20.0))
    return figures


if __name__ == "__main__":
    for row in measure():
        print(
            f"{row['name']:<48} median {row['median']:8.3f} {row['unit']}"
            f"  p10 {row['p10']:8.3f}  p90 {row['p90']:8.3f}"
            f"  target {row['target']} ({row['runs']} runs)"
        )
