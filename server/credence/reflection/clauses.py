"""The sentences and clauses of an intervention, as the heuristic reflector links them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from credence.memory.semantics.tokens import analyse, jaccard
from credence.reflection.wording import is_complaint, is_one_off, main_clause_negative, tidied

_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE_BREAK = re.compile(r"\s*(?:[,;:]|\s[—–-]\s)\s*")
# Two clauses of one polarity overlapping this much say the same thing ("that's travel" /
# "those are travel costs"): short clauses, so only words that carry content count.
CLAUSE_LINK = 0.5
# "That's travel": the pointing word is not what the clause is about.
_POINTING = frozenset({"that", "this", "these", "those", "it", "there", "here", "thats", "its"})


def sentences_of(text: str) -> list[str]:
    """The sentences of ``text``, whitespace-normalised, questions included."""
    parts = (" ".join(part.split()) for part in _SENTENCE_BREAK.split(text))
    return [part for part in parts if part]


def sentence_texts(interventions: Sequence[str]) -> list[str]:
    """Every sentence of every intervention, in order: what sentence embeddings align to."""
    return [sentence for text in interventions for sentence in sentences_of(text)]


def clauses_of(text: str) -> tuple[tuple[frozenset[str], bool], ...]:
    """The clauses of ``text`` worth linking on: (content tokens, negative), without
    questions, scolding ("way too long"), and one-off scopes ("just for today")."""
    found = []
    for sentence in sentences_of(text):
        if sentence.endswith("?"):
            continue
        for part in _CLAUSE_BREAK.split(tidied(sentence)):
            clause = part.strip(" .!")
            if not clause or is_complaint(clause) or is_one_off(clause):
                continue
            tokens = analyse(clause)[1] - _POINTING
            if tokens:
                found.append((tokens, main_clause_negative(clause)))
    return tuple(found)


def clauses_link(
    a: Sequence[tuple[frozenset[str], bool]], b: Sequence[tuple[frozenset[str], bool]]
) -> bool:
    """True when a clause of ``a`` and one of ``b`` share polarity and most of their words."""
    return any(
        negative_a == negative_b and jaccard(tokens_a, tokens_b) >= CLAUSE_LINK
        for tokens_a, negative_a in a
        for tokens_b, negative_b in b
    )
