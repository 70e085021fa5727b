"""The built-in reflector: lessons from user interventions that recur across episodes."""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec
import numpy

from credence.memory.gate import NEAR_DUPLICATE_COSINE, LiveBelief, Proposal
from credence.memory.text import analyse, is_negative, jaccard, normalise

TRIGGERS = ("steer", "denial", "followup")
MIN_SUPPORT = 2
MAX_CONFIDENCE = 0.95

# Two interventions say the same thing when their wording overlaps strongly, or overlaps
# somewhat and either their episodes or (when given) their own embeddings are close. Figures
# suit the bundled wordllama model, where paraphrases score about 0.65-0.8.
LEXICAL_LINK = 0.5
CONTEXT_LINK = 0.34
EPISODE_COSINE = 0.6
INTERVENTION_COSINE = 0.8
INTERVENTION_COSINE_WITH_OVERLAP = 0.65
INTERVENTION_OVERLAP = 0.25
# Same polarity and this much overlap with an active belief means "the user keeps saying it".
STRENGTHEN_OVERLAP = 0.6
CONTRADICTION_OVERLAP = 0.4
MAX_LESSON_CHARS = 200
MAX_QUOTES = 3
MAX_QUOTE_CHARS = 120
UNBOUNDED = 10_000  # max_items when refusals are dropped afterwards: the cap applies after


class HeuristicEpisode(msgspec.Struct, frozen=True):
    """An episode as the heuristic sees it; ``interventions`` are (trigger, user's words)."""

    id: str
    summary: str
    interventions: tuple[tuple[str, str], ...]
    origin: str


class _Said(msgspec.Struct, frozen=True):
    """One intervention: where it came from and its text keys."""

    order: int
    flat: int
    episode: int
    trigger: str
    text: str
    tokens: frozenset[str]
    negative: bool


def intervention_texts(episodes: Sequence[HeuristicEpisode]) -> list[str]:
    """Return every intervention text in order: the rows ``intervention_embeddings`` align to."""
    return [text for episode in episodes for _, text in episode.interventions]


def reflect(
    episodes: Sequence[HeuristicEpisode],
    embeddings: numpy.ndarray | None,
    active: Sequence[LiveBelief],
    *,
    max_items: int = 10,
    intervention_embeddings: numpy.ndarray | None = None,
) -> list[Proposal]:
    """Propose lessons backed by user interventions repeated in at least two episodes.

    ``embeddings`` are the episodes' (rows aligned with ``episodes``); the optional
    ``intervention_embeddings`` align with :func:`intervention_texts`. Interventions of the
    same polarity are clustered greedily by word overlap, helped by those embeddings. A
    cluster supported by ≥ 2 distinct episodes becomes one proposal whose text is the most
    representative intervention turned into an imperative sentence ("no, use metric units
    please" → "Use metric units."), with confidence ``min(0.95, 1 − 0.5**support)`` and the
    supporting episodes as sources.

    Against active beliefs: a lesson that restates one (same polarity, Jaccard ≥ 0.6) becomes
    ``strengthen`` of it; a lesson that is its negation-counterpart becomes ``supersede`` with
    ``target_belief_id`` set, because the user's repeated corrections argue for replacing the
    old belief rather than keeping both — the reviewer sees which belief would be retired, and
    the gate still routes every supersede to review. Otherwise it is an ``add``.
    Deterministic: the same input always gives the same proposals, strongest support first.
    """
    if embeddings is not None and len(embeddings) != len(episodes):
        raise ValueError(f"{len(embeddings)} embedding rows for {len(episodes)} episodes")
    said = _interventions(episodes)
    texts_count = sum(len(episode.interventions) for episode in episodes)
    if intervention_embeddings is not None and len(intervention_embeddings) != texts_count:
        raise ValueError(
            f"{len(intervention_embeddings)} intervention embedding rows for {texts_count} texts"
        )
    episode_cosine = _cosines(embeddings)
    intervention_cosine = _cosines(intervention_embeddings)

    def linked(a: _Said, b: _Said) -> bool:
        if a.negative != b.negative:
            return False
        overlap = jaccard(a.tokens, b.tokens)
        if overlap >= LEXICAL_LINK:
            return True
        if (
            episode_cosine is not None
            and overlap >= CONTEXT_LINK
            and episode_cosine[a.episode, b.episode] >= EPISODE_COSINE
        ):
            return True
        if intervention_cosine is not None:
            cosine = intervention_cosine[a.flat, b.flat]
            return cosine >= INTERVENTION_COSINE or (
                cosine >= INTERVENTION_COSINE_WITH_OVERLAP and overlap >= INTERVENTION_OVERLAP
            )
        return False

    clusters = _cluster(said, linked, wordless_links=intervention_cosine is not None)
    drafts = []
    for members in clusters:
        supporting = sorted({item.episode for item in members})
        if len(supporting) < MIN_SUPPORT:
            continue
        drafts.append((members, supporting))
    drafts.sort(key=lambda draft: (-len(draft[1]), draft[1][0], draft[0][0].order))
    proposals: list[Proposal] = []
    claimed: set[str] = set()
    for members, supporting in drafts:
        if len(proposals) >= max_items:
            break
        proposal = _proposal(len(proposals), members, supporting, episodes, active, linked)
        if proposal is None:
            continue
        claim = proposal.target_belief_id or analyse(proposal.belief)[0]
        if claim in claimed:
            continue
        claimed.add(claim)
        proposals.append(proposal)
    return proposals


def drop_refused(
    proposals: Sequence[Proposal],
    vectors: numpy.ndarray,
    forgotten: Sequence[LiveBelief],
    max_items: int,
) -> list[Proposal]:
    """The proposals, renumbered and capped, without those a forgotten belief already refused.

    A proposal is refused when it normalises to a forgotten belief's text, or when its
    embedding (a row of ``vectors``) is near-duplicate close to one of the same polarity: the
    rule the submit step rejects ``previously_forgotten`` proposals by, applied before the cap
    so refused lessons do not take the places of new ones.
    """
    keys = {normalise(belief.content) for belief in forgotten}
    known = [
        b for b in forgotten if b.embedding is not None and len(b.embedding) == vectors.shape[1]
    ]
    matrix = (
        numpy.stack([numpy.asarray(b.embedding, dtype=numpy.float32) for b in known])
        if known
        else numpy.zeros((0, vectors.shape[1]), dtype=numpy.float32)
    )
    polarity = [is_negative(b.content) for b in known]
    scores = numpy.asarray(vectors, dtype=numpy.float32) @ matrix.T
    kept: list[Proposal] = []
    for row, proposal in enumerate(proposals):
        if len(kept) >= max_items:
            break
        if normalise(proposal.belief) in keys:
            continue
        negative = is_negative(proposal.belief)
        close = numpy.flatnonzero(scores[row] >= NEAR_DUPLICATE_COSINE)
        if any(polarity[i] == negative for i in close):
            continue
        kept.append(msgspec.structs.replace(proposal, index=len(kept)))
    return kept


def _interventions(episodes: Sequence[HeuristicEpisode]) -> list[_Said]:
    said: list[_Said] = []
    flat = 0
    for episode_number, episode in enumerate(episodes):
        for trigger, text in episode.interventions:
            tidy = tidied(text)
            tokens = analyse(tidy)[1]
            negative = main_clause_negative(tidy)
            if trigger in TRIGGERS and tokens:
                said.append(
                    _Said(
                        order=len(said),
                        flat=flat,
                        episode=episode_number,
                        trigger=trigger,
                        text=text,
                        tokens=tokens,
                        negative=negative,
                    )
                )
            flat += 1
    return said


def _cosines(matrix: numpy.ndarray | None) -> numpy.ndarray | None:
    if matrix is None or len(matrix) == 0:
        return None
    rows = numpy.nan_to_num(numpy.asarray(matrix, dtype=numpy.float64))
    if rows.ndim != 2:
        raise ValueError("embeddings must be a 2-D array")
    norms = numpy.linalg.norm(rows, axis=1, keepdims=True)
    units = numpy.divide(rows, norms, out=numpy.zeros_like(rows), where=norms > 0)
    return units @ units.T


def _cluster(said: list[_Said], linked, wordless_links: bool) -> list[list[_Said]]:
    """Greedy: join the cluster linked to the largest share (≥ half) of its members.

    Without intervention embeddings every link needs a shared word, so only clusters sharing
    a token with the item are examined; ``wordless_links`` turns that shortcut off.
    """
    clusters: list[list[_Said]] = []
    clusters_by_token: dict[str, set[int]] = {}
    for item in said:
        if wordless_links:
            candidates: list[int] | range = range(len(clusters))
        else:
            near: set[int] = set()
            for token in item.tokens:
                near.update(clusters_by_token.get(token, ()))
            candidates = sorted(near)
        best = None
        best_share = 0.0
        for number in candidates:
            members = clusters[number]
            links = sum(1 for member in members if linked(item, member))
            share = links / len(members)
            if links and share >= 0.5 and share > best_share:
                best, best_share = number, share
        if best is None:
            best = len(clusters)
            clusters.append([item])
        else:
            clusters[best].append(item)
        for token in item.tokens:
            clusters_by_token.setdefault(token, set()).add(best)
    return clusters


def _proposal(
    position: int,
    members: list[_Said],
    supporting: list[int],
    episodes: Sequence[HeuristicEpisode],
    active: Sequence[LiveBelief],
    linked,
) -> Proposal | None:
    shared = _shared_tokens(members)
    representative = max(
        members,
        key=lambda item: (
            sum(1 for other in members if other is not item and linked(item, other)),
            len(item.tokens & shared),
            -item.order,
        ),
    )
    lesson = imperative(representative.text, shared)
    support = len(supporting)
    confidence = min(MAX_CONFIDENCE, 1.0 - 0.5**support)
    sources = tuple(dict.fromkeys(episodes[number].id for number in supporting))
    rationale = _rationale(members, support)
    key, tokens, _ = analyse(lesson)
    negative = main_clause_negative(lesson)
    restated, reversed_ = _relation_to_active(key, tokens, negative, active)
    if restated is not None:
        strengthened = min(MAX_CONFIDENCE, 1.0 - (1.0 - restated.confidence) * (1.0 - confidence))
        if strengthened <= restated.confidence + 0.01:
            return None
        return Proposal(
            index=position,
            op="strengthen",
            belief=restated.content,
            confidence=round(strengthened, 4),
            rationale=f"{rationale} This supports active belief {restated.id}.",
            source_episodes=sources,
            target_belief_id=restated.id,
        )
    if reversed_ is not None:
        return Proposal(
            index=position,
            op="supersede",
            belief=lesson,
            confidence=round(confidence, 4),
            rationale=f"{rationale} This reverses active belief {reversed_.id}.",
            source_episodes=sources,
            target_belief_id=reversed_.id,
        )
    return Proposal(
        index=position,
        op="add",
        belief=lesson,
        confidence=round(confidence, 4),
        rationale=rationale,
        source_episodes=sources,
    )


def _shared_tokens(members: list[_Said]) -> frozenset[str]:
    counts: dict[str, int] = {}
    for item in members:
        for token in item.tokens:
            counts[token] = counts.get(token, 0) + 1
    return frozenset(token for token, count in counts.items() if count >= 2)


def _relation_to_active(
    key: str, tokens: frozenset[str], negative: bool, active: Sequence[LiveBelief]
) -> tuple[LiveBelief | None, LiveBelief | None]:
    """Return (the active belief the lesson restates, the one it reverses); best match each."""
    same: list[tuple[float, str, LiveBelief]] = []
    opposite: list[tuple[float, str, LiveBelief]] = []
    for belief in active:
        if belief.status != "active":
            continue
        other_key, other_tokens, _ = analyse(belief.content)
        other_negative = main_clause_negative(belief.content)
        overlap = 1.0 if other_key == key else jaccard(tokens, other_tokens)
        if other_negative == negative and overlap >= STRENGTHEN_OVERLAP:
            same.append((-overlap, belief.id, belief))
        elif other_negative != negative and overlap >= CONTRADICTION_OVERLAP:
            opposite.append((-overlap, belief.id, belief))
    best = (
        min(same, key=lambda item: item[:2]) if same else None,
        min(opposite, key=lambda item: item[:2]) if opposite else None,
    )
    return (best[0][2] if best[0] else None, best[1][2] if best[1] else None)


def _rationale(members: list[_Said], support: int) -> str:
    triggers = sorted({item.trigger for item in members}, key=TRIGGERS.index)
    quotes = []
    for item in members[:MAX_QUOTES]:
        text = " ".join(item.text.split())
        if len(text) > MAX_QUOTE_CHARS:
            text = text[: MAX_QUOTE_CHARS - 1] + "…"
        quotes.append(f'"{text}"')
    return (
        f"The user said this in {support} episodes ({'/'.join(triggers)}): "
        + "; ".join(quotes)
        + "."
    )


_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n+")
_LEADING_FILLER = re.compile(
    r"^(?:(?:no|nope|nah|ok|okay|hey|hi|hmm|wait|sorry|well|again|ugh|oh)\s*[,.!:;\-—]+\s*"
    r"|(?:please|pls|actually|also|and|but|so|then|again|just|honestly)\b[\s,]*"
    r"|(?:i said|i told you(?: so| before| already)?|like i said|as i said|i already said)"
    r"\b[\s,:]*)",
    re.IGNORECASE,
)
_REQUEST_FORM = re.compile(
    r"^(?:(?:can|could|would|will) you(?: please)?|you (?:should|need to|have to|must)"
    r"|i (?:want|need) you to|i(?:'d| would) like you to|remember to|be sure to"
    r"|make sure (?:to|that you|you))\s+",
    re.IGNORECASE,
)
# "Use spaces, not tabs" / "… instead of tabs" asserts its main clause: the tail is contrast.
_CONTRAST_TAIL = re.compile(r"(?:[,;:]\s*not\b|\b(?:instead of|rather than)\b).*$", re.I | re.S)
_TRAILING_FILLER = re.compile(
    r"(?:[\s,]+(?:please|pls|thanks|thank you|ok|okay)|[\s.!?,;:]+)+$", re.IGNORECASE
)


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_BREAK.split(text) if part and part.strip()]


def _tidy(sentence: str) -> str:
    """Strip conversational filler and request forms from one sentence."""
    lesson = " ".join(sentence.split())
    for _ in range(4):
        stripped = _REQUEST_FORM.sub("", _LEADING_FILLER.sub("", lesson).strip()).strip()
        if stripped == lesson:
            break
        lesson = stripped
    return _TRAILING_FILLER.sub("", lesson).strip()


def main_clause_negative(text: str) -> bool:
    """Return the polarity of ``text`` ignoring a contrastive tail (", not tabs", "instead of")."""
    return is_negative(_CONTRAST_TAIL.sub("", text))


def tidied(text: str) -> str:
    """Return ``text`` with each sentence's filler removed: a denial's "no," is not a negation."""
    return " ".join(filter(None, (_tidy(sentence) for sentence in _sentences(text))))


def imperative(text: str, focus: frozenset[str] = frozenset()) -> str:
    """Turn a user's intervention into a one-sentence lesson in their own words.

    Picks the sentence carrying most ``focus`` tokens (then the most content), strips
    conversational filler ("no,", "please", "I told you") and request forms ("can you …?",
    "you should …"), then capitalises and ends with a full stop. Falls back to the tidied
    sentence itself if stripping leaves nothing meaningful.
    """
    scored = []
    for number, sentence in enumerate(_sentences(text)):
        tokens = analyse(sentence)[1]
        scored.append((len(tokens & focus), len(tokens), -number, sentence))
    if not scored:
        return ""
    chosen = max(scored)[3]
    lesson = _tidy(chosen)
    if not analyse(lesson)[1]:
        lesson = _TRAILING_FILLER.sub("", " ".join(chosen.split())).strip()
    if len(lesson) > MAX_LESSON_CHARS:
        lesson = lesson[:MAX_LESSON_CHARS].rsplit(" ", 1)[0]
    if not lesson:
        return ""
    return lesson[0].upper() + lesson[1:] + "."
