"""The committed contract: openapi.yaml matches the app, and the README documents every setting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from credence.app import openapi_document
from credence.openapi_doc import render_openapi
from credence.settings import env_names

ROOT = Path(__file__).resolve().parents[1]


def test_openapi_yaml_matches_the_app() -> None:
    committed = (ROOT / "openapi.yaml").read_text(encoding="utf-8")
    assert committed == render_openapi(openapi_document()), (
        "openapi.yaml drifted: run `make openapi` and commit it"
    )


def test_credence_openapi_command_writes_the_same_document(tmp_path: Path) -> None:
    out = tmp_path / "openapi.yaml"
    subprocess.run(
        [sys.executable, "-m", "credence.cli", "openapi", "--output", str(out)],
        check=True,
        capture_output=True,
    )
    assert yaml.safe_load(out.read_text()) == yaml.safe_load((ROOT / "openapi.yaml").read_text())


def test_every_operation_has_an_id_and_documents_its_errors() -> None:
    document = openapi_document()
    seen = set()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            operation_id = operation.get("operationId")
            assert operation_id, f"{method} {path} has no operationId"
            assert operation_id not in seen
            seen.add(operation_id)
            statuses = set(operation["responses"])
            assert any(s.startswith("2") for s in statuses), f"{operation_id}: no success status"
            if path.startswith("/api/v1/") and operation.get("security") != []:
                assert {"400", "401"} <= statuses, f"{operation_id} does not document 400/401"


def test_readme_documents_every_setting_and_both_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make demo" in readme and "make test" in readme
    for field, variable in env_names().items():
        assert variable in readme, f"README does not document {variable} ({field})"
