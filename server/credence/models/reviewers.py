"""Reviewer models: people with devices, per-agent routing, and the notification policy."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from credence.models.common import END, TimestampText, visible_text

ClockTime = Annotated[
    str,
    Meta(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]" + END, description="A local time, HH:MM"),
]
# A name a person reads: something visible, no control characters.
ReviewerName = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=80,
        pattern=visible_text(r"\x00-\x1f\x7f"),
    ),
]


class MeIn(Struct, frozen=True, kw_only=True):
    """Change the caller's reviewer (the person behind this device)."""

    name: ReviewerName


class DeviceOut(Struct, frozen=True, kw_only=True):
    """One paired key of a reviewer."""

    key_id: str
    label: str
    scope: str
    agents: list[str] | None
    created_at: TimestampText


class Reviewer(Struct, frozen=True, kw_only=True):
    """A person who reviews: a name and the devices (keys) it decides with."""

    id: str
    name: str
    created_at: TimestampText
    devices: list[DeviceOut]


class ReviewerPage(Struct, frozen=True):
    """Every reviewer (admin)."""

    items: list[Reviewer]


class AgentReviewer(Struct, frozen=True, kw_only=True):
    """A reviewer who can see an agent, and whether it reviews it: ``assignment`` is
    ``default`` (its keys cover the agent), ``assigned`` or ``unassigned`` (by an admin)."""

    id: str
    name: str
    reviews: bool
    assignment: Literal["default", "assigned", "unassigned"]


class AgentReviewerPage(Struct, frozen=True):
    """The reviewers of one agent."""

    items: list[AgentReviewer]


class QuietHours(Struct, frozen=True, kw_only=True):
    """Hours in the reviewer's IANA time zone in which nothing is pushed."""

    start: ClockTime
    end: ClockTime
    time_zone: Annotated[str, Meta(min_length=1, max_length=64, examples=["Europe/Berlin"])]
    allow_high: bool = False


Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


class WeeklyReportSettings(Struct, frozen=True, kw_only=True):
    """The weekly report digest: each of the reviewer's agents' week (kept, edited, forgotten
    and pending counts, median time to decision, kept beliefs never served) in one push, on
    ``weekday`` at ``hour`` (0 to 23) in the quiet-hours time zone (UTC without quiet hours);
    quiet hours and snooze hold it. ``enabled`` false: none."""

    enabled: bool = True
    weekday: Weekday = "monday"
    hour: int = 9


class NotificationSettings(Struct, frozen=True, kw_only=True):
    """How and when a reviewer is told about beliefs that wait for review.

    ``mode`` digest: one push per batch (high-urgency beliefs alone); each: one push per belief.
    ``quiet_hours`` null: none. ``remind_after_hours``: at least 1. ``snooze_until`` null: not
    snoozed. ``digest_spacing_minutes`` (digest mode, 0 to 1440): the least time after a push
    before a lone normal-urgency belief goes out; until then it waits for the next digest.
    """

    mode: Literal["digest", "each"] = "digest"
    quiet_hours: QuietHours | None = None
    remind_after_hours: int = 24
    snooze_until: TimestampText | None = None
    digest_spacing_minutes: int = 720
    weekly_report: WeeklyReportSettings = WeeklyReportSettings()
