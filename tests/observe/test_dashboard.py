"""deploy/grafana-credence.json queries only metrics that /metrics exposes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import msgspec

from credence.settings import Settings
from tests.livesrv import running

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana-credence.json"
SUFFIXES = ("_bucket", "_count", "_sum", "_total")


def _family(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def test_every_dashboard_query_names_an_exposed_metric(tmp_path: Path) -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    named = {_family(n) for e in exprs for n in re.findall(r"\b(?:credence|process)_[a-z_]+", e)}
    assert len(named) >= 15
    settings = Settings(data_dir=tmp_path / "data", scheduler=False)
    with running(msgspec.structs.replace(settings, metrics=True)) as live:
        httpx.get(f"{live.url}/healthz", timeout=10)
        text = httpx.get(f"{live.url}/metrics", timeout=10).text
    exposed = {_family(n) for n in re.findall(r"^# TYPE (\S+) ", text, re.M)}
    assert named <= exposed, sorted(named - exposed)
