"""The PWA folder serves only the app's own assets, never the scripts kept beside them."""

from __future__ import annotations

import pytest

from credence.app import PWA_DIR

ASSETS = sorted(
    "/" + path.relative_to(PWA_DIR).as_posix()
    for path in PWA_DIR.rglob("*")
    if path.is_file() and path.suffix != ".py"
)


def test_the_pwa_folder_holds_a_non_asset_to_refuse() -> None:
    assert (PWA_DIR / "icons" / "make_icons.py").is_file()
    assert {"/index.html", "/app.js", "/sw.js", "/icons/icon-192.png"} <= set(ASSETS)


@pytest.mark.parametrize("path", ["/icons/make_icons.py", "/icons/make_icons.py?x=1"])
def test_the_icon_script_is_404(server, path: str) -> None:
    with server.client() as client:
        response = client.get(path)
    assert response.status_code == 404
    assert b"make_icons" not in response.content and b"import" not in response.content


def test_other_non_asset_files_are_404(server) -> None:
    with server.client() as client:
        for path in ("/icons/", "/js", "/.git/config", "/icons/.hidden.png", "/README"):
            assert client.get(path).status_code == 404, path


def test_every_real_asset_is_200(server) -> None:
    with server.client() as client:
        for path in ["/", *ASSETS]:
            response = client.get(path)
            assert response.status_code == 200, path
            assert (
                response.content
                == ((PWA_DIR / "index.html") if path == "/" else PWA_DIR / path[1:]).read_bytes()
            )
