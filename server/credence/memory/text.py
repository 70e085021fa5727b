"""Text keys for beliefs: duplicate key, content tokens, negation, overlap, canonical alignment."""

from credence.memory.statements import (
    Change,
    Statement,
    Word,
    aligned_spans,
    holds_value_change,
    is_negation,
    is_paraphrase,
    shares_core,
    slot_kind,
    statement,
    value_changes,
)
from credence.memory.tokens import (
    NEGATION_WORDS,
    STOP_WORDS,
    analyse,
    content_tokens,
    is_negative,
    jaccard,
    normalise,
    words,
)

__all__ = [
    "NEGATION_WORDS",
    "STOP_WORDS",
    "Change",
    "Statement",
    "Word",
    "aligned_spans",
    "analyse",
    "content_tokens",
    "holds_value_change",
    "is_negation",
    "is_negative",
    "is_paraphrase",
    "jaccard",
    "normalise",
    "shares_core",
    "slot_kind",
    "statement",
    "value_changes",
    "words",
]
