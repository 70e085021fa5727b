"""The built-in reflector: lessons from the user's corrections and rules, linked by meaning."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import msgspec
import numpy

from credence.memory.semantics.gate import NEAR_DUPLICATE_COSINE, LiveBelief, Proposal
from credence.memory.semantics.relation import relate
from credence.memory.semantics.tokens import analyse, is_negative, jaccard, normalise
from credence.memory.semantics.wording import VERBS
from credence.reflection import clauses
from credence.reflection.pulled import PulledEpisode
from credence.reflection.restate import with_new_value
from credence.reflection.signals import (
    confirms,
    is_question,
    is_retraction,
    outdated_belief,
    says_something,
    states_rule,
    teaches_nothing,
)
from credence.reflection.wording import (
    imperative,
    is_directive,
    lesson_sentences,
    main_clause_negative,
    tidied,
)

TRIGGERS = ("steer", "denial", "followup")
MIN_SUPPORT = 2
MAX_CONFIDENCE = 0.95

# Two interventions say the same thing when their wording overlaps strongly, or overlaps
# somewhat and their episodes are close, or (with their own embeddings) when they mean the
# same and do not contradict each other. Cosines of all-MiniLM-L6-v2, chosen on the tune half
# of harness/corpora/dev/reflection.json: corrections repeated in other words score about
# 0.55-0.85 there, unrelated requests of one user below 0.45.
LEXICAL_LINK = 0.5
CONTEXT_LINK = 0.34
EPISODE_COSINE = 0.6
INTERVENTION_COSINE = 0.55
# A sentence of one this close to a sentence of another (the rest of each may differ).
SENTENCE_COSINE = 0.6
# "Yes, keep doing that" is short and says less: it links to the rule it confirms lower.
CONFIRMATION_COSINE = 0.45
# Same polarity and this much overlap with an active belief means "the user keeps saying it".
STRENGTHEN_OVERLAP = 0.6
CONTRADICTION_OVERLAP = 0.4
# A rule the user states outright counts even when said once, at this lower confidence.
STATED_ONCE_CONFIDENCE = 0.4
MAX_QUOTES = 3
MAX_QUOTE_CHARS = 120
UNBOUNDED = 10_000  # max_items when refusals are dropped afterwards: the cap applies after


class _Said(msgspec.Struct, frozen=True):
    """One intervention: where it came from and its text keys."""

    order: int
    flat: int
    episode: int
    trigger: str
    text: str
    tokens: frozenset[str]
    negative: bool
    confirming: bool
    directive: bool
    teaches: bool  # holds a sentence fit for a lesson beyond thanks and scolding
    clauses: tuple[tuple[frozenset[str], bool], ...]
    sentences: tuple[str, ...]
    rows: range  # its sentences' rows in the sentence embeddings


def intervention_texts(episodes: Sequence[PulledEpisode]) -> list[str]:
    """Return every intervention text in order: the rows ``intervention_embeddings`` align to."""
    return [text for episode in episodes for _, text in episode.interventions]


def sentence_texts(episodes: Sequence[PulledEpisode]) -> list[str]:
    """Return every sentence of every intervention in order: the rows ``sentence_embeddings``
    align to."""
    return clauses.sentence_texts(intervention_texts(episodes))


def reflect(
    episodes: Sequence[PulledEpisode],
    embeddings: numpy.ndarray | None,
    active: Sequence[LiveBelief],
    *,
    max_items: int = 10,
    intervention_embeddings: numpy.ndarray | None = None,
    active_embeddings: numpy.ndarray | None = None,
    sentence_embeddings: numpy.ndarray | None = None,
) -> list[Proposal]:
    """Propose lessons backed by user interventions repeated in at least two episodes, or
    stated once as an explicit rule ("always …", "never …", "X has to be Y", "remember this")
    in a trusted episode, at confidence 0.4, or said once against an active belief it says is
    now wrong (``supersede``/``forget`` of it, at confidence 0.4).

    Only trusted episodes teach: a third-party episode's words never become a lesson, and
    questions, passing failures ("it timed out, try again") and requests for one occasion
    ("just for today") are never candidates; praise, scolding ("that's wrong again") and news
    mentioned only in follow-ups never make a lesson however often they recur.

    ``embeddings`` are the episodes' (rows aligned with ``episodes``); the optional
    ``intervention_embeddings`` align with :func:`intervention_texts`, and the optional
    ``sentence_embeddings`` with :func:`sentence_texts`. Interventions of the same polarity
    are clustered greedily by word overlap, whole or clause by clause; with embeddings, any two
    that are close in meaning, whole or by a sentence of each, and do not contradict each
    other (``relate``) link too, and a confirmation ("yes, like I said", "keep doing that")
    links to the rule it approves at a lower cosine and is never a rule on its own. A
    cluster supported by ≥ 2 distinct episodes becomes one proposal whose text is the most
    representative intervention turned into an imperative sentence ("no, use metric units
    please" → "Use metric units."), with confidence ``min(0.95, 1 − 0.5**support)`` and the
    supporting episodes as sources.

    Against active beliefs: a lesson that restates one (same polarity, Jaccard ≥ 0.6) becomes
    ``strengthen`` of it; a lesson that is its negation-counterpart becomes ``supersede`` with
    ``target_belief_id`` set, because the user's repeated corrections argue for replacing the
    old belief rather than keeping both — the reviewer sees which belief would be retired, and
    the gate still routes every supersede to review. With ``active_embeddings`` (rows aligned
    with ``active``), a correction (or one of its sentences) close in meaning to an active
    belief that contradicts it or says it changed ("we moved off Travis, CI runs on GitHub
    Actions now"; see :func:`~credence.reflection.signals.outdated_belief`) becomes
    ``supersede``, or ``forget`` when it names no replacement. A supersede's text is the kept
    belief with the one value the user replaced ("The user's home airport is SEA."; see
    :func:`~credence.reflection.restate.with_new_value`), else the corrected sentence.
    Otherwise it is an ``add``.
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
    if active_embeddings is not None and len(active_embeddings) != len(active):
        raise ValueError(f"{len(active_embeddings)} belief embedding rows for {len(active)}")
    sentence_count = len(sentence_texts(episodes))
    if sentence_embeddings is not None and len(sentence_embeddings) != sentence_count:
        raise ValueError(
            f"{len(sentence_embeddings)} sentence embedding rows for {sentence_count} sentences"
        )
    episode_cosine = _cosines(embeddings)
    intervention_cosine = _cosines(intervention_embeddings)
    sentence_cosine = _cosines(sentence_embeddings)

    linked = _linker(episode_cosine, intervention_cosine, sentence_cosine, _only_twice(said))

    def now_wrong(members: list[_Said]) -> tuple[_Said, LiveBelief] | None:
        return _now_wrong(
            members, intervention_embeddings, active, active_embeddings, sentence_embeddings
        )

    clusters = _cluster(said, linked, wordless_links=intervention_cosine is not None)
    drafts = []
    for members in (part for cluster in clusters for part in _split_by_target(cluster, now_wrong)):
        supporting = sorted({item.episode for item in members})
        wrong = now_wrong(members)
        if len(supporting) < MIN_SUPPORT and wrong is None and not _stated_rule(members):
            continue
        if not any(item.teaches and not item.confirming for item in members):
            continue  # praise, scolding or approval of what was never asked teaches nothing
        if wrong is None and not any(
            item.trigger != "followup" or item.directive for item in members
        ):
            continue  # news the user mentioned in passing, however often, is not a rule
        drafts.append((members, supporting, wrong))
    drafts.sort(key=lambda draft: (-len(draft[1]), draft[1][0], draft[0][0].order))
    proposals: list[Proposal] = []
    claimed: set[str] = set()
    for members, supporting, wrong in drafts:
        if len(proposals) >= max_items:
            break
        proposal = _proposal(len(proposals), members, supporting, episodes, active, linked)
        if wrong is not None and proposal is not None:
            proposal = _retire(proposal, members, wrong)
        if proposal is None:
            continue
        claim = proposal.target_belief_id or analyse(proposal.belief)[0]
        if claim in claimed:
            continue
        claimed.add(claim)
        proposals.append(proposal)
    return proposals


def _only_twice(said: list[_Said]) -> frozenset[str]:
    """The words exactly two interventions use, verbs aside: a thing both name and no other
    intervention does ("keep" or "need" name no thing)."""
    counts = Counter(token for item in said for token in item.tokens)
    return frozenset(token for token, count in counts.items() if count == 2 and token not in VERBS)


def _linker(
    episode_cosine: numpy.ndarray | None,
    intervention_cosine: numpy.ndarray | None,
    sentence_cosine: numpy.ndarray | None,
    only_twice: frozenset[str] = frozenset(),
):
    """Return the predicate saying whether two interventions carry the same lesson."""

    def linked(a: _Said, b: _Said) -> bool:
        # Judged in the order the user said them, so that the link is the same both ways:
        # the pair judgement reads the first as the rule in memory and the second as new.
        a, b = (a, b) if a.order <= b.order else (b, a)
        if b.confirming and not a.confirming and a.tokens & b.tokens & only_twice:
            # Praise names what it approves ("the vocab list at the end was great, keep doing
            # that"): the one earlier request naming that thing too is the rule it confirms.
            return True
        if _pushback_on_one_thing(a, b, only_twice):
            cosine = 0.0 if intervention_cosine is None else intervention_cosine[a.flat, b.flat]
            return not _contradict(a.text, b.text, a.negative, b.negative, float(cosine))
        if intervention_cosine is not None:
            cosine = float(intervention_cosine[a.flat, b.flat])
            floor = CONFIRMATION_COSINE if a.confirming or b.confirming else INTERVENTION_COSINE
            if cosine >= floor:
                return not _contradict(a.text, b.text, a.negative, b.negative, cosine)
        if sentence_cosine is not None and a.rows and b.rows:
            block = sentence_cosine[a.rows.start : a.rows.stop, b.rows.start : b.rows.stop]
            row, column = numpy.unravel_index(int(numpy.argmax(block)), block.shape)
            cosine = float(block[row, column])
            one, other = a.sentences[row], b.sentences[column]
            if cosine >= SENTENCE_COSINE and not one.endswith("?") and not other.endswith("?"):
                negative = (main_clause_negative(tidied(one)), main_clause_negative(tidied(other)))
                return not _contradict(one, other, *negative, cosine)
        if clauses.clauses_link(a.clauses, b.clauses):
            return True
        if a.negative != b.negative:
            return False
        overlap = jaccard(a.tokens, b.tokens)
        if overlap >= LEXICAL_LINK:
            return True
        return (
            episode_cosine is not None
            and overlap >= CONTEXT_LINK
            and episode_cosine[a.episode, b.episode] >= EPISODE_COSINE
        )

    return linked


def _pushback_on_one_thing(a: _Said, b: _Said, only_twice: frozenset[str]) -> bool:
    """Whether two denials in two episodes name one thing no other intervention names: one
    correction repeated, however differently worded ("this one has a pool, hard pass" /
    "another one with a pool??")."""
    return (
        a.trigger == b.trigger == "denial"
        and a.episode != b.episode
        and bool(a.tokens & b.tokens & only_twice)
    )


def _contradict(a: str, b: str, a_negative: bool, b_negative: bool, cosine: float) -> bool:
    """True when two close interventions contradict each other, so must not be one lesson.

    An antonym alone between two of the same polarity is a complaint and its remedy ("too
    long" then "keep answers short"), not two opposite lessons.
    """
    relation = relate(tidied(a), tidied(b), cosine)
    if relation.kind != "contradiction":
        return False
    return relation.contradiction != "antonym" or a_negative != b_negative


def _split_by_target(members: list[_Said], now_wrong) -> list[list[_Said]]:
    """Split a cluster so that corrections retiring an active belief stand apart from the rest:
    "we report in euros now" is not the same lesson as "round to two decimals", however close."""
    groups: dict[str, list[_Said]] = {}
    for item in members:
        wrong = now_wrong([item])
        groups.setdefault(wrong[1].id if wrong else "", []).append(item)
    return list(groups.values())


def _now_wrong(
    members: list[_Said],
    intervention_embeddings: numpy.ndarray | None,
    active: Sequence[LiveBelief],
    active_embeddings: numpy.ndarray | None,
    sentence_embeddings: numpy.ndarray | None,
) -> tuple[_Said, LiveBelief] | None:
    """The correction among ``members`` saying an active belief is now wrong, and that belief."""
    if intervention_embeddings is None or active_embeddings is None:
        return None
    found = []
    for item in members:
        if item.confirming:
            continue
        sentences = (
            list(zip(item.sentences, sentence_embeddings[item.rows], strict=True))
            if sentence_embeddings is not None
            else []
        )
        hit = outdated_belief(
            item.text, intervention_embeddings[item.flat], active, active_embeddings, sentences
        )
        if hit is not None:
            found.append((-hit[1], item.order, item, hit[0]))
    if not found:
        return None
    _, _, item, belief = min(found, key=lambda row: row[:2])
    return item, belief


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


def _interventions(episodes: Sequence[PulledEpisode]) -> list[_Said]:
    said: list[_Said] = []
    flat = 0
    row = 0
    for episode_number, episode in enumerate(episodes):
        for trigger, text in episode.interventions:
            sentences = tuple(clauses.sentences_of(text))
            rows = range(row, row + len(sentences))
            row += len(sentences)
            tidy = tidied(text)
            tokens = analyse(tidy)[1]
            negative = main_clause_negative(tidy)
            # Only the user's own words teach; questions and passing failures teach nothing.
            confirming = confirms(text)
            # A confirmation scoped to today ("yes, like I said, this one's fine") still
            # confirms the standing rule; anything else scoped to one occasion teaches nothing.
            learnable = episode.origin != "untrusted" and (
                not teaches_nothing(text) or (confirming and not is_question(text))
            )
            if trigger in TRIGGERS and tokens and learnable:
                said.append(
                    _Said(
                        order=len(said),
                        flat=flat,
                        episode=episode_number,
                        trigger=trigger,
                        text=text,
                        tokens=tokens,
                        negative=negative,
                        confirming=confirming,
                        directive=any(map(is_directive, lesson_sentences(text))),
                        teaches=says_something(text),
                        clauses=clauses.clauses_of(text),
                        sentences=sentences,
                        rows=rows,
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
    episodes: Sequence[PulledEpisode],
    active: Sequence[LiveBelief],
    linked,
) -> Proposal | None:
    shared = _shared_tokens(members)
    representative = max(
        members,
        key=lambda item: (
            item.teaches and not item.confirming,
            sum(1 for other in members if other is not item and linked(item, other)),
            not item.confirming,  # "yes, keep doing that" says less than the rule it approves
            item.directive,  # a lesson reads as a rule: prefer a member that asks for something
            len(analyse(imperative(item.text, shared))[1] & shared),  # the lesson it would give
            len(item.tokens),  # then the fuller statement of it
            -item.order,
        ),
    )
    lesson = imperative(representative.text, shared)
    support = len(supporting)
    confidence = min(MAX_CONFIDENCE, 1.0 - 0.5**support)
    if support < MIN_SUPPORT:
        confidence = STATED_ONCE_CONFIDENCE  # an explicit rule said once: a weaker candidate
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


def _stated_rule(members: list[_Said]) -> bool:
    """True when one member is an explicit rule in the user's own words ("always …",
    "never …", "X has to be Y", "remember this"); third-party words never get this far."""
    return any(states_rule(item.text) and not item.confirming for item in members)


def _retire(proposal: Proposal, members: list[_Said], wrong: tuple[_Said, LiveBelief]) -> Proposal:
    """Turn ``proposal`` against the active belief its correction says is now wrong."""
    item, belief = wrong
    rationale = f"{proposal.rationale} The user says active belief {belief.id} is now wrong."
    if is_retraction(tidied(item.text), belief.content):
        return msgspec.structs.replace(
            proposal,
            op="forget",
            belief=belief.content,
            target_belief_id=belief.id,
            rationale=rationale,
        )
    # Best, the kept belief with the one value the user replaced; else the sentence naming
    # what is true now, which carries words the old belief lacks.
    lesson = with_new_value(belief.content, item.text) or imperative(
        item.text, item.tokens - analyse(belief.content)[1]
    )
    return msgspec.structs.replace(
        proposal,
        op="supersede",
        belief=lesson or proposal.belief,
        target_belief_id=belief.id,
        rationale=rationale,
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
        f"The user said this in {support} episode{'' if support == 1 else 's'}"
        f" ({'/'.join(triggers)}): " + "; ".join(quotes) + "."
    )
