"""The review policy on an injected clock: digests, urgency, quiet hours, snooze, reminders."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from credence.errors import Unprocessable
from credence.models.reasons import Reason
from credence.notify import policy
from credence.notify.policy import Item, Policy, QuietHours, Send

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)  # a Tuesday, 13:00 in Berlin
BERLIN_NIGHTS = QuietHours(
    start=datetime(1, 1, 1, 22).time(), end=datetime(1, 1, 1, 7).time(), zone="Europe/Berlin"
)


def item(belief_id: str, created: datetime, urgency: str = "normal", **extra) -> Item:
    return Item(belief_id=belief_id, agent_id="a", urgency=urgency, created_at=created, **extra)  # type: ignore[arg-type]


def test_a_batch_goes_as_one_digest_and_stragglers_wait_out_the_window() -> None:
    batch = [item("b1", T0), item("b2", T0)]
    assert policy.plan(Policy(), batch, T0).sends == [Send("digest", "normal", ("b1", "b2"))]
    unspaced = Policy(digest_spacing=timedelta(0))
    told = [item(i.belief_id, T0, told_at=T0) for i in batch]
    stragglers = [
        *told,
        item("b3", T0 + timedelta(seconds=30)),
        item("b4", T0 + timedelta(seconds=50)),
    ]
    early = policy.plan(unspaced, stragglers, T0 + timedelta(seconds=55), last_push_at=T0)
    assert early.sends == []
    assert early.next_check == T0 + policy.DIGEST_WINDOW
    due = policy.plan(unspaced, stragglers, T0 + policy.DIGEST_WINDOW, last_push_at=T0)
    assert due.sends == [Send("digest", "normal", ("b3", "b4"))]


def test_lone_normal_beliefs_wait_for_the_next_digest_slot() -> None:
    spaced = Policy(digest_spacing=timedelta(hours=4))
    morning = T0 - timedelta(hours=5)  # the last push
    first = item("b1", T0)
    planned = policy.plan(spaced, [first], T0, last_push_at=morning)
    assert planned.sends == [Send("digest", "normal", ("b1",))]  # the slot is open: at once
    told = item("b1", T0, told_at=T0)
    lone = [told, item("b2", T0 + timedelta(hours=1)), item("b3", T0 + timedelta(hours=2))]
    at = T0 + timedelta(hours=2, minutes=5)
    waiting = policy.plan(spaced, lone, at, last_push_at=T0)
    assert waiting.sends == []
    assert waiting.next_check == T0 + timedelta(hours=4)
    slot = policy.plan(spaced, lone, T0 + timedelta(hours=4), last_push_at=T0)
    assert slot.sends == [Send("digest", "normal", ("b2", "b3"))]


def test_high_urgency_does_not_wait_for_the_digest_slot() -> None:
    spaced = Policy(digest_spacing=timedelta(hours=4))
    items = [item("b1", T0, told_at=T0), item("h1", T0 + timedelta(hours=1), "high")]
    planned = policy.plan(spaced, items, T0 + timedelta(hours=1), last_push_at=T0)
    assert planned.sends == [Send("high", "high", ("h1",))]


def test_a_run_batch_and_a_held_batch_go_before_their_slot() -> None:
    spaced = Policy(quiet=BERLIN_NIGHTS, digest_spacing=timedelta(hours=4))
    run = [item("r1", T0), item("r2", T0 + timedelta(milliseconds=40))]
    planned = policy.plan(spaced, run, T0 + timedelta(seconds=1), last_push_at=T0)
    assert planned.sends == [Send("digest", "normal", ("r1", "r2"))]
    night = datetime(2026, 3, 10, 23, 30, tzinfo=UTC)  # 00:30 in Berlin
    held = [item("n1", night)]
    end = datetime(2026, 3, 11, 6, 0, tzinfo=UTC)  # 07:00 in Berlin
    released = policy.plan(spaced, held, end, last_push_at=end - timedelta(hours=1))
    assert released.sends == [Send("digest", "normal", ("n1",))]


def test_high_urgency_goes_alone_at_once_even_in_digest_mode() -> None:
    items = [item("b1", T0), item("h1", T0, "high")]
    planned = policy.plan(Policy(), items, T0 + timedelta(seconds=1), last_push_at=T0)
    assert planned.sends == [Send("high", "high", ("h1",))]


def test_each_mode_pushes_every_new_belief_alone() -> None:
    items = [item("b1", T0, "low"), item("b2", T0)]
    planned = policy.plan(Policy(mode="each"), items, T0 + timedelta(seconds=1))
    assert planned.sends == [Send("each", "low", ("b1",)), Send("each", "normal", ("b2",))]


def test_quiet_hours_hold_everything_and_deliver_one_digest_at_their_end() -> None:
    night = datetime(2026, 3, 10, 23, 30, tzinfo=UTC)  # 00:30 in Berlin
    quiet = Policy(quiet=BERLIN_NIGHTS)
    items = [item("b1", night), item("h1", night + timedelta(hours=1), "high")]
    held = policy.plan(quiet, items, night + timedelta(hours=2))
    assert held.sends == []
    assert held.next_check == datetime(2026, 3, 11, 6, 0, tzinfo=UTC)  # 07:00 in Berlin
    morning = policy.plan(quiet, items, datetime(2026, 3, 11, 6, 0, tzinfo=UTC))
    assert morning.sends == [Send("digest", "high", ("b1", "h1"))]


def test_allow_high_lets_high_urgency_through_quiet_hours_only() -> None:
    night = datetime(2026, 3, 10, 23, 30, tzinfo=UTC)
    hours = QuietHours(BERLIN_NIGHTS.start, BERLIN_NIGHTS.end, "Europe/Berlin", allow_high=True)
    items = [item("b1", night), item("h1", night, "high")]
    planned = policy.plan(Policy(quiet=hours), items, night + timedelta(seconds=5))
    assert planned.sends == [Send("high", "high", ("h1",))]


def test_removing_quiet_hours_delivers_what_was_held_at_once() -> None:
    night = datetime(2026, 3, 10, 23, 30, tzinfo=UTC)
    items = [item("b1", night), item("b2", night)]
    assert policy.plan(Policy(quiet=BERLIN_NIGHTS), items, night + timedelta(hours=1)).sends == []
    planned = policy.plan(Policy(), items, night + timedelta(hours=1))
    assert planned.sends == [Send("digest", "normal", ("b1", "b2"))]


def test_snooze_holds_everything_until_it_ends() -> None:
    snoozed = Policy(snooze_until=T0 + timedelta(hours=1))
    items = [item("h1", T0, "high")]
    held = policy.plan(snoozed, items, T0 + timedelta(minutes=5))
    assert held.sends == [] and held.next_check == T0 + timedelta(hours=1)
    assert policy.plan(snoozed, items, T0 + timedelta(hours=1)).sends == [
        Send("high", "high", ("h1",))
    ]


def test_a_reminder_comes_after_remind_after_once_per_day() -> None:
    told = item("b1", T0, told_at=T0 + timedelta(minutes=2))
    early = policy.plan(Policy(), [told], T0 + timedelta(hours=23))
    assert early.sends == [] and early.next_check == T0 + timedelta(hours=24, minutes=2)
    due = policy.plan(Policy(), [told], T0 + timedelta(hours=24, minutes=2))
    assert due.sends == [Send("reminder", "normal", ("b1",))]
    # Reminded once today already: the next one waits for tomorrow.
    other = item("b2", T0, told_at=T0 + timedelta(hours=1))
    later = policy.plan(
        Policy(), [other], T0 + timedelta(hours=25), last_reminder_at=T0 + timedelta(hours=24)
    )
    assert later.sends == []
    assert later.next_check == datetime(2026, 3, 12, 0, 0, tzinfo=UTC)


def test_a_reminder_due_in_quiet_hours_waits_for_their_end() -> None:
    told = item("b1", T0, told_at=datetime(2026, 3, 10, 21, 30, tzinfo=UTC))  # 22:30 Berlin
    quiet = Policy(quiet=BERLIN_NIGHTS, remind_after=timedelta(hours=1))
    held = policy.plan(quiet, [told], datetime(2026, 3, 10, 23, 0, tzinfo=UTC))
    assert held.sends == [] and held.next_check == datetime(2026, 3, 11, 6, 0, tzinfo=UTC)


def test_an_escalation_reaches_another_reviewer_when_it_is_due() -> None:
    escalated = item("b1", T0, escalation=True, escalate_at=T0 + timedelta(hours=48))
    assert policy.plan(Policy(), [escalated], T0 + timedelta(hours=47)).sends == []
    due = policy.plan(Policy(), [escalated], T0 + timedelta(hours=48))
    assert due.sends == [Send("reminder", "normal", ("b1",))]


def test_a_reminder_repeats_daily_and_carries_what_falls_due_soon() -> None:
    old = item("b1", T0, told_at=T0, reminded_at=T0 + timedelta(hours=24))
    soon = item("b2", T0, told_at=T0 + timedelta(hours=30))
    fresh = item("b3", T0, told_at=T0 + timedelta(hours=47))
    at = T0 + timedelta(hours=48)
    planned = policy.plan(
        Policy(), [old, soon, fresh], at, last_reminder_at=T0 + timedelta(hours=24)
    )
    assert planned.sends == [Send("reminder", "normal", ("b1", "b2"))]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (
            {"quiet_hours": {"start": "22:00", "end": "07:00", "time_zone": "Mars/Olympus"}},
            "time_zone",
        ),
        (
            {"quiet_hours": {"start": "22:00", "end": "22:00", "time_zone": "UTC"}},
            "quiet_hours.end",
        ),
        ({"remind_after_hours": 0}, "remind_after_hours"),
        ({"mode": "sometimes"}, "mode"),
        ({"snooze_until": "tomorrow"}, "snooze_until"),
        ({"digest_spacing_minutes": -1}, "digest_spacing_minutes"),
        ({"digest_spacing_minutes": 1441}, "digest_spacing_minutes"),
        ({"digest_spacing_minutes": "4h"}, "digest_spacing_minutes"),
        ({"weekly_report": "mondays"}, "weekly_report"),
        ({"weekly_report": {"enabled": "no"}}, "weekly_report.enabled"),
        ({"weekly_report": {"weekday": "Someday"}}, "weekly_report.weekday"),
        ({"weekly_report": {"hour": 24}}, "weekly_report.hour"),
        ({"weekly_report": {"hour": 7.5}}, "weekly_report.hour"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(raw: dict, field: str) -> None:
    with pytest.raises(Unprocessable, match=field):
        policy.parse(raw)


def test_the_json_form_round_trips() -> None:
    raw = {
        "mode": "each",
        "quiet_hours": {
            "start": "22:00",
            "end": "07:00",
            "time_zone": "Europe/Berlin",
            "allow_high": True,
        },
        "remind_after_hours": 6,
        "snooze_until": "2026-03-10T13:00:00Z",
        "digest_spacing_minutes": 90,
        "weekly_report": {"enabled": False, "weekday": "sunday", "hour": 20},
    }
    assert policy.to_json(policy.parse(raw)) == raw
    assert policy.to_json(policy.parse({}))["mode"] == "digest"


def test_urgency_tiers() -> None:
    assert policy.urgency_of("supersede", []) == "high"
    assert policy.urgency_of("add", [Reason("contradicts", "b_1")]) == "high"
    assert policy.urgency_of("add", []) == "normal"
    assert policy.urgency_of("strengthen", []) == "low"


def test_what_goes_out_now_sets_the_next_look_at_its_reminder() -> None:
    planned = policy.plan(Policy(mode="each"), [item("b1", T0)], T0)
    assert planned.sends == [Send("each", "normal", ("b1",))]
    assert planned.next_check == T0 + timedelta(hours=24)


def test_a_reminder_due_with_a_digest_is_folded_into_it() -> None:
    waiting = item("b1", T0, told_at=T0)
    new = item("b2", T0 + timedelta(hours=23, minutes=59))
    at = T0 + timedelta(hours=24)
    planned = policy.plan(Policy(), [waiting, new], at, last_push_at=T0)
    assert planned.sends == [Send("digest", "normal", ("b2",), reminded_ids=("b1",))]
    assert planned.reminded
