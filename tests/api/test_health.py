"""The probes: /healthz names the schema version the store is at."""

from __future__ import annotations

import httpx

from credence.db.health import latest_schema_version
from tests.livesrv import LiveServer


def test_healthz_reports_the_schema_version(server: LiveServer) -> None:
    answer = httpx.get(f"{server.url}/healthz", timeout=10)
    assert answer.status_code == 200
    expected = latest_schema_version(server.services.store.dialect)
    assert answer.json() == {"status": "ok", "schema_version": expected}
