"""@hey-api/openapi-ts makes a TypeScript client of openapi.yaml that `tsc --strict` accepts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.contract.tools import HERE, OPENAPI, run_node_tool


@pytest.mark.slow
def test_the_generated_typescript_client_type_checks_with_typed_errors(tmp_path: Path) -> None:
    for name in ("flow.ts", "tsconfig.json"):
        shutil.copy(HERE / "typescript" / name, tmp_path / name)
    generated = run_node_tool(
        "openapi-ts",
        "--input",
        str(OPENAPI),
        "--output",
        str(tmp_path / "client"),
        "--client",
        "@hey-api/client-fetch",
        "--no-log-file",
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr
    types = (tmp_path / "client" / "types.gen.ts").read_text(encoding="utf-8")
    # Every documented error is the typed Problem, never `unknown`.
    assert "export type KeepBeliefErrors = {" in types
    assert "412: Problem;" in types and "current_etag?: string | null;" in types
    checked = run_node_tool("tsc", "--project", str(tmp_path / "tsconfig.json"), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout[-6000:] + checked.stderr[-2000:]
