"""`credence agents create|list` and `credence --version`, on either engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from credence import __version__
from credence.cli import main
from credence.settings import Settings
from tests.livesrv import store_flags


@pytest.fixture
def where(tmp_path: Path, database_url: str | None) -> Settings:
    """The data dir (and, on PostgreSQL, the database) the commands use."""
    return Settings(data_dir=tmp_path / "data", database_url=database_url)


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"credence {__version__}"


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)
def test_agents_create_then_list(where: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    flags = store_flags(where)
    assert main(["agents", "create", "ada", "--name", "Ada L", "--role", "triage", *flags]) == 0
    assert capsys.readouterr().out.strip() == "Created agent ada (Ada L)."
    assert main(["agents", "create", "bob", "--name", "Bob", *flags]) == 0
    capsys.readouterr()
    assert main(["agents", "list", *flags]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "ada  Ada L  roles triage  reflection on",
        "bob  Bob  roles -  reflection on",
    ]
    assert main(["agents", "create", "ada", "--name", "Again", *flags]) == 2
    assert "agent 'ada' already exists" in capsys.readouterr().err


def test_agents_create_names_a_bad_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agents", "create", "Not A Slug", "--name", "x", "--data", str(tmp_path)]) == 2
    assert "ID must be a slug" in capsys.readouterr().err
    assert not (tmp_path / "credence.sqlite3").exists()


def test_agents_list_on_a_missing_data_dir_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["agents", "list", "--data", str(tmp_path / "nowhere")]) == 2
    assert "no Credence data" in capsys.readouterr().err
