"""Memory, History and Runs views in real Chromium against a real server."""

from __future__ import annotations

import json
import time

from harness import seed

from tests.browser.conftest import App


def memory_item(app: App, belief_id: str):
    """The memory/history row of one belief."""
    return app.page.locator(f'.view:not([hidden]) [data-belief-id="{belief_id}"]')


def test_memory_lists_active_beliefs_with_search_decay_and_use(app: App) -> None:
    app.pair("/?view=memory")
    app.page.locator("#memory-list .memory-item").nth(1).wait_for()
    assert app.page.locator("#memory-count").inner_text() == "2 active beliefs"
    row = memory_item(app, app.ids["fridays"])
    assert "80% sure when kept, 80% now as it ages" in row.inner_text()
    assert "not used yet" in row.inner_text()
    app.page.fill("#memory-search", "retry uploads")
    app.page.wait_for_function(
        "() => document.querySelectorAll('#memory-list .memory-item').length === 1"
    )
    assert app.page.locator("#memory-count").inner_text() == "1 of 2 active beliefs"
    assert "Retry failed uploads three times." in app.page.locator("#memory-list").inner_text()


def test_memory_edit_and_forget_reach_the_server(app: App) -> None:
    app.pair("/?view=memory")
    row = memory_item(app, app.ids["retry"])
    row.wait_for()
    row.get_by_role("button", name="Edit", exact=True).click()
    row.locator("textarea").fill("Retry failed uploads four times, with a pause.")
    row.get_by_role("button", name="Save", exact=True).click()
    app.page.wait_for_function(
        "() => document.querySelector('#memory-list').textContent.includes('four times')"
    )
    edited = seed.belief(app.admin, app.ids["retry"])
    assert edited["content"] == "Retry failed uploads four times, with a pause."
    assert edited["provenance"] == "owner"
    memory_item(app, app.ids["fridays"]).get_by_role("button", name="Forget", exact=True).click()
    app.wait_status(app.ids["fridays"], "forgotten")
    memory_item(app, app.ids["fridays"]).wait_for(state="detached")
    app.page.locator("#toast").get_by_role("button", name="Undo").click()
    app.wait_status(app.ids["fridays"], "pending")


def test_memory_history_shows_the_audit_trail(app: App) -> None:
    app.pair("/?view=memory")
    row = memory_item(app, app.ids["fridays"])
    row.locator("summary", has_text="History").click()
    audit = row.locator(".audit")
    audit.locator(".audit-kept").wait_for()
    assert [a.inner_text() for a in audit.locator(".audit-action").all()] == ["Proposed", "Kept"]


def test_history_shows_every_decision_with_key_labels_and_brings_them_back(app: App) -> None:
    seed.decide(app.admin, app.ids["apology"], "forget", {"reason": "Too formal for us"})
    seed.decide(app.admin, app.ids["backoff"], "keep", {"retire": [app.ids["retry"]]})
    app.pair("/?view=history")
    rows = app.page.locator("#history-list .memory-item")
    rows.nth(4).wait_for()
    words = [row.locator(".memory-meta .chip:not(.chip-agent)").inner_text() for row in rows.all()]
    assert words == ["Replaced", "Kept", "Forgotten", "Kept", "Kept"]
    text = app.page.locator("#history-list").inner_text()
    assert "by tests ·" in text and "key:" not in text and "ago" in text
    apology = memory_item(app, app.ids["apology"]).first
    assert "“Too formal for us”" in apology.inner_text()
    assert "by a newer belief" in memory_item(app, app.ids["retry"]).first.inner_text()
    apology.get_by_role("button", name="Review again").click()
    app.wait_status(app.ids["apology"], "pending")
    newest = rows.first
    app.page.wait_for_function(
        "() => document.querySelector('#history-list .memory-item .chip:not(.chip-agent)')"
        "?.textContent === 'Reopened for review'"
    )
    assert "by test phone ·" in newest.inner_text()
    app.page.fill("#audit-belief", app.ids["apology"])
    app.page.get_by_role("button", name="Show", exact=True).click()
    actions = app.page.locator("#audit-result .audit-action")
    actions.nth(2).wait_for()
    words = [a.inner_text() for a in actions.all()]
    assert words == ["Proposed", "Forgotten", "Reopened for review"]


def wait_job(app: App, job_id: str, timeout_s: float = 20) -> dict:
    """Poll the server until the job has finished."""
    deadline = time.monotonic() + timeout_s
    while True:
        job = app.admin.get(f"/api/v1/jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def wait_jobs(app: App, agent_id: str, timeout_s: float = 15) -> list[dict]:
    """Poll the server until the agent has at least one job; returns its jobs."""
    deadline = time.monotonic() + timeout_s
    while True:
        items = app.admin.get(f"/api/v1/jobs?agent_id={agent_id}").json()["items"]
        if items or time.monotonic() > deadline:
            return items
        time.sleep(0.05)


def test_runs_show_steps_and_per_belief_results(app: App) -> None:
    episodes = app.admin.get("/api/v1/agents/ingest/episodes").json()["items"]
    source = [episodes[0]["id"]]
    stub = json.dumps(
        [
            {
                "op": "add",
                "belief": "Check free disk space before a bulk ingest.",
                "confidence": 0.7,
                "rationale": "Two runs died on a full disk.",
                "source_episodes": source,
            },
            {
                "op": "add",
                "belief": "Never deploy the ingester on Fridays.",
                "confidence": 0.9,
                "rationale": "Same as before.",
                "source_episodes": source,
            },
            {"op": "add", "belief": "Unsupported by anything.", "confidence": 0.5},
        ]
    )
    response = app.admin.post(
        "/api/v1/jobs",
        json={
            "workflow_id": "agent-reflection",
            "input_data": {"agent_id": "ingest", "reflector": "stub", "stub_output": stub},
        },
    )
    assert response.status_code == 202, response.text
    job = wait_job(app, response.json()["id"])
    assert job["status"] == "succeeded", job
    app.pair("/?view=runs")
    card = app.page.locator(f'[data-job-id="{job["id"]}"]')
    card.wait_for()
    assert card.locator(".step-succeeded").count() == 4
    card.locator("summary", has_text="Results").click()
    results = card.locator(".result")
    assert results.count() == 2
    accepted = card.locator(".result.accepted")
    assert "Check free disk space" in accepted.inner_text()
    rejected = card.locator(".result.rejected")
    assert "Duplicates a belief already in memory" in rejected.inner_text()
    assert "1 dropped" in card.inner_text()
    (refused,) = [r for r in job["output_data"]["results"] if not r["accepted"]]
    assert refused["rejected"]["kind"] == refused["structured_reasons"][0]["kind"] == "duplicate_of"
    accepted.get_by_role("link", name="to review").click()
    new_id = next(r["belief_id"] for r in job["output_data"]["results"] if r["accepted"])
    app.page.wait_for_function(
        "(id) => document.querySelector('#stack .card.depth-0')?.dataset.beliefId === id",
        arg=new_id,
    )


def test_reflect_now_runs_a_job_and_shows_it(app: App) -> None:
    app.pair("/?view=runs")
    app.page.select_option("#agent-filter", "ingest")
    button = app.page.get_by_role("button", name="Reflect now")
    button.click()
    # Server first, then page: a failure says which side was slow or wrong. On a loaded CI
    # machine the click, the POST and the job are all slow, so each wait is generous (once,
    # with two other suites running beside it, the job took over 15 s to appear).
    jobs = wait_jobs(app, "ingest", timeout_s=60)
    assert len(jobs) == 1, (jobs, app.page.locator("#toast").text_content())
    job = wait_job(app, jobs[0]["id"], timeout_s=90)
    assert job["trigger"] == "manual"
    assert job["status"] == "succeeded", job
    app.page.wait_for_function(
        "() => /Reflection done/.test(document.querySelector('#toast')?.textContent)",
        timeout=15_000,
    )
    app.page.locator(f'[data-job-id="{job["id"]}"] .status-succeeded').wait_for()


def test_memory_decay_matches_the_servers_formula(app: App) -> None:
    """confidence × exp(−λ·days) from max(created, updated): λ 0.02, 30 days → × 0.5488."""
    app.pair("/?view=memory")
    factor = app.page.evaluate(
        """async () => {
          const { decayed } = await import("/js/memory.js");
          const t0 = Date.parse("2026-01-01T00:00:00Z");
          const item = { confidence: 1, created_at: "2025-12-01T00:00:00Z",
                         updated_at: "2026-01-01T00:00:00Z" };
          return [decayed(item, 0.02, t0 + 30 * 86400000), decayed(item, 0, t0 + 9e9)];
        }"""
    )
    assert round(factor[0], 4) == 0.5488
    assert factor[1] == 1


def test_the_audit_trail_opens_from_the_card(app: App) -> None:
    app.pair()
    card = app.top_card()
    card.locator("summary", has_text="Audit trail").click()
    entry = card.locator(".audit .audit-proposed")
    entry.wait_for()
    assert "Proposed by tests ·" in entry.inner_text()
    assert "key:" not in entry.inner_text()
