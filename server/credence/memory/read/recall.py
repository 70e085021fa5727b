"""Recall search over an agent's episodes: full-text rank and embedding cosine, weighted RRF."""

from __future__ import annotations

import asyncio
import logging
import re
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from credence.db import episodes as db_episodes
from credence.db import recall as db_recall
from credence.db.episodes import EpisodeFilter, EpisodeRecord
from credence.embed import EmbeddingUnavailable
from credence.memory.semantics.statement_words import MONTHS, WEEKDAYS
from credence.memory.semantics.tokens import NEGATION_WORDS, STOP_WORDS
from credence.models import RelevantEpisode

if TYPE_CHECKING:
    from credence.db.engine import Database
    from credence.embed import Embedder

log = logging.getLogger("credence.context")

# (agent id, query, limit, include_untrusted, the query's embedding or None, the agent's
# episode state as last read or None) -> episodes
EpisodeSearch = Callable[
    [str, str, int, bool, np.ndarray | None, int | None], Awaitable[list[RelevantEpisode]]
]

# Reciprocal rank fusion: score = Σ w / (RRF_K + rank) over every (query, ranking) list, w
# from fusion_weights. Tuned on the even questions of harness/conversation_set.py and checked
# on the odd ones (benchmarks/bench_retrieval.py): the textbook k=60 lets an episode that
# both rankings place near rank 40 (a filler turn sharing a name) beat the one that one
# ranking puts first; k=3 keeps first places decisive (evidence recall@10: 56% -> 64%).
RRF_K = 3
TEXT_WEIGHT = 0.6
LEXICAL_WEIGHT = 2.0
MAX_QUERIES = 20
MAX_K = 200
MAX_TERMS = 64
# Each ranking contributes this many candidates per query before fusion.
MIN_DEPTH = 50
MAX_DEPTH = 400
_FAST_PATH_FACTOR = 4
_ROWID_LIST_MAX = 20_000
_THREADED_SCORING = 20_000

# The cosine (sentence model) below which a recalled episode is not shown in a context block:
# unrelated sentences score about -0.1 to 0.1 under all-MiniLM-L6-v2, close paraphrases 0.4+.
EPISODE_FLOOR = 0.2

_TERM = re.compile(r"[^\W_]+", re.UNICODE)
_BLOB_DTYPE = np.dtype("<f4")


class RecallUnavailable(RuntimeError):
    """Recall search cannot run (embedder down, full-text index unusable)."""


@dataclass(frozen=True)
class Hit:
    """One recalled episode: its row, the fused score, and where each ranking placed it."""

    episode: EpisodeRecord
    score: float
    text_rank: int | None
    vector_rank: int | None
    cosine: float | None


_MONTH_ABBREVIATIONS = frozenset(
    ["jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"]
)
# "weekday" and "weekend" name no date a word index would pin down better than the model.
_DATE_WORDS = MONTHS | _MONTH_ABBREVIATIONS | (WEEKDAYS - {"weekday", "weekend"})


def fusion_weights(query: str) -> tuple[float, float]:
    """(full-text weight, cosine weight) of the query's rankings in the fusion.

    Names, dates, numbers and other exact tokens are what a word index finds and a sentence
    model blurs; a paraphrase is the reverse. The full-text ranking weighs more the larger the
    share of the query's content words that are such tokens (a capitalised word past the
    first, a number, a month or weekday).
    """
    words = _TERM.findall(query)
    content = [w for w in words if w.casefold() not in STOP_WORDS]
    if not content:
        return TEXT_WEIGHT, 1.0
    lexical = sum(
        1
        for i, word in enumerate(words)
        if word.casefold() not in STOP_WORDS
        and (
            (i > 0 and word[:1].isupper())
            or any(c.isdigit() for c in word)
            or word.casefold() in _DATE_WORDS
        )
    )
    return TEXT_WEIGHT + LEXICAL_WEIGHT * lexical / len(content), 1.0


def query_terms(query: str) -> list[str]:
    """The distinct search terms of free text (letters and digits only), stop words left out.

    Stop words match most episodes and only cost time, so they are searched only when nothing
    else is left. Nothing else of the text reaches the index, so its syntax is inert.
    """
    terms = list(dict.fromkeys(t.casefold() for t in _TERM.findall(query)))
    content = [t for t in terms if t not in STOP_WORDS and t not in NEGATION_WORDS]
    return (content or terms)[:MAX_TERMS]


def fts_expression(query: str) -> str | None:
    """Turn free text into a safe FTS5 MATCH expression (terms OR-ed), or None without terms."""
    chosen = query_terms(query)
    return _quoted(chosen) if chosen else None


def _quoted(terms: Sequence[str]) -> str:
    # Quoted, every FTS5 operator in a term is inert (terms hold letters and digits anyway).
    return " OR ".join(f'"{term}"' for term in terms)


class _AgentMatrix:
    """An agent's episode embeddings plus the filter columns, grown as episodes arrive.

    Embeddings are stored transposed, (dim, capacity), with spare capacity: a query then
    reads the matrix as one contiguous BLAS operand, and an append rarely reallocates.
    """

    __slots__ = (
        "_buffer",
        "count",
        "deletions",
        "finished",
        "max_seq",
        "reflected",
        "seqs",
        "synced",
        "untrusted",
    )

    def __init__(self, dim: int) -> None:
        self.max_seq = 0
        # The episode state (agent_settings_and_changes) this matrix was last brought up to.
        self.synced: int | None = None
        self.deletions = -1
        self.count = 0
        self._buffer = np.zeros((dim, 0), dtype=np.float32)
        self.seqs = np.zeros(0, dtype=np.int64)
        self.finished = np.zeros(0, dtype="U40")
        self.untrusted = np.zeros(0, dtype=bool)
        self.reflected = np.zeros(0, dtype=bool)

    @property
    def columns(self) -> np.ndarray:
        """The embeddings as a (dim, count) view, one column per episode in seq order."""
        return self._buffer[:, : self.count]

    def append_columns(self, block: np.ndarray) -> None:
        """Append (n, dim) rows as columns, growing the buffer by half when it is full."""
        needed = self.count + block.shape[0]
        if needed > self._buffer.shape[1]:
            grown = np.zeros((self._buffer.shape[0], max(needed, self.count * 3 // 2)), np.float32)
            grown[:, : self.count] = self.columns
            self._buffer = grown
        self._buffer[:, self.count : needed] = block.T
        self.count = needed


# store -> {(agent_id, embedder name, dim): (_AgentMatrix, reflections counter)}
_CACHE: weakref.WeakKeyDictionary[Any, dict[tuple[str, str, int], list[Any]]] = (
    weakref.WeakKeyDictionary()
)


def forget_cache(store: Database | None = None) -> None:
    """Drop cached matrices (of one store, or all); the next search reloads from the database."""
    if store is None:
        _CACHE.clear()
    else:
        _CACHE.pop(store, None)


async def agent_matrix(
    store: Database, embedder: Embedder, agent_id: str, state: int | None = None
) -> _AgentMatrix:
    """The agent's cached embedding matrix, brought up to date with a few cheap reads.

    New episodes (seq above the cached maximum) are appended; a moved watermark reloads only
    the reflected flags (via the partial index of un-reflected episodes); a deletion reloads
    everything. Rows whose blob does not fit the embedder's dimension stay zero (no cosine).
    The counters are read on every call, so changes made by other processes (replicas on one
    PostgreSQL) are seen by the next search — unless the caller passes the agent's episode
    state it has just read (the context does, with the agent row) and the matrix was brought
    up to that same state: then nothing is read.
    """
    dim = int(embedder.dim)
    key = (agent_id, embedder.name, dim)
    per_store = _CACHE.setdefault(store, {})
    entry = per_store.get(key)
    if state is not None and entry is not None and entry[0].synced == state:
        return entry[0]
    # One statement, one trip to the database: every search with a query starts here.
    max_seq, reflections, deletions = await store.read(
        lambda conn: db_recall.counters(conn, agent_id)
    )
    if entry is None or entry[0].deletions != deletions:
        entry = [_AgentMatrix(dim), -1]
        entry[0].deletions = deletions
        per_store[key] = entry
    cached: _AgentMatrix = entry[0]
    if entry[1] != reflections and cached.count:
        # Before appending: rows read after this are at least as fresh as their own flags.
        unreflected = await store.read(lambda conn: db_recall.unreflected_seqs(conn, agent_id))
        open_seqs = np.fromiter(unreflected, dtype=np.int64, count=len(unreflected))
        cached.reflected = ~np.isin(cached.seqs, open_seqs)
    if max_seq > cached.max_seq:
        after = cached.max_seq
        rows = await store.read(lambda conn: db_recall.matrix_rows(conn, agent_id, after, max_seq))
        # Another search may have appended the same range while this one waited for it.
        _append(cached, [row for row in rows if row["seq"] > cached.max_seq], dim)
        cached.max_seq = max(cached.max_seq, max_seq)
    entry[1] = reflections
    # The counters were read after ``state``: the matrix is at least that fresh.
    cached.synced = state
    return cached


def _append(cached: _AgentMatrix, rows: list[Any], dim: int) -> None:
    if not rows:
        return
    width = dim * _BLOB_DTYPE.itemsize
    block = np.zeros((len(rows), dim), dtype=np.float32)
    good = [i for i, row in enumerate(rows) if row["embedding"] and len(row["embedding"]) == width]
    if good:
        joined = b"".join(rows[i]["embedding"] for i in good)
        block[good] = np.frombuffer(joined, dtype=_BLOB_DTYPE).reshape(len(good), dim)
    cached.append_columns(block)
    cached.seqs = np.concatenate([cached.seqs, np.fromiter((r["seq"] for r in rows), np.int64)])
    cached.finished = np.concatenate(
        [cached.finished, np.array([r["finished_at"] for r in rows], dtype="U40")]
    )
    cached.untrusted = np.concatenate(
        [cached.untrusted, np.array([r["origin"] != "clean" for r in rows], dtype=bool)]
    )
    cached.reflected = np.concatenate(
        [cached.reflected, np.array([bool(r["reflected"]) for r in rows], dtype=bool)]
    )


def _allowed(
    cached: _AgentMatrix, since: str | None, reflected: bool | None, include_untrusted: bool
) -> np.ndarray:
    mask = np.ones(cached.seqs.shape[0], dtype=bool)
    if since is not None:
        mask &= cached.finished >= since
    if reflected is not None:
        mask &= cached.reflected if reflected else ~cached.reflected
    if not include_untrusted:
        mask &= ~cached.untrusted
    return mask


async def _text_ranking(
    store: Database,
    agent_id: str,
    terms: list[str],
    depth: int,
    cached: _AgentMatrix,
    allowed: np.ndarray,
    found: EpisodeFilter,
) -> list[int]:
    """The seqs of the best full-text matches among the allowed episodes, best first."""
    max_seq = cached.max_seq
    if store.dialect == "postgresql":
        # The GIN index answers the agent's filtered matches directly.
        return await store.read(
            lambda conn: db_recall.tsvector_ranking(conn, terms, agent_id, found, max_seq, depth)
        )
    expression = _quoted(terms)
    # Fast path: FTS5's own top-N sort over the whole index, filtered by the cached masks,
    # never touching the (large) episode rows. It is exact whenever enough survivors remain.
    limit = depth * _FAST_PATH_FACTOR
    top = await store.read(lambda conn: db_recall.fts_top(conn, expression, limit))
    seqs = np.fromiter(top, dtype=np.int64, count=len(top))
    positions = np.searchsorted(cached.seqs, seqs)
    inside = positions < cached.seqs.size
    keep = np.zeros(seqs.size, dtype=bool)
    keep[inside] = cached.seqs[positions[inside]] == seqs[inside]
    keep[keep] = allowed[positions[keep]]
    survivors = seqs[keep][:depth]
    if survivors.size >= depth or len(top) < limit:
        return [int(seq) for seq in survivors]
    # Other agents' episodes or filtered ones crowd the top of the index: rank within the
    # agent's allowed episodes in SQL instead. A modest allowed set (un-reflected episodes,
    # say) is passed as rowids, which spares reading every matching episode row.
    allowed_seqs = cached.seqs[allowed]
    if allowed_seqs.size <= _ROWID_LIST_MAX:
        listed = allowed_seqs.tolist()
        return await store.read(lambda conn: db_recall.fts_within(conn, expression, listed, depth))
    return await store.read(
        lambda conn: db_recall.fts_filtered(conn, expression, agent_id, found, max_seq, depth)
    )


def vector_rankings(
    columns: np.ndarray, allowed: np.ndarray, query_vectors: np.ndarray, depth: int
) -> list[list[tuple[int, float]]]:
    """Per query, the (position, cosine) of the most similar allowed columns, best first.

    Columns are episodes here, an agent's notes on the read path.
    """
    if columns.shape[1] == 0 or query_vectors.shape[1] != columns.shape[0]:
        return []
    positions = np.flatnonzero(allowed)
    take = min(depth, positions.size)
    if take == 0:
        return [[] for _ in range(query_vectors.shape[0])]
    if positions.size * 4 < allowed.size:
        # Few allowed episodes (the un-reflected ones, say): score only their columns.
        scores = query_vectors @ columns[:, positions]
    else:
        # One product over the whole matrix: cheaper than copying most columns out of it.
        scores = (query_vectors @ columns)[:, positions]
    rankings = []
    for row in scores:
        top = np.argpartition(-row, take - 1)[:take]
        top = top[np.argsort(-row[top], kind="stable")]
        # Rows without an embedding (zero vectors) carry no similarity evidence.
        rankings.append([(int(positions[p]), float(row[p])) for p in top if row[p] > 0.0])
    return rankings


async def search(
    store: Database,
    embedder: Embedder,
    agent_id: str,
    queries: Sequence[str],
    k: int,
    *,
    since: str | None = None,
    reflected: bool | None = None,
    include_untrusted: bool = True,
    query_vectors: np.ndarray | None = None,
    weights: tuple[float, float] | None = None,
) -> list[Hit]:
    """Rank the agent's episodes for ``queries``; best first, at most ``k``.

    Two kinds of ranking are fused by weighted reciprocal rank fusion (score = Σ w/(RRF_K + rank),
    the weights from ``fusion_weights`` unless ``weights`` gives (full-text, cosine)): one
    full-text ranking (FTS5 BM25 on SQLite, ts_rank over the GIN-indexed tsvector on
    PostgreSQL) over summary and intervention text for the terms of all queries at once (so
    twenty queries cost one index pass), and one cosine ranking per query between its
    embedding and each episode's. With no non-blank query, the newest matching episodes
    come back (score 0). ``since`` is an RFC 3339 time in the store's format (episodes
    finished at or after it), ``reflected`` filters on the watermark, and
    ``include_untrusted=False`` leaves out episodes third-party content reached;
    ``query_vectors`` (one row per non-blank query) spares embedding queries the caller already
    embedded. Raises RecallUnavailable when the embedder or the full-text index fails.
    """
    if not 1 <= k <= MAX_K:
        raise ValueError(f"k must be 1..{MAX_K}")
    texts = [q for q in queries if q.strip()][:MAX_QUERIES]
    if not texts:
        newest = await store.read(
            lambda conn: db_episodes.newest_episodes(
                conn, agent_id, EpisodeFilter(since, reflected, include_untrusted), k
            )
        )
        return [Hit(row, 0.0, None, None, None) for row in newest]
    if query_vectors is None or query_vectors.shape[0] != len(texts):
        try:
            query_vectors = np.asarray(await embedder.embed(texts), dtype=np.float32)
        except EmbeddingUnavailable as exc:
            raise RecallUnavailable(f"embedder unavailable: {exc}") from exc
    depth = min(MAX_DEPTH, max(MIN_DEPTH, 2 * k))
    text_weight, vector_weight = weights or fusion_weights(" ".join(texts))
    fused: dict[int, float] = {}
    text_rank: dict[int, int] = {}
    vector_rank: dict[int, int] = {}
    best_cosine: dict[int, float] = {}
    found = EpisodeFilter(since, reflected, include_untrusted)
    try:
        cached = await agent_matrix(store, embedder, agent_id)
    except db_recall.SearchFailed as exc:
        raise RecallUnavailable(f"episode index unavailable: {exc}") from exc
    # Snapshots: another search may grow the cache while this one ranks.
    columns, seqs = cached.columns, cached.seqs
    allowed = _allowed(cached, since, reflected, include_untrusted)
    # A large matrix is scored on a worker thread while the database ranks the text.
    vectors_later = (
        asyncio.create_task(
            asyncio.to_thread(vector_rankings, columns, allowed, query_vectors, depth)
        )
        if columns.shape[1] >= _THREADED_SCORING
        else None
    )
    try:
        terms = query_terms(" ".join(texts))
        if terms:
            ranked = await _text_ranking(store, agent_id, terms, depth, cached, allowed, found)
            for rank, seq in enumerate(ranked, start=1):
                fused[seq] = text_weight / (RRF_K + rank)
                text_rank[seq] = rank
    except db_recall.SearchFailed as exc:
        raise RecallUnavailable(f"full-text search failed: {exc}") from exc
    finally:
        rankings = (
            await vectors_later
            if vectors_later is not None
            else vector_rankings(columns, allowed, query_vectors, depth)
        )
    for ranking in rankings:
        for rank, (position, cosine) in enumerate(ranking, start=1):
            seq = int(seqs[position])
            fused[seq] = fused.get(seq, 0.0) + vector_weight / (RRF_K + rank)
            vector_rank[seq] = min(vector_rank.get(seq, rank), rank)
            best_cosine[seq] = max(best_cosine.get(seq, -1.0), cosine)
    ordered = sorted(fused.items(), key=lambda item: (-item[1], -item[0]))[:k]
    chosen = [seq for seq, _ in ordered]
    rows = await store.read(lambda conn: db_episodes.episodes_by_seq(conn, chosen))
    return [
        Hit(
            episode=rows[seq],
            score=score,
            text_rank=text_rank.get(seq),
            vector_rank=vector_rank.get(seq),
            cosine=best_cosine.get(seq),
        )
        for seq, score in ordered
        if seq in rows
    ]


def _corrections(row: EpisodeRecord) -> list[str]:
    return [
        item["text"] for item in row.interventions if isinstance(item, dict) and item.get("text")
    ]


def recall_episode_search(store: Database, embedder: Embedder) -> EpisodeSearch:
    """The context's episode search: cosine over the agent's cached episode matrix.

    A context block shows only episodes related by meaning (cosine ≥ EPISODE_FLOOR), so the
    block's episodes are ranked by cosine alone, in memory: no full-text scan per request
    (``POST …/memory/search`` keeps the fused ranking). Given the episode state the caller
    read with the agent, an unchanged matrix costs no read, and only the chosen episodes' rows
    are fetched. When the embedder is down (no query vector) or the matrix cannot be read, the
    context still serves its reviewed notes and no episodes, and says so in the log.
    """

    async def episodes(
        agent_id: str,
        query: str,
        limit: int,
        include_untrusted: bool,
        vectors: np.ndarray | None = None,
        state: int | None = None,
    ) -> list[RelevantEpisode]:
        if vectors is None or not query.strip():
            return []
        try:
            cached = await agent_matrix(store, embedder, agent_id, state)
        except db_recall.SearchFailed as exc:
            log.warning("recall unavailable for %s; serving notes only: %s", agent_id, exc)
            return []
        columns, seqs = cached.columns, cached.seqs
        allowed = _allowed(cached, None, None, include_untrusted)
        ranking = vector_rankings(columns, allowed, vectors[:1], min(limit, MAX_K))
        close = [(int(seqs[p]), cosine) for p, cosine in (ranking[0] if ranking else [])]
        close = [(seq, cosine) for seq, cosine in close if cosine >= EPISODE_FLOOR]
        if not close:
            return []
        rows = await store.read(
            lambda conn: db_episodes.episodes_by_seq(conn, [seq for seq, _ in close])
        )
        return [
            RelevantEpisode(
                episode_id=rows[seq].id,
                summary=rows[seq].summary,
                finished_at=rows[seq].finished_at,
                score=round(cosine, 6),
                corrections=_corrections(rows[seq]),
            )
            for seq, cosine in close
            # Defence in depth: the matrix filters untrusted episodes, and so does this.
            if seq in rows and (include_untrusted or rows[seq].origin == "clean")
        ]

    return episodes
