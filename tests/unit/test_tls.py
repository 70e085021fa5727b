"""The one TLS context outbound clients share: verifying, and built once per process."""

from __future__ import annotations

import ssl

from credence.notify.endpoints import EndpointPolicy, push_client
from credence.tls import tls_context


def test_the_shared_context_verifies_certificates_and_host_names() -> None:
    context = tls_context()
    assert context is tls_context()
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname is True
    assert context.cert_store_stats()["x509_ca"] > 0


async def test_the_push_client_dials_with_the_shared_context() -> None:
    client = push_client(EndpointPolicy())
    try:
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert pool._ssl_context is tls_context()
    finally:
        await client.aclose()
