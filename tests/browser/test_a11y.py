"""axe-core (pinned in tests/browser/axe/package.json) finds no violation on any view, in
either theme."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from harness.browser import PHONE

from tests.browser.conftest import open_app
from tests.browser.test_views import wait_job

AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
VIEWS = ["review", "inbox", "memory", "history", "runs", "report", "settings", "pair"]
READY = {
    "review": "#stack .card.depth-0",
    "inbox": "#inbox-list .inbox-item",
    "memory": "#memory-list .memory-item",
    "history": "#history-list .memory-item",
    "runs": "#runs-list .job",
    "report": "#report-body .report-chart",
    "settings": "#settings-body .panel",
    "pair": "#view-pair:not([hidden])",
}
RUN_AXE = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.map((v) => ({ id: v.id, help: v.help,
    nodes: v.nodes.map((n) => [n.target.join(" "), n.failureSummary]) }));
}"""


def run_stub_reflection(admin: Any) -> None:
    """One finished reflection run, so the Runs view has status chips and steps to check."""
    episodes = admin.get("/api/v1/agents/ingest/episodes").json()["items"]
    stub = json.dumps(
        [
            {
                "op": "add",
                "belief": "Check free disk space before a bulk ingest.",
                "confidence": 0.7,
                "source_episodes": [episodes[0]["id"]],
            }
        ]
    )
    response = admin.post(
        "/api/v1/jobs",
        json={
            "workflow_id": "agent-reflection",
            "input_data": {"agent_id": "ingest", "reflector": "stub", "stub_output": stub},
        },
    )
    assert response.status_code == 202, response.text
    assert wait_job(SimpleNamespace(admin=admin), response.json()["id"])["status"] == "succeeded"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("view", VIEWS)
def test_axe_finds_no_violation(chromium, server, admin, seeded, view, scheme) -> None:
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `npm ci --prefix tests/browser/axe` (make test does)")
    if view == "runs":
        run_stub_reflection(admin)
    # Test tooling only: the page's CSP would refuse the injected axe script.
    app = open_app(
        chromium, server, admin, seeded, viewport=PHONE, color_scheme=scheme, bypass_csp=True
    )
    try:
        if view == "pair":
            app.page.goto(app.url)
        else:
            app.pair("" if view == "review" else f"/?view={view}")
        app.page.locator(READY[view]).first.wait_for()
        app.page.evaluate("() => document.getElementById('toast').hidden = true")
        app.page.add_script_tag(path=str(AXE))
        violations = app.page.evaluate(RUN_AXE)
        assert violations == [], json.dumps(violations, indent=1)
    finally:
        app.context.close()


def test_the_review_tab_count_has_an_accessible_meaning(app) -> None:
    app.pair()
    app.top_card()
    tab = app.page.get_by_role("link", name="Review (5 to review)", exact=True)
    assert tab.count() == 1
    assert tab.locator("#pending-count").get_attribute("aria-hidden") == "true"
    app.page.keyboard.press("f")
    app.page.get_by_role("link", name="Review (4 to review)", exact=True).wait_for()
