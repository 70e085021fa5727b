"""The weekly report digest, pure: when it goes (on an injected clock) and what it says."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from credence.models.report import (
    DecisionTimes,
    GateFlags,
    MemoryReport,
    OutcomeCounts,
)
from credence.notify import policy, weekly

# Monday 7 December 2026, 09:00 UTC; in Berlin 10:00.
MONDAY_9 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
BERLIN_QUIET = {"start": "22:00", "end": "07:00", "time_zone": "Europe/Berlin"}
LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)


def _policy(**raw) -> policy.Policy:
    return policy.parse(raw)


def test_the_default_is_monday_at_nine_utc() -> None:
    chosen = _policy()
    assert weekly.last_slot(chosen, MONDAY_9) == MONDAY_9
    assert weekly.last_slot(chosen, MONDAY_9 - timedelta(seconds=1)) == MONDAY_9 - timedelta(7)
    assert weekly.next_slot(chosen, MONDAY_9) == MONDAY_9 + timedelta(days=7)
    assert weekly.week_key(chosen, MONDAY_9) == "2026-W50"


def test_the_chosen_weekday_and_hour_are_local_to_the_quiet_hours_zone() -> None:
    chosen = _policy(quiet_hours=BERLIN_QUIET, weekly_report={"weekday": "friday", "hour": 16})
    friday_16_berlin = datetime(2026, 12, 11, 15, 0, tzinfo=UTC)
    assert weekly.last_slot(chosen, friday_16_berlin + timedelta(hours=30)) == friday_16_berlin
    assert weekly.due(chosen, friday_16_berlin, None, LONG_AGO).week == "2026-W50"
    before = weekly.due(chosen, friday_16_berlin - timedelta(minutes=1), "2026-W49", LONG_AGO)
    assert before.week is None and before.next_check == friday_16_berlin


def test_the_same_local_hour_across_a_clock_change() -> None:
    chosen = _policy(quiet_hours=BERLIN_QUIET, weekly_report={"weekday": "monday", "hour": 9})
    # Berlin leaves summer time on 25 October 2026: 09:00 is 07:00 UTC before, 08:00 after.
    before = datetime(2026, 10, 19, 7, 0, tzinfo=UTC)
    assert weekly.last_slot(chosen, before) == before
    assert weekly.next_slot(chosen, before) == datetime(2026, 10, 26, 8, 0, tzinfo=UTC)


def test_due_once_a_week_and_not_for_a_week_already_sent() -> None:
    chosen = _policy()
    first = weekly.due(chosen, MONDAY_9 + timedelta(minutes=1), None, LONG_AGO)
    assert first == weekly.Due("2026-W50", MONDAY_9 + timedelta(days=7))
    again = weekly.due(chosen, MONDAY_9 + timedelta(days=3), "2026-W50", LONG_AGO)
    assert again == weekly.Due(None, MONDAY_9 + timedelta(days=7))
    later = weekly.due(chosen, MONDAY_9 + timedelta(days=7), "2026-W50", LONG_AGO)
    assert later.week == "2026-W51"


def test_changing_the_weekday_after_this_weeks_digest_sends_no_second_one() -> None:
    monday = _policy(weekly_report={"weekday": "monday", "hour": 9})
    assert weekly.due(monday, MONDAY_9, None, LONG_AGO).week == "2026-W50"
    thursday = _policy(weekly_report={"weekday": "thursday", "hour": 9})
    at = MONDAY_9 + timedelta(days=3, hours=1)
    assert weekly.due(thursday, at, "2026-W50", LONG_AGO).week is None


def test_a_reviewer_who_arrived_after_this_weeks_moment_waits_for_the_next() -> None:
    found = weekly.due(_policy(), MONDAY_9 + timedelta(days=2), None, MONDAY_9 + timedelta(1))
    assert found == weekly.Due(None, MONDAY_9 + timedelta(days=7))


def test_turned_off_it_never_goes() -> None:
    found = weekly.due(_policy(weekly_report={"enabled": False}), MONDAY_9, None, LONG_AGO)
    assert found == weekly.Due(None, None)


def test_quiet_hours_hold_it_until_they_end() -> None:
    chosen = _policy(quiet_hours={"start": "22:00", "end": "10:30", "time_zone": "Europe/Berlin"})
    slot = MONDAY_9 - timedelta(hours=1)  # 09:00 in Berlin, inside its quiet hours
    before = weekly.due(chosen, slot - timedelta(minutes=1), "2026-W49", LONG_AGO)
    assert before == weekly.Due(None, slot)
    inside = weekly.due(chosen, slot + timedelta(minutes=10), "2026-W49", LONG_AGO)
    assert inside == weekly.Due(None, MONDAY_9 + timedelta(minutes=30))  # 10:30 in Berlin
    after = weekly.due(chosen, MONDAY_9 + timedelta(minutes=30), "2026-W49", LONG_AGO)
    assert after.week == "2026-W50"


def test_a_snooze_holds_it_and_one_past_next_weeks_moment_skips_this_week() -> None:
    short = _policy(snooze_until="2026-12-08T12:00:00Z")
    held = weekly.due(short, MONDAY_9 + timedelta(hours=1), None, LONG_AGO)
    assert held == weekly.Due(None, datetime(2026, 12, 8, 12, 0, tzinfo=UTC))
    assert weekly.due(short, held.next_check, None, LONG_AGO).week == "2026-W50"
    long = _policy(snooze_until="2026-12-20T00:00:00Z")
    skipped = weekly.due(long, MONDAY_9 + timedelta(hours=1), None, LONG_AGO)
    assert skipped == weekly.Due(None, MONDAY_9 + timedelta(days=7))


def _week(agent_id: str, name: str, **counts) -> weekly.AgentWeek:
    figures = dict(kept=0, edited=0, forgotten=0, pending=0, median_s=None, never_served=0)
    return weekly.AgentWeek(agent_id=agent_id, name=name, **{**figures, **counts})


def test_one_agent_is_one_line_with_a_link_to_its_report() -> None:
    coder = _week(
        "coder", "Coder", kept=12, edited=3, forgotten=2, pending=4, median_s=9000.0, never_served=7
    )
    message = weekly.compose([coder], pending=4, ttl_seconds=86400)
    assert message["type"] == "report.weekly"
    assert message["body"] == (
        "Coder: 12 kept, 3 edited, 2 forgotten, 4 pending; median decision 2.5 h;"
        " 7 kept never served"
    )
    assert message["url"] == "/?view=report&agent=coder&days=7"
    assert message["pending_count"] == 4
    assert message["agents"] == [
        {
            "agent_id": "coder",
            "kept": 12,
            "edited": 3,
            "forgotten": 2,
            "pending": 4,
            "median_decision_s": 9000.0,
            "kept_never_served": 7,
        }
    ]


def test_several_agents_leave_out_the_quiet_ones_and_link_the_report_view() -> None:
    weeks = [
        _week("coder", "Coder", kept=1),
        _week("idle", "Idle"),
        _week("ops", "Ops bot", forgotten=2, median_s=45.0),
    ]
    message = weekly.compose(weeks, pending=0, ttl_seconds=60)
    assert message["body"].splitlines() == [
        "Coder: 1 kept, 0 edited, 0 forgotten, 0 pending",
        "Ops bot: 0 kept, 0 edited, 2 forgotten, 0 pending; median decision 45 s",
    ]
    assert message["url"] == "/?view=report&days=7"
    assert [a["agent_id"] for a in message["agents"]] == ["coder", "ops"]


def test_a_long_digest_fits_a_push() -> None:
    weeks = [_week(f"agent-{n:03d}", f"Agent {n:03d}", kept=n + 1) for n in range(200)]
    encoded = json.dumps(weekly.compose(weeks, pending=0, ttl_seconds=60)).encode()
    assert len(encoded) < 3000
    assert len(weekly.compose(weeks, 0, 60)["agents"]) == weekly.LISTED_AGENTS


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(40, "40 s"), (720, "12 min"), (12600, "3.5 h"), (181440, "2.1 days")],
)
def test_waits_read_in_a_persons_unit(seconds: float, text: str) -> None:
    assert weekly.duration_text(seconds) == text


def test_the_figures_come_from_the_report_of_the_week() -> None:
    report = MemoryReport(
        agent_id="coder",
        days=7,
        since="2026-11-30T09:00:00.000000Z",
        generated_at="2026-12-07T09:00:00.000000Z",
        threshold=0.3,
        totals=OutcomeCounts(kept=5, edited=1, forgotten=2, superseded=1, pending=3),
        per_day=[],
        flagged=GateFlags(
            proposals=12, duplicate=0, contradiction=0, duplicate_share=0, contradiction_share=0
        ),
        time_to_decision=DecisionTimes(decisions=9, median_s=600.0, p90_s=900.0),
        reviewers=[],
        unused_count=4,
        unused=[],
        fading_count=0,
        fading=[],
    )
    found = weekly.week_of(report, "Coder\u202e bot")
    assert found == _week(
        "coder",
        "Coder bot",
        kept=5,
        edited=1,
        forgotten=2,
        pending=3,
        median_s=600.0,
        never_served=4,
    )
