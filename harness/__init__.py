"""What tests and benchmarks share (never shipped): loopback fakes, server runners, corpora."""
