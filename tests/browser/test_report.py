"""The Report view: charts drawn as inline SVG, each with the report's numbers in a table."""

from __future__ import annotations

from typing import Any


def test_the_report_view_shows_the_reports_numbers(app: Any) -> None:
    app.pair("/?view=report")
    page = app.page
    page.locator("#report-per-day table").wait_for()
    agent = page.locator("#report-agent").input_value()
    report = app.admin.get(f"/api/v1/agents/{agent}/memory/report", params={"days": 30}).json()

    # Each chart is an image with a title, and a table of its figures follows it.
    charts = page.locator("#report-body svg.chart[role=img]")
    assert charts.count() == 4
    for index in range(charts.count()):
        assert charts.nth(index).locator("title").text_content()
    rows = page.locator("#report-per-day tbody tr").all()
    table = {
        row.locator("th").inner_text(): [int(c) for c in row.locator("td").all_inner_texts()]
        for row in rows
    }
    outcomes = ["kept", "edited", "forgotten", "superseded", "pending"]
    expected = {
        day["date"]: [day[name] for name in outcomes]
        for day in report["per_day"]
        if any(day[name] for name in outcomes)
    }
    assert table == expected and expected
    bars = page.locator("#report-per-day rect")
    assert bars.count() == sum(1 for counts in expected.values() for n in counts if n)
    summary = page.locator(".report-summary").inner_text()
    assert f"{report['flagged']['proposals']} proposal" in summary

    page.select_option("#report-days", "7")
    page.wait_for_function(
        "() => document.querySelectorAll('#report-per-day svg title').length === 1"
        " && document.querySelector('#report-per-day desc').textContent.includes('over 8 days')"
    )
