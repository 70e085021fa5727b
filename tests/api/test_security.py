"""OPTIONS answers from the app's own route table; the security headers on every response."""

from __future__ import annotations

import asyncio
from pathlib import Path

from credence.api.security import HEADERS, add_security_headers, allowed_methods, route_patterns
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


def _sent(path: str, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    message = {"type": "http.response.start", "status": 200, "headers": headers}
    asyncio.run(add_security_headers(message, {"type": "http", "path": path}))  # type: ignore[arg-type]
    return message["headers"]  # type: ignore[return-value]


def test_security_headers_are_added_once_and_a_response_s_own_are_kept() -> None:
    own_csp = (b"content-security-policy", b"default-src 'none'")
    sent = _sent("/app.js", [(b"content-type", b"text/javascript"), own_csp])
    names = [name for name, _ in sent]
    assert len(names) == len(set(names))
    assert own_csp in sent and (b"x-frame-options", b"DENY") in sent
    assert set(names) == {b"content-type", *(n.lower().encode() for n in HEADERS)}


def test_api_responses_are_never_cached_whatever_the_handler_set() -> None:
    sent = _sent("/api/v1/agents", [(b"Cache-Control", b"max-age=60"), (b"etag", b'"3"')])
    assert [value for name, value in sent if name.lower() == b"cache-control"] == [b"no-store"]
    assert (b"etag", b'"3"') in sent
    assert (b"cache-control", b"max-age=60") in _sent("/sw.js", [(b"cache-control", b"max-age=60")])
