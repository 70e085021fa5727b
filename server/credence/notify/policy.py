"""The review policy, pure: who is told what and when (digests, urgency, quiet hours, reminders)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, time, timedelta
from itertools import pairwise
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from credence.errors import Unprocessable
from credence.models.reasons import Reason

Mode = Literal["digest", "each"]
Urgency = Literal["high", "normal", "low"]
SendKind = Literal["each", "high", "digest", "reminder"]

# Proposals that arrive one by one are gathered this long before a digest goes out; a reflection
# run's proposals arrive within one transaction, far inside it.
DIGEST_WINDOW = timedelta(minutes=2)
# Beliefs recorded this close together were committed together (a reflection run's batch).
BATCH_SPREAD = timedelta(seconds=5)
DEFAULT_SPACING_MINUTES = 720
MAX_SPACING_MINUTES = 24 * 60
DEFAULT_REMIND_HOURS = 24
MAX_REMIND_HOURS = 24 * 30
# Ops that change a kept belief: their proposals are high urgency (pushed alone).
CHANGING_OPS = frozenset({"weaken", "forget", "supersede"})


@dataclass(frozen=True)
class QuietHours:
    """A daily span in a time zone; ``start`` after ``end`` spans midnight."""

    start: time
    end: time
    zone: str
    allow_high: bool = False


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True)
class WeeklyReport:
    """When the weekly report digest goes: on ``weekday`` (0 Monday) at ``hour`` local time
    (the quiet-hours time zone, else UTC), unless turned off."""

    enabled: bool = True
    weekday: int = 0
    hour: int = 9


@dataclass(frozen=True)
class Policy:
    """One recipient's notification policy."""

    mode: Mode = "digest"
    quiet: QuietHours | None = None
    remind_after: timedelta = timedelta(hours=DEFAULT_REMIND_HOURS)
    snooze_until: datetime | None = None
    # The least time between two pushes before a lone normal-urgency belief is told about.
    digest_spacing: timedelta = timedelta(minutes=DEFAULT_SPACING_MINUTES)
    weekly: WeeklyReport = WeeklyReport()


@dataclass(frozen=True)
class Item:
    """A pending belief as one recipient's ledger knows it.

    ``told_at``: when this recipient was first pushed about it (None: never); ``reminded_at``:
    its last reminder; ``escalation``: it reaches this recipient only because its owners let it
    wait (first due at ``escalate_at``, 2 × ``remind_after`` of its owners after it was made).
    """

    belief_id: str
    agent_id: str
    urgency: Urgency
    created_at: datetime
    told_at: datetime | None = None
    reminded_at: datetime | None = None
    escalation: bool = False
    escalate_at: datetime | None = None
    changes_kept: bool = False


@dataclass(frozen=True)
class Send:
    """One push to a recipient: its kind, urgency and the beliefs it speaks of."""

    kind: SendKind
    urgency: Urgency
    belief_ids: tuple[str, ...]
    # A reminder folded into a digest that goes at the same moment: still-waiting beliefs.
    reminded_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What to send now, what it marks, and when to look again (None: nothing waits)."""

    sends: list[Send] = field(default_factory=list)
    next_check: datetime | None = None

    @property
    def reminded(self) -> bool:
        """True when this plan sends a reminder."""
        return any(send.kind == "reminder" or send.reminded_ids for send in self.sends)


# --- the policy as data --------------------------------------------------------------------


def _clock_time(value: Any, name: str) -> time:
    try:
        hours, minutes = str(value).split(":")
        return time(int(hours), int(minutes))
    except ValueError:
        raise Unprocessable(f"{name}: a local time as HH:MM") from None


def zone(name: str) -> ZoneInfo:
    """The IANA time zone; Unprocessable naming ``quiet_hours.time_zone`` when unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise Unprocessable(
            f"quiet_hours.time_zone: {name!r} is not an IANA time zone (e.g. Europe/Berlin)"
        ) from None


def parse(raw: Mapping[str, Any]) -> Policy:
    """The policy from its JSON form (as stored and as the API takes it), checked.

    Raises Unprocessable naming the field: an unknown time zone, start equal to end, a reminder
    under an hour (or over 30 days).
    """
    mode = raw.get("mode", "digest")
    if mode not in ("digest", "each"):
        raise Unprocessable("mode: digest or each")
    quiet = None
    if raw.get("quiet_hours") is not None:
        hours = raw["quiet_hours"]
        start = _clock_time(hours.get("start"), "quiet_hours.start")
        end = _clock_time(hours.get("end"), "quiet_hours.end")
        if start == end:
            raise Unprocessable("quiet_hours.end: must differ from quiet_hours.start")
        zone(hours.get("time_zone", ""))
        quiet = QuietHours(start, end, hours["time_zone"], bool(hours.get("allow_high", False)))
    remind = raw.get("remind_after_hours", DEFAULT_REMIND_HOURS)
    if not isinstance(remind, int) or isinstance(remind, bool) or remind < 1:
        raise Unprocessable("remind_after_hours: at least 1 (hour)")
    if remind > MAX_REMIND_HOURS:
        raise Unprocessable(f"remind_after_hours: at most {MAX_REMIND_HOURS} (30 days)")
    snooze = raw.get("snooze_until")
    snooze_at = None
    if snooze is not None:
        try:
            snooze_at = datetime.fromisoformat(str(snooze).replace("Z", "+00:00"))
        except ValueError:
            raise Unprocessable("snooze_until: an RFC 3339 time") from None
        if snooze_at.tzinfo is None:
            raise Unprocessable("snooze_until: give a time zone offset (e.g. Z)")
    spacing = raw.get("digest_spacing_minutes", DEFAULT_SPACING_MINUTES)
    if not isinstance(spacing, int) or isinstance(spacing, bool) or spacing < 0:
        raise Unprocessable("digest_spacing_minutes: a whole number of minutes, at least 0")
    if spacing > MAX_SPACING_MINUTES:
        raise Unprocessable(f"digest_spacing_minutes: at most {MAX_SPACING_MINUTES} (a day)")
    return Policy(
        mode,
        quiet,
        timedelta(hours=remind),
        snooze_at,
        timedelta(minutes=spacing),
        _weekly(raw.get("weekly_report")),
    )


def _weekly(raw: Any) -> WeeklyReport:
    """The weekly report setting from its JSON form; absent or null: the default."""
    if raw is None:
        return WeeklyReport()
    if not isinstance(raw, Mapping):
        raise Unprocessable("weekly_report: an object with enabled, weekday and hour")
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise Unprocessable("weekly_report.enabled: true or false")
    weekday = raw.get("weekday", WEEKDAYS[0])
    if weekday not in WEEKDAYS:
        raise Unprocessable(f"weekly_report.weekday: one of {', '.join(WEEKDAYS)}")
    hour = raw.get("hour", WeeklyReport.hour)
    if not isinstance(hour, int) or isinstance(hour, bool) or not 0 <= hour <= 23:
        raise Unprocessable("weekly_report.hour: a whole hour from 0 to 23")
    return WeeklyReport(enabled, WEEKDAYS.index(weekday), hour)


def to_json(policy: Policy) -> dict[str, Any]:
    """The policy's JSON form (what ``parse`` reads)."""
    quiet = policy.quiet
    return {
        "mode": policy.mode,
        "quiet_hours": None
        if quiet is None
        else {
            "start": quiet.start.strftime("%H:%M"),
            "end": quiet.end.strftime("%H:%M"),
            "time_zone": quiet.zone,
            "allow_high": quiet.allow_high,
        },
        "remind_after_hours": int(policy.remind_after.total_seconds() // 3600),
        "snooze_until": None
        if policy.snooze_until is None
        else policy.snooze_until.isoformat().replace("+00:00", "Z"),
        "digest_spacing_minutes": int(policy.digest_spacing.total_seconds() // 60),
        "weekly_report": {
            "enabled": policy.weekly.enabled,
            "weekday": WEEKDAYS[policy.weekly.weekday],
            "hour": policy.weekly.hour,
        },
    }


def urgency_of(op: str, review_reasons: Sequence[Reason]) -> Urgency:
    """High for a proposal that contradicts, replaces, weakens or forgets a kept belief."""
    kinds = {reason.kind for reason in review_reasons}
    if op in CHANGING_OPS or kinds & {"contradicts", "contradicts_in_batch"}:
        return "high"
    return "low" if op == "strengthen" else "normal"


# --- quiet hours and holds ------------------------------------------------------------------


def _quiet_span(quiet: QuietHours, at: datetime) -> tuple[datetime, datetime] | None:
    """The quiet span (start, end) that contains ``at``, or None when ``at`` is not quiet."""
    tz = zone(quiet.zone)
    local = at.astimezone(tz)
    for day in (local.date() - timedelta(days=1), local.date()):
        start = datetime.combine(day, quiet.start, tz)
        end_day = day if quiet.end > quiet.start else day + timedelta(days=1)
        end = datetime.combine(end_day, quiet.end, tz)
        if start <= at < end:
            return start, end
    return None


def held_until(policy: Policy, at: datetime, urgency: Urgency) -> datetime | None:
    """When something of this urgency may be pushed, if not now (snooze, then quiet hours)."""
    later = at
    for _ in range(3):  # a snooze can end inside quiet hours, and quiet hours inside a snooze
        moved = False
        if policy.snooze_until is not None and later < policy.snooze_until:
            later, moved = policy.snooze_until, True
        quiet = policy.quiet
        if quiet is not None and not (urgency == "high" and quiet.allow_high):
            span = _quiet_span(quiet, later)
            if span is not None:
                later, moved = span[1], True
        if not moved:
            break
    return None if later == at else later


def local_day(policy: Policy, at: datetime) -> Any:
    """The recipient's calendar date at ``at`` (its quiet-hours zone, else UTC)."""
    return at.astimezone(zone(policy.quiet.zone) if policy.quiet else ZoneInfo("UTC")).date()


# --- the plan -------------------------------------------------------------------------------


def plan(
    policy: Policy,
    items: Sequence[Item],
    now: datetime,
    *,
    last_reminder_at: datetime | None = None,
    last_push_at: datetime | None = None,
    window: timedelta = DIGEST_WINDOW,
) -> Plan:
    """Decide what one recipient is pushed now about its pending ``items``, and when to look again.

    - Nothing goes out while held (snooze; quiet hours, high urgency too unless allowed).
    - In ``digest`` mode what is ready goes as one digest when a digest is due: a batch
      committed together (a reflection run) at once, what a hold gathered when the hold ends,
      and a lone belief once ``digest_spacing`` (at least ``window``) has passed since the last
      push; until then it waits for that slot. A high-urgency belief never waits: it goes alone.
    - In ``each`` mode every new belief goes alone (what a hold gathered, as one digest).
    - A belief this recipient was told about ``remind_after`` ago (an escalated one: once due)
      brings one reminder digest, at most one per recipient per local day.
    """
    sends: list[Send] = []
    wake: list[datetime] = []
    untold = [item for item in items if item.told_at is None and not item.escalation]
    ready: list[Item] = []
    for item in untold:
        hold = held_until(policy, now, item.urgency)
        if hold is not None:
            wake.append(hold)
        else:
            ready.append(item)
    overdue = [item for item in ready if now - item.created_at >= window]
    fresh = [item for item in ready if now - item.created_at < window]
    batched: list[Item] = []
    if policy.mode == "digest":
        spacing = max(window, policy.digest_spacing)
        gate = None if last_push_at is None else last_push_at + spacing
        waiting = [item.created_at for item in ready if item.urgency != "high"]
        if gate is not None and waiting:
            # Pushes about other beliefs may keep moving the slot; none waits past its own spacing.
            gate = min(gate, min(waiting) + spacing)
        if ready and (gate is None or now >= gate or _digest_due(policy, ready, now, window)):
            batched = list(ready)
        for item in [] if batched else ready:
            if item.urgency == "high":
                sends.append(Send("high", "high", (item.belief_id,)))
            else:
                wake.append(gate or item.created_at + window)
        if len(batched) == 1 and batched[0].urgency == "high":
            sends.append(Send("high", "high", (batched[0].belief_id,)))
            batched = []
    else:
        alone = fresh if len(overdue) > 1 else fresh + overdue
        batched = overdue if len(overdue) > 1 else []
        for item in alone:
            kind: SendKind = "high" if item.urgency == "high" else "each"
            sends.append(Send(kind, item.urgency, (item.belief_id,)))
    if batched:
        tier: Urgency = "high" if any(i.urgency == "high" for i in batched) else "normal"
        sends.append(Send("digest", tier, tuple(i.belief_id for i in batched)))
    # What goes out now counts as told now: its reminder is due ``remind_after`` from here.
    sent = {belief_id for send in sends for belief_id in send.belief_ids}
    after = [
        replace(item, told_at=now) if item.belief_id in sent and item.told_at is None else item
        for item in items
    ]
    reminder, reminder_wake = _reminder(policy, after, now, last_reminder_at)
    digest = next((i for i, send in enumerate(sends) if send.kind == "digest"), None)
    if reminder is not None and digest is not None:
        # One push, not two: the digest also says what still waits.
        sends[digest] = replace(sends[digest], reminded_ids=reminder.belief_ids)
    elif reminder is not None:
        sends.append(reminder)
    if reminder_wake is not None:
        wake.append(reminder_wake)
    return Plan(sends, min(wake) if wake else None)


def _digest_due(policy: Policy, ready: Sequence[Item], now: datetime, window: timedelta) -> bool:
    """True when a digest goes before its slot: a hold gathered some of ``ready`` and has ended,
    or some arrived together as a batch just now."""
    normal = [item for item in ready if item.urgency != "high"]  # a high one goes alone anyway
    if any(held_until(policy, item.created_at, item.urgency) is not None for item in normal):
        return True
    fresh = sorted(item.created_at for item in normal if now - item.created_at < window)
    return any(later - earlier <= BATCH_SPREAD for earlier, later in pairwise(fresh))


def _reminder_due(policy: Policy, item: Item) -> datetime | None:
    if item.reminded_at is not None:
        return item.reminded_at + policy.remind_after
    if item.escalation:
        return item.escalate_at
    if item.told_at is None:
        return None
    return item.told_at + policy.remind_after


def _reminder(
    policy: Policy, items: Sequence[Item], now: datetime, last: datetime | None
) -> tuple[Send | None, datetime | None]:
    """The reminder digest due now (or None), and when the next one may be due.

    A reminder also carries what would fall due within half the reminder time, so one reminder
    a day covers what the once-a-day rule would otherwise leave waiting until the next.
    """
    dues = [(due, item) for item in items if (due := _reminder_due(policy, item)) is not None]
    if not dues:
        return None, None
    earliest = min(due for due, _ in dues)
    at = max(earliest, now)
    hold = held_until(policy, at, "normal")
    if hold is not None:
        at = hold
    if last is not None and local_day(policy, last) == local_day(policy, at):
        tomorrow = datetime.combine(local_day(policy, at) + timedelta(days=1), time(0), _tz(policy))
        at = max(at, tomorrow)
        hold = held_until(policy, at, "normal")
        at = hold or at
    if at > now:
        return None, at
    horizon = now + policy.remind_after / 2
    waiting = tuple(sorted(item.belief_id for due, item in dues if due <= horizon))
    return Send("reminder", "normal", waiting), None


def _tz(policy: Policy) -> ZoneInfo:
    return zone(policy.quiet.zone) if policy.quiet else ZoneInfo("UTC")
