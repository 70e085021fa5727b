"""Credence memory package."""
