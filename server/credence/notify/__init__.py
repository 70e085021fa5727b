"""Credence notify package."""
