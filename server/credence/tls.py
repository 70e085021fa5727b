"""One verifying TLS context per process, shared by every outbound HTTP client."""

from __future__ import annotations

import functools
import ssl

# Bound at import: the test suite routes httpx's own default builder back to tls_context().
from httpx import create_ssl_context


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default verifying context, built once: loading the CA bundle costs ~30 ms of CPU,
    which every new client (each push, ntfy or test send) would otherwise pay again."""
    return create_ssl_context()
