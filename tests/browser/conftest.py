"""Browser fixtures: Debian's Chromium, driven by Playwright, against a real Credence server."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest
from harness import seed
from harness.browser import CHROMIUM, CHROMIUM_ARGS, DESKTOP

from credence.settings import Settings
from tests.browser.ensure_chromium import in_ci
from tests.livesrv import LiveServer

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
# Chromium logs every failed or non-2xx fetch as a console error of this shape; tests that
# provoke one (a 412, an offline fetch) declare it, anything else fails the test.
NETWORK_LOG = re.compile(
    r"^Failed to load resource: (?:the server responded with a status of (\d{3})|net::(\w+))"
)
CSP_PROBE = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.__credenceCsp({
    directive: event.violatedDirective, blocked: event.blockedURI,
    source: event.sourceFile, line: event.lineNumber, sample: event.sample,
  });
});
"""


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """A fresh data dir; the loopback fake push service is admitted by PUSH_ALLOWED_HOSTS."""
    return Settings(data_dir=tmp_path / "data", scheduler=False, push_allowed_hosts=("127.0.0.1",))


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``browser`` marker (``make test-fast`` deselects it)."""
    config.addinivalue_line("markers", "browser: drives the PWA in headless Chromium")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the Chromium fixture is a browser test."""
    for item in items:
        if "chromium" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


def without_chromium(environ: Mapping[str, str]) -> NoReturn:
    """End a browser test that has no Chromium: a failure under CI, a skip elsewhere."""
    reason = f"{CHROMIUM} is not installed (tests/browser/ensure_chromium.py installs it)"
    if in_ci(environ):
        pytest.fail(f"{reason}; CI is set, so the browser tests must run", pytrace=False)
    pytest.skip(reason)


# Module scope, not session: between its sync calls Playwright marks its event loop as running
# in this thread, which would break every asyncio test collected after the browser tests.
@pytest.fixture(scope="module")
def playwright_driver() -> Iterator[Any]:
    """Playwright itself; skips when Debian's chromium is not installed, fails under CI."""
    if not os.path.exists(CHROMIUM):
        without_chromium(os.environ)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="module")
def chromium(playwright_driver: Any) -> Iterator[Any]:
    """One headless Chromium per test module (its contexts are incognito-like)."""
    browser = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@dataclass
class Watch:
    """What a page said that it should not have: console errors, page errors, CSP violations."""

    console_errors: list[str] = field(default_factory=list)
    network_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    csp_violations: list[dict] = field(default_factory=list)
    expected_network: set[str] = field(default_factory=set)

    def on_console(self, message: Any) -> None:
        """Sort console errors into network logs (statuses) and real errors."""
        if message.type != "error":
            return
        match = NETWORK_LOG.match(message.text)
        if match:
            self.network_errors.append(match.group(1) or match.group(2))
        else:
            self.console_errors.append(message.text)

    def expect_network(self, *codes: str) -> None:
        """Declare the HTTP statuses or net:: errors this test provokes on purpose."""
        self.expected_network.update(codes)

    def check(self) -> None:
        """Fail on any console error, page error, CSP violation or unexpected network log."""
        assert self.page_errors == [], self.page_errors
        assert self.console_errors == [], self.console_errors
        assert self.csp_violations == [], self.csp_violations
        unexpected = [code for code in self.network_errors if code not in self.expected_network]
        assert unexpected == [], f"unexpected failed requests: {unexpected}"


@dataclass
class App:
    """A browser context on the PWA of a live server, with the watch on."""

    server: LiveServer
    admin: httpx.Client
    context: Any
    page: Any
    watch: Watch
    ids: dict[str, str]

    @property
    def url(self) -> str:
        """The server's base URL."""
        return self.server.url

    def pair(self, path: str = "") -> None:
        """Pair through the URL a `credence pair` code makes, and wait for the review view."""
        code = seed.pairing_code(self.admin)
        self.page.goto(f"{self.url}/?pair={code}")
        self.page.wait_for_selector("#view-review:not([hidden])")
        if path:
            self.page.goto(f"{self.url}{path}")

    def top_card(self) -> Any:
        """The top card of the stack, once it is rendered."""
        card = self.page.locator("#stack .card.depth-0")
        card.wait_for()
        return card

    def top_id(self) -> str:
        """The belief id on the top card."""
        return self.top_card().get_attribute("data-belief-id")

    def wait_top_not(self, belief_id: str) -> None:
        """Wait until the top card is some other belief (or the stack is empty)."""
        self.page.wait_for_function(
            "(id) => { const c = document.querySelector('#stack .card.depth-0');"
            " return !c || c.dataset.beliefId !== id; }",
            arg=belief_id,
        )

    def status(self, belief_id: str) -> str:
        """The belief's status on the server."""
        return seed.belief(self.admin, belief_id)["status"]

    def wait_status(self, belief_id: str, status: str, timeout_s: float = 10.0) -> dict:
        """Poll the server until the belief has ``status``; returns it."""
        import time

        deadline = time.monotonic() + timeout_s
        while True:
            current = seed.belief(self.admin, belief_id)
            if current["status"] == status or time.monotonic() > deadline:
                assert current["status"] == status, current
                return current
            time.sleep(0.05)

    def shoot(self, name: str) -> bytes:
        """A screenshot of the page; saved under tests/browser/screenshots/ (the README's) only
        when CREDENCE_SCREENSHOTS=write (`make screenshots`), so a test run rewrites no file."""
        png = self.page.screenshot()
        if os.environ.get("CREDENCE_SCREENSHOTS") == "write":
            SCREENSHOTS.mkdir(exist_ok=True)
            (SCREENSHOTS / f"{name}.png").write_bytes(png)
        return png


def open_app(
    chromium: Any,
    server: LiveServer,
    admin: httpx.Client,
    ids: dict[str, str],
    *,
    context: Any = None,
    **context_options: Any,
) -> App:
    """A fresh context (or the given one) on ``server`` with console, error and CSP collectors."""
    options = {"viewport": DESKTOP, "reduced_motion": "reduce", **context_options}
    context = context or chromium.new_context(**options)
    watch = Watch()
    context.expose_binding(
        "__credenceCsp", lambda _source, detail: watch.csp_violations.append(detail)
    )
    context.add_init_script(CSP_PROBE)
    page = context.pages[0] if context.pages else context.new_page()
    page.on("console", watch.on_console)
    page.on("pageerror", lambda error: watch.page_errors.append(str(error)))
    page.set_default_timeout(10_000)
    return App(server=server, admin=admin, context=context, page=page, watch=watch, ids=ids)


def persistent_context(playwright_driver: Any, user_data_dir: Path, **options: Any) -> Any:
    """A Chromium profile on disk, like a real browser's (incognito lacks the Push API)."""
    return playwright_driver.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=CHROMIUM,
        args=CHROMIUM_ARGS,
        viewport=DESKTOP,
        reduced_motion="reduce",
        **options,
    )


@pytest.fixture
def seeded(admin: httpx.Client) -> dict[str, str]:
    """The demo review pile (see seed.seed_demo)."""
    return seed.seed_demo(admin)


@pytest.fixture
def app(chromium: Any, server: LiveServer, admin: httpx.Client, seeded: dict) -> Iterator[App]:
    """The PWA in a desktop-sized context, not yet paired; checked for errors at the end."""
    opened = open_app(chromium, server, admin, seeded)
    try:
        yield opened
        opened.watch.check()
    finally:
        opened.context.close()
