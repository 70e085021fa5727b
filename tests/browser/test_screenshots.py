"""Screenshots of the review view on a phone and a desktop, light and dark (for the README)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.browser import seed
from tests.browser.conftest import DESKTOP, PHONE, SCREENSHOTS, open_app

SIZES = {"phone": PHONE, "desktop": DESKTOP}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_review_view_screenshot(chromium: Any, server, admin, seeded, size, scheme) -> None:
    phone = size == "phone"
    app = open_app(
        chromium,
        server,
        admin,
        seeded,
        viewport=SIZES[size],
        color_scheme=scheme,
        reduced_motion="no-preference",
        has_touch=phone,
        is_mobile=phone,
        device_scale_factor=2 if phone else 1,
    )
    try:
        # A fixed page clock makes "Proposed 5 minutes ago" (and so the PNG) the same every run.
        created = seed.belief(admin, seeded["backoff"])["created_at"]
        app.page.clock.set_fixed_time(datetime.fromisoformat(created) + timedelta(minutes=5))
        app.pair(f"/?belief={seeded['backoff']}")
        card = app.top_card()
        card.locator(".target .diff").wait_for()
        app.page.wait_for_function("() => document.querySelectorAll('#stack .card').length === 3")
        app.page.evaluate("() => document.getElementById('toast').hidden = true")
        app.page.wait_for_timeout(400)  # let the stack settle
        path = app.shoot(f"review-{size}-{scheme}")
        assert path.parent == SCREENSHOTS and path.stat().st_size > 10_000
        assert app.page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches") == (
            scheme == "dark"
        )
        app.watch.check()
    finally:
        app.context.close()
