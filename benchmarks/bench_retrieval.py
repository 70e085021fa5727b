"""Benchmark: retrieval and recall quality on the development and frozen sets, model costs.

Notes: the share of tasks whose answer is among the notes a context block serves (10), for
cosine alone, BM25 alone and the fusion the service uses. Recall: the share of evidence turns
among the top 10 of ``POST …/memory/search`` for BM25 alone, cosine alone and the fusion.
Development figures are what the weights were tuned on (tuning split: even tasks); the frozen
set (harness/corpora/frozen, written by an outsider) is measured, never tuned on. Also: one
belief's embedding time and the memory a replica holds per 100k beliefs.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from harness import eval_sets, recall_eval, retrieval_eval

from benchmarks.figures import figure
from credence.db.store import Store
from credence.memory.read.context import CacheEntry, rank_notes
from credence.memory.semantics.model import MINILM_DIM, MiniLMEmbedder

ANSWER_TARGET = 0.8
RECALL_TARGET = 0.6
EMBED_ONE_TARGET_MS = 5.0
BELIEFS_100K = 100_000
MEASURED_NOTES = 20_000


def _notes(embedder: MiniLMEmbedder) -> list[dict]:
    rows = []
    for name, scoped in (
        ("dev_paraphrase", eval_sets.dev_paraphrase()),
        ("dev_templates", eval_sets.dev_templates()),
        ("frozen", eval_sets.frozen_retrieval()),
    ):
        prepared = retrieval_eval.prepare(scoped, embedder.embed_sync)
        for mode in ("dense", "keyword", "fused"):
            share = retrieval_eval.answer_served(prepared, mode)
            rows.append(
                figure(
                    f"notes_answer_served_{name}_{mode}",
                    [share],
                    ANSWER_TARGET,
                    unit="ratio",
                    better="higher",
                )
            )
        if name == "dev_paraphrase":
            held = retrieval_eval.answer_served(prepared, "fused", split="held")
            rows.append(
                figure(
                    "notes_answer_served_dev_paraphrase_fused_held",
                    [held],
                    ANSWER_TARGET,
                    unit="ratio",
                    better="higher",
                )
            )
    return rows


async def _recall(embedder: MiniLMEmbedder) -> list[dict]:
    rows = []
    for name, (turns, questions) in (
        ("dev", eval_sets.dev_conversations()),
        ("frozen", eval_sets.frozen_conversations()),
    ):
        with tempfile.TemporaryDirectory() as directory:
            store = Store(Path(directory) / "recall.sqlite3")
            await store.open()
            try:
                by_episode = await recall_eval.seed(store, embedder, turns)
                for mode in ("keyword", "dense", "fused"):
                    found = await recall_eval.evidence_recall(
                        store, embedder, by_episode, questions, mode
                    )
                    rows.append(
                        figure(
                            f"recall_evidence_at_10_{name}_{mode}",
                            [found["all"]],
                            RECALL_TARGET,
                            unit="ratio",
                            better="higher",
                        )
                    )
            finally:
                await store.close()
    return rows


def _embed_one(embedder: MiniLMEmbedder) -> list[dict]:
    """One belief's embedding: wall time, and the CPU time of the embedding thread (the model
    runs on the calling thread), which a machine shared with other work does not inflate."""
    texts = [b for _, b, _ in eval_sets.dev_paraphrase()[0][0]][:300]
    embedder.embed_sync(texts[:4])
    wall, cpu = [], []
    for text in texts:
        started, started_cpu = time.perf_counter(), time.thread_time()
        embedder.embed_sync([text])
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - started_cpu) * 1000)
    return [
        figure("embed_one_belief_minilm", wall, EMBED_ONE_TARGET_MS),
        figure("embed_one_belief_minilm_cpu", cpu, EMBED_ONE_TARGET_MS),
    ]


def _memory_100k() -> dict:
    """KB a replica's context cache holds for 100k servable beliefs of one agent, measured.

    tracemalloc over a real cache entry of MEASURED_NOTES beliefs (dev-set texts, numbered so
    none repeats) after its first query: the notes, the (384, n) embedding matrix and the
    cosine index's per-note terms; scaled to 100k. BM25 is not held (its weight is 0; it is
    built only while the embedder is down). The gate's own per-agent cache is not included.
    """
    texts = [b for _, b, _ in eval_sets.dev_paraphrase()[0][0]]
    stamp = "2026-01-01T00:00:00.000000Z"
    rows = [
        {
            "id": f"b_{i:026d}",
            "content": f"{texts[i % len(texts)]} (note {i})",
            "confidence": 0.8,
            "provenance": "clean",
            "created_at": stamp,
            "updated_at": stamp,
        }
        for i in range(MEASURED_NOTES)
    ]
    blobs = np.random.default_rng(1).standard_normal((MEASURED_NOTES, MINILM_DIM), np.float32)
    blobs /= np.linalg.norm(blobs, axis=1, keepdims=True)
    embedding_rows = [
        (row["id"], blob.astype("<f4").tobytes()) for row, blob in zip(rows, blobs, strict=True)
    ]
    del blobs
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    entry = CacheEntry(0, 0.02, rank_notes(rows, 0.02))
    entry.keep_columns(embedding_rows, MINILM_DIM)
    index = entry.dense(MINILM_DIM)
    assert index is not None
    index.scores(np.ones(MINILM_DIM, np.float32) / np.sqrt(MINILM_DIM))
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    # The rows' own strings are shared with the entry: count the texts the entry keeps.
    held += sum(len(row["content"]) + len(row["id"]) + 98 for row in rows)
    return figure(
        "memory_per_replica_100k_beliefs",
        [held / MEASURED_NOTES * BELIEFS_100K / 1024],
        512_000.0,
        unit="KB",
    )


def measure() -> list[dict]:
    """Quality on every set, then one embedding's time and the memory for 100k beliefs."""
    embedder = MiniLMEmbedder()
    embedder.load()
    rows = _notes(embedder)
    rows += asyncio.run(_recall(embedder))
    rows += _embed_one(embedder)
    rows.append(_memory_100k())
    return rows


if __name__ == "__main__":
    for row in measure():
        print(
            f"{row['name']:<52} {row['median']:>10.3f} {row['unit']:<6}"
            f" target {row['target']} ({row['better']} is better)"
        )
