"""Regression tests for the security review's findings."""
