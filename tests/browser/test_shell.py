"""The installable shell: manifest, icons, MIME types, cache headers, and the worker's cache."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path
from typing import Any

from tests.browser.conftest import App, open_app
from tests.livesrv import LiveServer, running

PWA = Path(__file__).resolve().parents[2] / "pwa"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_manifest_makes_the_app_installable() -> None:
    manifest = json.loads((PWA / "manifest.webmanifest").read_text())
    assert manifest["name"] and manifest["short_name"] == "Credence"
    assert manifest["start_url"] == "/" and manifest["scope"] == "/"
    assert manifest["display"] == "standalone"
    assert manifest["theme_color"].startswith("#")
    sizes = {(icon["sizes"], icon.get("purpose", "any")) for icon in manifest["icons"]}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= sizes
    for icon in manifest["icons"]:
        width, height = png_size(PWA / icon["src"].lstrip("/"))
        assert f"{width}x{height}" == icon["sizes"]


def test_files_are_served_with_their_types_and_revalidate(server: LiveServer) -> None:
    with server.client() as browser:
        expected = {
            "/": "text/html",
            "/?belief=b_0000000000000000000000000": "text/html",
            "/app.js": "javascript",
            "/sw.js": "javascript",
            "/styles.css": "text/css",
            "/manifest.webmanifest": "application/manifest+json",
            "/icons/maskable-512.png": "image/png",
        }
        for path, kind in expected.items():
            response = browser.get(path)
            assert response.status_code == 200, path
            assert kind in response.headers["content-type"], path
            assert response.headers["cache-control"] == "no-cache", path
            assert "default-src 'self'" in response.headers["content-security-policy"]
        etag = browser.get("/app.js").headers["etag"]
        assert browser.get("/app.js", headers={"If-None-Match": etag}).status_code == 304


def test_no_inline_script_or_style_in_the_html() -> None:
    html = (PWA / "index.html").read_text()
    assert "<style" not in html and " style=" not in html
    assert html.count("<script") == 1 and 'src="/app.js"' in html


def test_the_worker_caches_the_whole_shell(app: App, chromium: Any) -> None:
    app.pair()
    app.page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    cached = app.page.evaluate(
        "async () => (await (await caches.open('credence-shell-v1')).keys())"
        ".map((r) => new URL(r.url).pathname)"
    )
    on_disk = {"/", "/app.js", "/styles.css", "/manifest.webmanifest"}
    on_disk |= {f"/js/{p.name}" for p in (PWA / "js").glob("*.js")}
    on_disk |= {f"/icons/{p.name}" for p in (PWA / "icons").glob("*.png")}
    assert on_disk <= set(cached), on_disk - set(cached)


def test_text_assets_are_served_gzipped(server: LiveServer) -> None:
    with server.client() as browser:
        for path, name in [
            ("/", "index.html"),
            ("/app.js", "app.js"),
            ("/styles.css", "styles.css"),
            ("/js/review.js", "js/review.js"),
            ("/sw.js", "sw.js"),
        ]:
            response = browser.get(path, headers={"Accept-Encoding": "gzip"})
            assert response.headers.get("content-encoding") == "gzip", path
            assert response.content == (PWA / name).read_bytes(), path  # decoded by httpx
            plain = browser.get(path, headers={"Accept-Encoding": "identity"})
            assert "content-encoding" not in plain.headers, path
        api = browser.get("/api/v1/openapi.json", headers={"Accept-Encoding": "gzip"})
        assert "content-encoding" not in api.headers


def test_the_browser_receives_the_shell_compressed(app: App) -> None:
    app.page.goto(app.url)
    app.page.wait_for_load_state("load")
    sizes = app.page.evaluate(
        "() => performance.getEntriesByType('resource').concat(performance.getEntriesByType"
        "('navigation')).filter((e) => /\\/(styles\\.css|app\\.js|js\\/review\\.js)?$/.test("
        "new URL(e.name).pathname)).map((e) => [new URL(e.name).pathname, e.encodedBodySize,"
        " e.decodedBodySize])"
    )
    assert {path for path, _, _ in sizes} >= {"/", "/styles.css", "/app.js", "/js/review.js"}
    for path, encoded, decoded in sizes:
        assert 0 < encoded < decoded * 0.5, (path, encoded, decoded)


def test_the_manifest_follows_the_page_and_has_screenshots_and_shortcuts() -> None:
    manifest = json.loads((PWA / "manifest.webmanifest").read_text())
    html = (PWA / "index.html").read_text()
    light = manifest["theme_color"]
    dark = manifest["user_preferences"]["color_scheme_dark"]["theme_color"]
    assert f'content="{light}" media="(prefers-color-scheme: light)"' in html
    assert f'content="{dark}" media="(prefers-color-scheme: dark)"' in html
    factors = set()
    for shot in manifest["screenshots"]:
        width, height = png_size(PWA / shot["src"].lstrip("/"))
        assert f"{width}x{height}" == shot["sizes"] and shot["label"]
        factors.add(shot["form_factor"])
    assert factors == {"narrow", "wide"}
    urls = [shortcut["url"] for shortcut in manifest["shortcuts"]]
    assert urls == ["/", "/?view=memory", "/?view=history"]


def test_the_worker_answers_from_cache_and_revalidates_behind(chromium: Any, settings, tmp_path):
    """Stale-while-revalidate: a changed file shows on the load after next, never stalls one."""
    pwa = tmp_path / "pwa"
    shutil.copytree(PWA, pwa)
    with running(settings, pwa_dir=pwa) as server:
        app = open_app(chromium, server, None, {})
        try:
            app.page.goto(server.url)
            app.page.wait_for_function("() => navigator.serviceWorker.controller !== null")
            cached_css = (
                "async () => (await (await caches.open('credence-shell-v1'))"
                ".match('/styles.css'))?.text()"
            )
            app.page.wait_for_function(f"async () => Boolean(await ({cached_css})())")
            with (pwa / "styles.css").open("a") as css:
                css.write("\n/* v2 */\n")
            fetch_css = "async () => (await fetch('/styles.css')).text()"
            assert "v2" not in app.page.evaluate(fetch_css)  # the cached copy, at once
            app.page.wait_for_function(f"async () => (await ({cached_css})()).includes('v2')")
            # The revalidated copy on a later load. A revalidation the first page load started
            # may land just after (with the old text), so a load or two may pass first.
            app.page.wait_for_function(f"async () => (await ({fetch_css})()).includes('v2')")
            app.watch.check()
        finally:
            app.context.close()
