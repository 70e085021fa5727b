"""Credence api package."""
