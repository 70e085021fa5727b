"""Credence: a memory-review service for AI agents."""

__version__ = "0.1.0"
