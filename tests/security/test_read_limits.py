"""Reads have a per-key budget of their own, a key's expensive reads are bounded in number, and
CREDENCE_RATE_LIMIT_PER_MINUTE=0 still turns every limit off."""

from __future__ import annotations

import threading
from pathlib import Path

from harness.fakes.embed import FakeEmbeddings

from credence.settings import Settings
from tests.helpers import make_agent
from tests.livesrv import cli_key, running

HELD = "held-query"


def _statuses(settings: Settings, count: int) -> tuple[list[int], int]:
    """``count`` GETs from one agent key, then one from another key's."""
    with running(settings) as live:
        with live.client(cli_key(settings, "admin")) as admin:
            make_agent(admin, "ada")
            make_agent(admin, "bob")
        with live.client(cli_key(settings, "agent", "ada")) as ada:
            statuses = [ada.get("/api/v1/agents/ada").status_code for _ in range(count)]
        with live.client(cli_key(settings, "agent", "bob")) as bob:
            other = bob.get("/api/v1/agents/bob").status_code
    return statuses, other


def test_reads_spend_a_per_key_budget_of_their_own(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", scheduler=False, read_rate_limit_per_minute=5)
    statuses, other = _statuses(settings, 6)
    assert statuses == [200] * 5 + [429]
    assert other == 200


def test_zero_rate_limit_turns_the_read_budget_off_too(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        scheduler=False,
        rate_limit_per_minute=0,
        read_rate_limit_per_minute=5,
    )
    statuses, _ = _statuses(settings, 8)
    assert statuses == [200] * 8


def test_a_key_over_its_concurrent_context_reads_is_refused_at_once(
    tmp_path: Path, fake_embed: FakeEmbeddings
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        scheduler=False,
        embed_url=fake_embed.url,
        embed_model="fake",
        read_concurrency_per_key=2,
    )
    with running(settings) as live:
        with live.client(cli_key(settings, "admin")) as admin:
            make_agent(admin, "ada")
            make_agent(admin, "bob")
        ada_key = cli_key(settings, "agent", "ada")
        fake_embed.hold_on(HELD)
        held: list[int] = []

        def slow_read() -> None:
            with live.client(ada_key) as ada:
                path = "/api/v1/agents/ada/memory/context"
                held.append(ada.get(path, params={"query": HELD}).status_code)

        readers = [threading.Thread(target=slow_read) for _ in range(2)]
        for reader in readers:
            reader.start()
        # Both held reads must be in flight before the third is sent: probing earlier took a
        # slot that a held read arriving late was then refused, under load (a flaky failure).
        try:
            assert fake_embed.wait_holding(2, 30)
            with live.client(ada_key) as ada:
                third = ada.get("/api/v1/agents/ada/memory/context", params={"query": "pdf"})
            with live.client(cli_key(settings, "agent", "bob")) as bob:
                others = bob.get("/api/v1/agents/bob/memory/context", params={"query": "pdf"})
        finally:
            fake_embed.release()
            for reader in readers:
                reader.join(30)
    assert third.status_code == 429 and third.headers["retry-after"] == "1"
    assert others.status_code == 200  # another key is not held back by ada's flood
    assert held == [200, 200]
