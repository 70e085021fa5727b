"""Time-sortable identifiers: a short prefix plus a ULID-style body, increasing per process."""

from __future__ import annotations

import os
import threading
import time

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
_RANDOM_BITS = 80
_last = 0
_lock = threading.Lock()


def _next_value() -> int:
    """A 128-bit value: milliseconds, then 80 random bits; strictly above the last one made.

    Two ids made in one millisecond would otherwise sort at random, and "oldest first" (job
    claims, listings) would not be the order things happened in (ULID's monotonic mode).
    """
    global _last
    value = (time.time_ns() // 1_000_000) << _RANDOM_BITS | int.from_bytes(os.urandom(10), "big")
    with _lock:
        if value <= _last:
            value = _last + 1
        _last = value
    return value


def new_id(prefix: str) -> str:
    """Return ``prefix_`` followed by 26 lowercase Crockford base32 chars, sortable by time."""
    value = _next_value()
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return f"{prefix}_{''.join(reversed(chars))}"
