"""Benchmark: the PWA's app-shell size, and the time until the first card is visible (loopback)."""

from __future__ import annotations

import os
import re
import statistics
import tempfile
from pathlib import Path

import httpx
from harness import seed
from harness.browser import CHROMIUM, CHROMIUM_ARGS, PHONE
from harness.httpload import ServerProcess, create_key

ROOT = Path(__file__).resolve().parent.parent
PWA = ROOT / "pwa"
RUNS = 7
SHELL_TARGET_KB = 100.0
FIRST_CARD_TARGET_MS = 1000.0
SEED_AUTH = """async ([key, info]) => {
  await import("/js/db.js");
  await self.CredenceDB.set("auth", { key, info, paired_at: new Date().toISOString() });
}"""
FIRST_CARD = """() => {
  const [mark] = performance.getEntriesByName("credence:first-card");
  return mark ? mark.startTime : null;
}"""


STATIC_IMPORT = re.compile(r'^import\s(?:[^"]*?\sfrom\s)?"(\./[^"]+)";', re.MULTILINE)


def shell_files() -> list[Path]:
    """The app shell: the HTML, the CSS and every module app.js imports statically (what the
    first card needs). Views loaded with import() when first opened are not in it, nor is the
    worker script (pwa/sw.js), which runs beside the page."""
    files = {PWA / "index.html", PWA / "styles.css"}
    todo = [PWA / "app.js"]
    while todo:
        module = todo.pop()
        if module in files:
            continue
        files.add(module)
        todo += [
            (module.parent / path).resolve() for path in STATIC_IMPORT.findall(module.read_text())
        ]
    return sorted(files)


def shell_kb() -> float:
    """Uncompressed size of the app shell in KB (1000 bytes)."""
    return sum(p.stat().st_size for p in shell_files()) / 1000


def _figure(name: str, unit: str, values: list[float], target: float) -> dict:
    ordered = sorted(values)
    quantiles = statistics.quantiles(ordered, n=10) if len(ordered) > 1 else ordered * 9
    return {
        "name": name,
        "unit": unit,
        "median": statistics.median(ordered),
        "p10": quantiles[0],
        "p90": quantiles[-1],
        "runs": len(ordered),
        "target": target,
        "better": "lower",
    }


def first_card_times(runs: int = RUNS) -> tuple[list[float], list[float]]:
    """(cold, warm) ms from navigation start to the first rendered card, one fresh browser
    profile per run: cold = no cache and no service worker; warm = the reload after it."""
    from playwright.sync_api import sync_playwright

    cold: list[float] = []
    warm: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        admin_key = create_key(data_dir, "admin")
        with ServerProcess(data_dir).start() as server:
            auth = {"Authorization": f"Bearer {admin_key}"}
            with httpx.Client(base_url=server.url, headers=auth, timeout=30) as admin:
                seed.seed_demo(admin)
                created = admin.post("/api/v1/keys", json={"scope": "reviewer"}).json()
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                for _ in range(runs):
                    context = browser.new_context(viewport=PHONE)
                    page = context.new_page()
                    page.goto(f"{server.url}/healthz")
                    page.evaluate(SEED_AUTH, [created["key"], created["info"]])
                    for times in (cold, warm):
                        if times is cold:
                            page.goto(f"{server.url}/")
                        else:
                            page.wait_for_function("() => navigator.serviceWorker.controller")
                            page.reload()
                        page.locator("#stack .card.depth-0").wait_for(state="visible")
                        times.append(page.evaluate(FIRST_CARD))
                    context.close()
                browser.close()
    return cold, warm


def measure() -> list[dict]:
    """Shell size, and cold and warm time to the first visible card."""
    size = shell_kb()
    figures = [_figure("pwa_shell_size", "KB", [size], SHELL_TARGET_KB)]
    lazy = sum(p.stat().st_size for p in (PWA / "js").glob("*.js") if p not in shell_files())
    print(f"(views loaded on first use: {lazy / 1000:.1f} KB more)")
    if not os.path.exists(CHROMIUM):
        return figures
    cold, warm = first_card_times()
    figures.append(_figure("pwa_first_card_cold", "ms", cold, FIRST_CARD_TARGET_MS))
    figures.append(_figure("pwa_first_card_warm", "ms", warm, FIRST_CARD_TARGET_MS))
    return figures


if __name__ == "__main__":
    for figure in measure():
        print(figure)
