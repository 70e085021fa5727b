"""Screenshots of the review view on a phone and a desktop, light and dark (for the README and
the manifest). A normal run compares them with the committed PNGs; `make screenshots` rewrites
them (CREDENCE_SCREENSHOTS=write)."""

from __future__ import annotations

import base64
import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from harness import seed
from harness.browser import DESKTOP, PHONE

from tests.browser.conftest import SCREENSHOTS, open_app

SIZES = {"phone": PHONE, "desktop": DESKTOP}
MANIFEST_SHOTS = Path(__file__).resolve().parents[2] / "pwa" / "screenshots"
# Share of pixels that differ by more than a little in any channel, decoded by the browser.
PIXEL_DIFF = """async ([a, b]) => {
  const load = async (data) => {
    const img = new Image();
    img.src = `data:image/png;base64,${data}`;
    await img.decode();
    const canvas = new OffscreenCanvas(img.width, img.height);
    const context = canvas.getContext("2d");
    context.drawImage(img, 0, 0);
    return context.getImageData(0, 0, img.width, img.height);
  };
  const [x, y] = [await load(a), await load(b)];
  if (x.width !== y.width || x.height !== y.height) return 1;
  let differ = 0;
  for (let i = 0; i < x.data.length; i += 4) {
    for (let c = 0; c < 3; c++) {
      if (Math.abs(x.data[i + c] - y.data[i + c]) > 24) { differ++; break; }
    }
  }
  return differ / (x.width * x.height);
}"""


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
        name = f"review-{size}-{scheme}"
        png = app.shoot(name)
        assert app.page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches") == (
            scheme == "dark"
        )
        committed = SCREENSHOTS / f"{name}.png"
        if os.environ.get("CREDENCE_SCREENSHOTS") == "write":
            if scheme == "light":
                shutil.copyfile(committed, MANIFEST_SHOTS / f"{name}.png")
        else:
            pair = [
                base64.b64encode(png).decode(),
                base64.b64encode(committed.read_bytes()).decode(),
            ]
            differ = app.page.evaluate(PIXEL_DIFF, pair)
            assert differ < 0.02, f"{name} differs from the README's in {differ:.1%} of its pixels"
        app.watch.check()
    finally:
        app.context.close()


def test_the_manifest_screenshots_are_the_readme_ones() -> None:
    for name in ("review-phone-light", "review-desktop-light"):
        assert (MANIFEST_SHOTS / f"{name}.png").read_bytes() == (
            SCREENSHOTS / f"{name}.png"
        ).read_bytes()
