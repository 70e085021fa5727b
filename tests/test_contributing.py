"""CONTRIBUTING.md stays true: every repository path and credence module it names exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "CONTRIBUTING.md"
PACKAGE = ROOT / "server" / "credence"
# Paths in `code` spans and in code blocks: lower-case names with a slash, or file names with a
# suffix (``000N_x.sql`` and ``DO NOTHING/UPDATE`` are not paths).
_CODE = re.compile(r"`([^`\n]+)`|^```\w*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_PATH = re.compile(r"^[a-z0-9_.][a-z0-9_./-]*$")
_SUFFIX = re.compile(r"\.(?:py|md|yaml|yml|toml|json|sql|txt|cfg)$")
_MODULE = re.compile(r"^credence(?:\.\w+)+$")
# Placeholders and what the guide names outside the repository (or made by an install).
_ELSEWHERE = (".venv/", "node_modules/")


def named() -> list[str]:
    """Every token of the guide's code spans and code blocks."""
    tokens: list[str] = []
    for span, block in _CODE.findall(GUIDE.read_text(encoding="utf-8")):
        tokens += (span or block).split()
    return tokens


PATHS = sorted({t for t in named() if _PATH.match(t) and ("/" in t or _SUFFIX.search(t))})
MODULES = sorted({t for t in named() if _MODULE.match(t)})


def test_the_guide_names_paths_and_modules() -> None:
    assert "tests/test_architecture.py" in PATHS and "memory/" in PATHS
    assert "credence.models" in MODULES


@pytest.mark.parametrize("path", PATHS)
def test_every_path_the_guide_names_exists(path: str) -> None:
    if any(marker in path for marker in _ELSEWHERE):
        return
    # The architecture map names paths inside the package; the rest are from the repo root.
    found = (ROOT / path).exists() or (PACKAGE / path).exists()
    assert found, f"CONTRIBUTING.md names {path}, which is neither in the repo nor in credence/"


@pytest.mark.parametrize("module", MODULES)
def test_every_module_the_guide_names_imports(module: str) -> None:
    assert importlib.util.find_spec(module) is not None, f"CONTRIBUTING.md names {module}"
