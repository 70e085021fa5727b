"""compose.yaml and deploy/Caddyfile: PostgreSQL, two replicas sharing only it, HTTPS in front."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
REPLICAS = ("credence-1", "credence-2")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))


def _healthcheck(service: dict[str, Any]) -> str:
    test = service["healthcheck"]["test"]
    return " ".join(test) if isinstance(test, list) else test


def test_postgres_15_or_newer_keeps_its_data_in_a_volume_and_reports_health(compose) -> None:
    postgres = compose["services"]["postgres"]
    major = int(re.fullmatch(r"postgres:(\d+)(?:[.-].*)?", postgres["image"])[1])
    assert major >= 15
    assert any(v.endswith(":/var/lib/postgresql/data") for v in postgres["volumes"])
    assert postgres["volumes"][0].split(":")[0] in compose["volumes"]
    assert "pg_isready" in _healthcheck(postgres)


def test_two_replicas_built_from_the_dockerfile_share_one_database_and_no_disk(compose) -> None:
    services = compose["services"]
    urls = set()
    for name in REPLICAS:
        replica = services[name]
        assert replica["build"] == "." and (ROOT / "Dockerfile").is_file()
        env = replica["environment"]
        urls.add(env["CREDENCE_DATABASE_URL"])
        assert env["CREDENCE_DATABASE_URL"].startswith("postgresql://")
        assert "@postgres:5432/" in env["CREDENCE_DATABASE_URL"]
        assert env["CREDENCE_PUBLIC_URL"].startswith("https://")
        assert "/readyz" in _healthcheck(replica)
        assert replica["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert not replica.get("volumes"), "replicas must not share a data volume"
        assert (
            env["CREDENCE_TRUSTED_PROXIES"]
            == (services["caddy"]["networks"]["backend"]["ipv4_address"])
        )
    assert len(urls) == 1


def test_caddy_terminates_https_and_balances_both_replicas_on_readyz(compose) -> None:
    caddy = compose["services"]["caddy"]
    assert caddy["image"].startswith("caddy:")
    assert "443:443" in caddy["ports"]
    mounted = {v.split(":")[0]: v.split(":")[1] for v in caddy["volumes"]}
    assert mounted["./deploy/Caddyfile"] == "/etc/caddy/Caddyfile"
    caddyfile = (ROOT / "deploy" / "Caddyfile").read_text(encoding="utf-8")
    upstreams = re.search(r"reverse_proxy ([^{]+)\{", caddyfile)[1].split()
    port = compose["services"][REPLICAS[0]]["environment"]["CREDENCE_PORT"]
    assert upstreams == [f"{name}:{port}" for name in REPLICAS]
    assert re.search(r"^\s*health_uri /readyz$", caddyfile, re.M)
    assert caddyfile.count("{") == caddyfile.count("}")


@pytest.mark.skipif(
    shutil.which("docker") is None
    or subprocess.run(["docker", "compose", "version"], capture_output=True).returncode != 0,
    reason="docker compose is not installed",
)
def test_docker_compose_accepts_the_file() -> None:
    env = {"POSTGRES_PASSWORD": "x", "PATH": "/usr/bin:/bin:/usr/local/bin"}
    done = subprocess.run(
        ["docker", "compose", "-f", str(ROOT / "compose.yaml"), "config", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
