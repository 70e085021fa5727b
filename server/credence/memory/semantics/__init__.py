"""Meaning: the sentence model, pair judgements and the gate's text analysis."""
