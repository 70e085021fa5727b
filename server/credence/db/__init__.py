"""Credence db package."""
