"""Credence reflection package."""
