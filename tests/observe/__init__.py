"""Tests of credence.observe: metrics and traces."""
