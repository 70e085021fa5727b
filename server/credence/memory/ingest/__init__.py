"""Ingest: episodes and turns, secret redaction and provenance."""
