"""`credence seed` and `credence reflect`, run through the real command-line entry point."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psycopg
import pytest

from credence.cli import main
from credence.settings import Settings
from tests.livesrv import store_flags

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "reflection.json"


@pytest.fixture
def where(tmp_path: Path, database_url: str | None) -> Settings:
    """The data dir (and, on PostgreSQL, the database) the commands use."""
    return Settings(data_dir=tmp_path / "data", database_url=database_url)


def _rows(where: Settings, sql: str) -> list[tuple]:
    if where.database_url:
        with psycopg.connect(where.database_url) as pg:
            return pg.execute(sql).fetchall()
    conn = sqlite3.connect(Path(where.data_dir) / "credence.sqlite3")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_seeding_the_example_twice_changes_nothing_the_second_time(tmp_path, capsys, where) -> None:
    flags = store_flags(where)
    assert main(["seed", str(EXAMPLE), *flags]) == 0
    first = capsys.readouterr().out.splitlines()
    assert "agent support-bot: created" in first and "agent research-agent: created" in first
    assert "wake research-own-schedule: created" in first
    assert main(["seed", str(EXAMPLE), *flags]) == 0
    second = capsys.readouterr().out.splitlines()
    assert second and all(line.split(" (")[0].endswith(": unchanged") for line in second)
    agents = dict(_rows(where, "SELECT id, settings FROM agents"))
    assert json.loads(agents["support-bot"])["recall_queries"][0].startswith("the user")
    # The nightly wake the migration made covers every agent: the example never narrows it.
    assert _rows(where, "SELECT agent_ids FROM wakes WHERE id = 'reflection-nightly'") == [(None,)]
    wakes = dict(_rows(where, "SELECT id, cron FROM wakes"))
    assert wakes == {
        "reflection-nightly": "0 3 * * *",
        "research-own-schedule": None,
        "reflection-episodes-ready": None,
    }


def test_seed_updates_what_changed(tmp_path, capsys, where) -> None:
    flags = store_flags(where)
    manifest = tmp_path / "m.json"
    body = {"agents": [{"id": "ada", "name": "Ada"}], "wakes": []}
    manifest.write_text(json.dumps(body))
    assert main(["seed", str(manifest), *flags]) == 0
    body["agents"][0]["name"] = "Ada Lovelace"
    body["$comment"] = "annotations are ignored"
    manifest.write_text(json.dumps(body))
    assert main(["seed", str(manifest), *flags]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "agent ada: updated"
    assert _rows(where, "SELECT name FROM agents") == [("Ada Lovelace",)]


def _wake_manifest(path: Path, agent_ids: list[str]) -> Path:
    agents = [{"id": agent_id, "name": agent_id.title()} for agent_id in ("ada", "bob", "cy")]
    wake = {"id": "w", "kind": "cron", "cron": "0 4 * * *", "agent_ids": agent_ids}
    path.write_text(json.dumps({"agents": agents, "wakes": [wake]}))
    return path


def test_seed_merges_a_wakes_agents_and_says_so(tmp_path, capsys, where) -> None:
    flags = store_flags(where)
    assert main(["seed", str(_wake_manifest(tmp_path / "a.json", ["ada"])), *flags]) == 0
    capsys.readouterr()
    assert main(["seed", str(_wake_manifest(tmp_path / "b.json", ["bob"])), *flags]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line == "wake w: updated (agent_ids: [ada] -> [ada, bob])"
    assert _rows(where, "SELECT agent_ids FROM wakes WHERE id = 'w'") == [('["ada", "bob"]',)]


def test_seed_keeps_a_wake_for_every_agent_unless_replaced(tmp_path, capsys, where) -> None:
    flags = store_flags(where)
    wake = {"id": "reflection-nightly", "kind": "cron", "cron": "0 3 * * *", "agent_ids": ["ada"]}
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"agents": [{"id": "ada", "name": "Ada"}], "wakes": [wake]}))
    assert main(["seed", str(manifest), *flags]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("wake reflection-nightly: updated (agent_ids: kept every agent")
    query = "SELECT agent_ids FROM wakes WHERE id = 'reflection-nightly'"
    assert _rows(where, query) == [(None,)]
    assert main(["seed", str(manifest), "--replace", *flags]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert "agent_ids: every agent -> [ada] (narrowed: --replace)" in line
    assert _rows(where, query) == [('["ada"]',)]


def test_seed_replace_narrows_a_wake_and_says_so(tmp_path, capsys, where) -> None:
    flags = store_flags(where)
    assert main(["seed", str(_wake_manifest(tmp_path / "a.json", ["ada", "bob"])), *flags]) == 0
    capsys.readouterr()
    narrow = str(_wake_manifest(tmp_path / "b.json", ["cy"]))
    assert main(["seed", narrow, "--replace", *flags]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line == "wake w: updated (agent_ids: [ada, bob] -> [cy] (narrowed: --replace))"
    assert _rows(where, "SELECT agent_ids FROM wakes WHERE id = 'w'") == [('["cy"]',)]


@pytest.mark.parametrize(
    "body",
    [
        {"agents": [{"id": "Bad Id", "name": "x"}]},
        {"agents": [{"id": "ada", "name": "x", "reflection": {"cron": "every day"}}]},
        {"wakes": [{"id": "w", "kind": "event"}]},
        {"agents": [{"id": "ada", "name": "x"}, {"id": "ada", "name": "y"}]},
        {"surprise": []},
    ],
)
def test_bad_manifests_change_nothing(tmp_path, capsys, body, where) -> None:
    flags = store_flags(where)
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"agents": [{"id": "zed", "name": "Zed"}], **body}))
    assert main(["seed", str(manifest), *flags]) == 2
    assert "error:" in capsys.readouterr().err
    if where.database_url or (Path(where.data_dir) / "credence.sqlite3").exists():
        assert _rows(where, "SELECT id FROM agents") == []


def test_reflect_runs_one_job_and_prints_it(tmp_path, capsys, where) -> None:
    flags = store_flags(where)
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"agents": [{"id": "ada", "name": "Ada"}]}))
    assert main(["seed", str(manifest), *flags]) == 0
    capsys.readouterr()
    answer = tmp_path / "answer.txt"
    answer.write_text("[]")
    code = main(["reflect", "ada", "--reflector", "stub", "--stub-output", str(answer), *flags])
    out = capsys.readouterr().out
    assert code == 0, out
    assert " succeeded (agent ada, trigger manual)" in out.splitlines()[0]
    assert "reflector stub: 0 episodes considered, 0 proposed" in out
    for step in ("pull", "propose", "check", "submit"):
        assert f"  {step}" in out
    answer.write_text("not an answer")
    code = main(["reflect", "ada", "--stub-output", str(answer), "--json", *flags])
    job = json.loads(capsys.readouterr().out)
    assert code == 1 and job["status"] == "failed" and job["error"].startswith("propose:")
    assert _rows(where, "SELECT COUNT(*) FROM jobs WHERE status = 'running'") == [(0,)]


def test_reflect_refuses_what_cannot_run(tmp_path, capsys, where) -> None:
    flags = store_flags(where)
    assert main(["reflect", "ghost", *flags]) == 2
    assert "no agent 'ghost'" in capsys.readouterr().err
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"agents": [{"id": "ada", "name": "Ada"}]}))
    main(["seed", str(manifest), *flags])
    assert main(["reflect", "ada", "--reflector", "llm", *flags]) == 2
    assert "CREDENCE_LLM_URL" in capsys.readouterr().err
    assert main(["reflect", "ada", "--now", "tomorrow", *flags]) == 2
