"""Benchmarks: `python -m benchmarks` runs every bench_*.py and prints one table."""
