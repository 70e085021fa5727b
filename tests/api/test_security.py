"""OPTIONS answers come from the running app's own route table, as the document lists them."""

from __future__ import annotations

from pathlib import Path

from credence.api.security import allowed_methods, route_patterns
from credence.app import create_app, openapi_document
from credence.settings import Settings


def test_route_table_methods_are_the_documented_ones(tmp_path: Path) -> None:
    """Every documented path answers OPTIONS with exactly its documented methods, no others."""
    app = create_app(Settings(data_dir=tmp_path), components=[])
    paths = openapi_document()["paths"]
    for path, operations in paths.items():
        concrete = path.replace("{", "x").replace("}", "")
        documented = {method.upper() for method in operations if method != "parameters"}
        assert allowed_methods(app, concrete) == tuple(sorted(documented | {"OPTIONS"})), path
    assert len(route_patterns(app)) == len(paths)


def test_undocumented_and_unknown_paths_are_left_to_the_app(tmp_path: Path) -> None:
    """The served document, the PWA's files and unknown paths get no early OPTIONS answer."""
    app = create_app(Settings(data_dir=tmp_path), components=[])
    for path in ("/api/v1/openapi.json", "/index.html", "/api/v1/nothing-here", "/schema"):
        assert allowed_methods(app, path) is None, path


def test_the_table_is_built_once_per_app(tmp_path: Path) -> None:
    """The patterns are kept with the app, so a request never rebuilds them."""
    app = create_app(Settings(data_dir=tmp_path), components=[])
    assert route_patterns(app) is route_patterns(app)
