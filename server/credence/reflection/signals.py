"""What a user's intervention signals: a rule, a confirmation, a change, or nothing to learn."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy

from credence.memory.semantics.gate import LiveBelief
from credence.memory.semantics.relation import relate
from credence.memory.semantics.tokens import analyse
from credence.reflection.clauses import sentences_of
from credence.reflection.restate import names_a_value_of, offers_a_value_for
from credence.reflection.wording import (
    CHANGE,
    in_third_person,
    is_directive,
    is_one_off,
    lesson_sentences,
    main_clause_negative,
    tidied,
)

# An explicit rule in the user's own words: a candidate lesson even when said once.
EXPLICIT_RULE = re.compile(
    # "I could never give up bread" tells what the user cannot do, not a rule.
    r"\b(?:always|(?<!could )(?<!can )never|from now on|every time|has to|have to|must(?:n't| not)?"
    r"|remember (?:this|that)|don'?t ever|do not ever|make it a rule|make sure"
    r"|(?:please|pls) (?:don'?t|do not|never|stop)|going forward|in future|in the future"
    r"|whenever|each time|by default|as a rule|the rule is|at all times|under no circumstances"
    r"|no exceptions|without exception|only ever|keep in mind|for future reference"
    r"|moving forward|from here on)\b",
    re.IGNORECASE,
)
# The user approving what was done, or repeating a rule they gave before ("as I said"):
# links to the rule it confirms at a lower cosine, and is never a rule on its own.
CONFIRMATION = re.compile(
    r"\b(?:keep (?:doing|it|them|that|insisting|writing|using)|exactly right|that'?s right"
    r"|(?:was|is|looks?|were) (?:perfect|right|great|good)|good call|saved (?:me|us)"
    r"|(?:like|as) i (?:said|asked|told you|mentioned|wanted)(?: before| earlier)?"
    r"|that'?s (?:the rule|what i (?:need|want|asked|meant|said))|spot on|well done"
    r"|^(?:yes|yep|yeah|perfect|great|good|nice|right|exactly)\b[\s,.!]+(?:like|as|that)\b)",
    re.IGNORECASE,
)
# A kept fact that no longer holds: "now", "anymore", "we moved off", "out of date", "the
# Nest is gone", "I left in August".
# "Now" alone says a fact changed only in a statement ("it's an induction hob now"), not in a
# request ("book it now").
_NOW = re.compile(r"\bnow\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"\s*[,;]\s*")
# Words that only acknowledge ("great, thanks!"): an intervention of nothing else teaches nothing.
ACKNOWLEDGEMENTS = frozenset(
    (
        *("thanks", "thank", "thx", "cheers", "great", "perfect", "good", "nice", "ok", "okay"),
        *("cool", "awesome", "lovely", "brilliant", "excellent", "fine", "yes", "yep", "yeah"),
        *("sure", "right", "correct", "exactly", "wrong", "again", "bad", "wow", "love", "works"),
    )
)
# A passing failure ("timed out, try again") teaches nothing lasting.
TRANSIENT = re.compile(
    r"\b(?:try (?:it )?again|retry|another go|once more|timed? ?out|is down|crashed|rate.?limit"
    r"|network error|(?:it'?s|is) busy|again (?:later|in a (?:minute|moment|bit)))\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"^(?:what|who|whom|which|where|when|why|how|is|are|was|were|does|do|did|has|have)\b[^.!]*\?$",
    re.IGNORECASE,
)
# "What's …" and "how much …" ask even without a question mark; "when …" or "how you …" may
# open an instruction ("when you write these up, paste the commands"), so they need one.
_BARE_QUESTION = re.compile(
    r"^(?:what'?s|what is|what are|how'?s|how (?:much|many|long|often|do|does|did|come))\b"
    r"[^.!?]*$",
    re.IGNORECASE,
)
_OPENING_FILLER = re.compile(r"^(?:(?:ok|okay|so|but|and|hmm|um|uh|btw|quick q)\b[\s,]*)+", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# A correction this close in meaning to an active belief, signalling a change, retires it;
# one of its sentences may be this close instead, or, when it names a content word of the
# belief ("we ripped out the gas hob" against "cooks on a gas stove"), this close.
BELIEF_COSINE = 0.55
SENTENCE_BELIEF_COSINE = 0.45
SHARED_WORD_BELIEF_COSINE = 0.3
SHARED_WORD_BELIEF_COSINE_WHOLE = 0.4
# A sentence saying a change that names the belief's own value ("salesforce is dead to us"
# against "Deals are tracked in Salesforce") needs only not to be unrelated.
NAMED_VALUE_BELIEF_COSINE = 0.2
# A correction saying the opposite of a belief retires it when it shares this many words.
DENIAL_SHARED_WORDS = 2
# Forget (rather than supersede) when the correction names nothing beyond the belief's words.
_RETRACTION_WORDS = frozenset(
    (
        *("actually", "no", "not", "that", "this", "is", "isn't", "wasn't", "true", "anymore"),
        *("any", "more", "longer", "wrong", "forget", "it", "please", "that's", "thats"),
    )
)


def is_question(text: str) -> bool:
    """True when every sentence of ``text`` is a question asked for information."""
    sentences = [part.strip() for part in _SENTENCE_END.split(text.strip()) if part.strip()]
    return bool(sentences) and all(_asks(sentence) for sentence in sentences)


def _asks(sentence: str) -> bool:
    """Whether one sentence asks for information, with its question mark or, in chat, without
    one ("ok but whats the difference between por and para")."""
    sentence = _OPENING_FILLER.sub("", sentence)
    return bool(_QUESTION.match(sentence) or _BARE_QUESTION.match(sentence))


def says_changed(text: str) -> bool:
    """True when a sentence of ``text`` says a fact changed: "anymore", "we moved off", or
    "now" in a statement rather than a request."""
    for sentence in sentences_of(text):
        if sentence.endswith("?"):
            continue
        if CHANGE.search(sentence):
            return True
        # Judged clause by clause: "interviews are an hour now, 45 min was always too tight"
        # states a change though its second clause holds "always".
        for clause in _CLAUSE_BREAK.split(sentence):
            if _NOW.search(clause) and not is_directive(tidied(clause)):
                return True
    return False


def says_something(text: str) -> bool:
    """True when ``text`` holds a sentence fit for a lesson with a word beyond thanks and
    praise: "great, thanks!" and "that's wrong again" teach nothing on their own."""
    return any(analyse(sentence)[1] - ACKNOWLEDGEMENTS for sentence in lesson_sentences(text))


def teaches_nothing(text: str) -> bool:
    """True for a question, or a passing failure or one-off request that states no rule
    ("timed out, retry", "fine for today")."""
    if is_question(text):
        return True
    passing = bool(TRANSIENT.search(text)) or (is_one_off(text) and not says_changed(text))
    return passing and not states_rule(text)


def states_rule(text: str) -> bool:
    """True when ``text`` states a rule outright ("always …", "never …", "make sure …")."""
    return bool(EXPLICIT_RULE.search(text))


def confirms(text: str) -> bool:
    """True when ``text`` approves something the agent did ("keep doing that")."""
    return bool(CONFIRMATION.search(text))


def outdated_belief(
    text: str,
    vector: numpy.ndarray | None,
    active: Sequence[LiveBelief],
    vectors: numpy.ndarray,
    sentences: Sequence[tuple[str, numpy.ndarray]] = (),
) -> tuple[LiveBelief, float] | None:
    """Return the active belief ``text`` says is now wrong, with its cosine, or None.

    Either the belief is the closest active one at cosine ≥ ``BELIEF_COSINE`` (``vectors``
    rows align with ``active``) and the correction contradicts it (relate) or says that it
    changed ("now", "anymore", "we moved off"); or one of ``sentences`` (text, embedding) of
    the correction says it changed and is close to the belief — at ``SENTENCE_BELIEF_COSINE``,
    or at ``SHARED_WORD_BELIEF_COSINE`` when it names one of the belief's content words or puts
    a new code or name in the place of one of its values (the whole correction at
    ``SHARED_WORD_BELIEF_COSINE_WHOLE``, or at ``SHARED_WORD_BELIEF_COSINE`` when it names two).
    Among several, the belief the change sentence names wins, then the closest.
    """
    if vector is None or not len(active) or len(vectors) != len(active):
        return None
    units = _unit(numpy.asarray(vectors, dtype=numpy.float64))
    unit = _unit(numpy.asarray(vector, dtype=numpy.float64)[None, :])[0]
    scores = units @ unit
    best = int(numpy.argmax(scores))
    cosine = float(scores[best])
    belief = active[best]
    whole = None
    if belief.status == "active" and says_changed(text):
        named = analyse(text)[1] & analyse(belief.content)[1] - {"user"}
        # Two of the belief's own words ("royal mail") are evidence enough of the subject.
        floor = SHARED_WORD_BELIEF_COSINE if len(named) > 1 else SHARED_WORD_BELIEF_COSINE_WHOLE
        if cosine >= BELIEF_COSINE or (named and cosine >= floor):
            whole = (belief, cosine)
    elif belief.status == "active" and (
        (cosine >= SENTENCE_BELIEF_COSINE and denies(text, belief.content))
        or (
            cosine >= BELIEF_COSINE and relate(belief.content, text, cosine).kind == "contradiction"
        )
    ):
        whole = (belief, cosine)
    found: list[tuple[int, float, int]] = []
    for sentence, sentence_vector in sentences:
        if not says_changed(sentence):
            continue
        said = analyse(sentence)[1]
        row = _unit(numpy.asarray(sentence_vector, dtype=numpy.float64)[None, :])[0]
        for number, (kept, score) in enumerate(zip(active, units @ row, strict=True)):
            # A word of the belief's own, or a new value in the place of one of its values.
            names = bool(said & analyse(kept.content)[1]) or offers_a_value_for(
                kept.content, sentence
            )
            floor = SHARED_WORD_BELIEF_COSINE if names else SENTENCE_BELIEF_COSINE
            if names_a_value_of(kept.content, sentence):
                floor = NAMED_VALUE_BELIEF_COSINE
            if kept.status == "active" and score >= floor:
                found.append((int(names), float(score), number))
    if found:
        by_name, score, number = max(found)
        if whole is None or (by_name and whole[0] is not active[number]):
            return active[number], score
    return whole


def denies(text: str, belief: str) -> bool:
    """True when ``text`` says the opposite of ``belief`` about the same things: "No, I don't
    drink coffee" against "The user drinks coffee every morning" (two content words shared)."""
    said = tidied(text)
    shared = analyse(in_third_person(said))[1] & analyse(belief)[1] - {"user"}
    return len(shared) >= DENIAL_SHARED_WORDS and main_clause_negative(
        said
    ) != main_clause_negative(belief)


def is_retraction(text: str, belief: str) -> bool:
    """True when ``text`` only withdraws ``belief`` and names no replacement: a forget."""
    words = set(re.findall(r"[a-z']+", text.casefold()))
    known = set(re.findall(r"[a-z']+", belief.casefold())) | _RETRACTION_WORDS
    return not (words - known)


def _unit(rows: numpy.ndarray) -> numpy.ndarray:
    rows = numpy.nan_to_num(rows)
    norms = numpy.linalg.norm(rows, axis=1, keepdims=True)
    return numpy.divide(rows, norms, out=numpy.zeros_like(rows), where=norms > 0)
