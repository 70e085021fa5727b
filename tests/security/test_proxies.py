"""X-Forwarded-For is believed only from CREDENCE_TRUSTED_PROXIES: it cannot dodge rate limits."""

from __future__ import annotations

import httpx
import pytest

from credence.serving import trusted_proxies
from credence.settings import Settings, SettingsError
from tests.security.rawhttp import served

ATTEMPTS = 6
LIMIT = "3"


def _pair_with_rotating_forwarded_for(url: str) -> list[int]:
    statuses = []
    with httpx.Client(base_url=url, timeout=10) as client:
        for n in range(ATTEMPTS):
            response = client.post(
                "/api/v1/pair",
                json={"code": "not-a-real-code"},
                headers={"X-Forwarded-For": f"203.0.113.{n + 1}", "X-Forwarded-Proto": "https"},
            )
            statuses.append(response.status_code)
    return statuses


def test_rotating_forwarded_for_from_loopback_does_not_bypass_the_pairing_limit(tmp_path):
    with served(tmp_path / "data", CREDENCE_PAIR_RATE_LIMIT_PER_MINUTE=LIMIT) as run:
        statuses = _pair_with_rotating_forwarded_for(run.url)
    assert statuses[:3] == [410, 410, 410]  # an unknown code, while the bucket lasts
    assert statuses[3:] == [429] * (ATTEMPTS - 3)


@pytest.mark.parametrize("proxies", ["127.0.0.1", "10.0.0.0/8, 127.0.0.0/8"])
def test_a_trusted_proxys_forwarded_for_is_honoured(tmp_path, proxies: str):
    env = {"CREDENCE_PAIR_RATE_LIMIT_PER_MINUTE": LIMIT, "CREDENCE_TRUSTED_PROXIES": proxies}
    with served(tmp_path / "data", **env) as run:
        statuses = _pair_with_rotating_forwarded_for(run.url)
    assert statuses == [410] * ATTEMPTS  # each forwarded client has a bucket of its own


def test_trusted_proxies_must_be_addresses_or_networks():
    assert trusted_proxies(Settings()) == ""
    assert (
        trusted_proxies(Settings(trusted_proxies=("10.0.0.1", "fd00::/8"))) == "10.0.0.1,fd00::/8"
    )
    with pytest.raises(SettingsError, match="CREDENCE_TRUSTED_PROXIES"):
        trusted_proxies(Settings(trusted_proxies=("proxy.internal",)))
