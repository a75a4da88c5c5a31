"""Dates in words, for the prompts and for /why and /memories: what day and time it is, when a
memory was said ("12 Nov, three weeks ago"), a long silence in a conversation ("— three days
later, Fri 4 Dec —").

Pure: the instant (POSIX seconds) and the time zone are parameters, never read here. Words are
English, like the rest of the prompt's scaffolding; names of days and months are spelled here
rather than by strftime, whose words follow the machine's locale.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, tzinfo

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_NUMBERS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)

# Seconds of silence between two messages that the history marks: under a day, the turns of
# one conversation; past it, the person came back.
GAP_SECONDS = 86_400.0


def local(at: float, zone: tzinfo) -> datetime:
    """The instant `at` as the clock on the wall shows it in `zone`."""
    return datetime.fromtimestamp(at, UTC).astimezone(zone)


def zone_name(zone: tzinfo, at: float) -> str:
    """The zone's IANA name when it has one ("Europe/Paris"), else its abbreviation then."""
    key = getattr(zone, "key", None)
    return str(key) if key else local(at, zone).tzname() or "UTC"


def _offset(moment: datetime) -> str:
    offset = moment.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "+" if minutes >= 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{rest:02d}"


def long_date(moment: datetime) -> str:
    """ "Wednesday 2 December 2026" """
    return f"{DAYS[moment.weekday()]} {moment.day} {MONTHS[moment.month - 1]} {moment.year}"


def short_date(moment: date, *, today: date) -> str:
    """ "12 Nov", with the year when it is not this one ("12 Nov 2025")."""
    said = f"{moment.day} {MONTHS[moment.month - 1][:3]}"
    return said if moment.year == today.year else f"{said} {moment.year}"


def now_line(now: float, zone: tzinfo) -> str:
    """The prompt's line saying what day and time it is where the character lives."""
    moment = local(now, zone)
    return (
        f"Now it is {long_date(moment)}, {moment.hour:02d}:{moment.minute:02d} "
        f"({zone_name(zone, now)}, {_offset(moment)})."
    )


def exchange_line(at: float, zone: tzinfo) -> str:
    """The reflection's line saying when the exchange took place."""
    moment = local(at, zone)
    return (
        f"The exchange took place on {long_date(moment)} at {moment.hour:02d}:{moment.minute:02d}"
        f" ({zone_name(zone, at)}, {_offset(moment)})."
    )


def _amount(n: int, unit: str) -> str:
    if n == 1:
        return f"a {unit}"
    return f"{_NUMBERS[n] if n < len(_NUMBERS) else n} {unit}s"


def span(days: int) -> str:
    """A number of days in the unit a person would use: days under two weeks, then weeks,
    months (of 30 days) past two of them, years past 365 days."""
    if days < 14:
        return _amount(days, "day")
    if days < 60:
        return _amount(days // 7, "week")
    if days < 365:
        return _amount(days // 30, "month")
    return _amount(days // 365, "year")


def said_on(at: float, now: float, zone: tzinfo) -> str:
    """When something was said, seen from `now`: "today", "yesterday", "Mon 30 Nov, two days
    ago", "12 Nov, three weeks ago"; a date alone when it is after `now` (a clock put back);
    "" when the instant is unknown (0)."""
    if at <= 0:
        return ""
    then, today = local(at, zone).date(), local(now, zone).date()
    days = (today - then).days
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    shown = short_date(then, today=today)
    if days < 0:
        return shown
    if days < 7:
        return f"{DAYS[then.weekday()][:3]} {shown}, {span(days)} ago"
    return f"{shown}, {span(days)} ago"


def gap_line(before: float, after: float, zone: tzinfo) -> str:
    """The line that marks a silence of a day or more between two messages ("— three days
    later, Fri 4 Dec —"); "" for a shorter one, or when either instant is unknown."""
    if before <= 0 or after - before < GAP_SECONDS:
        return ""
    then, day = local(before, zone).date(), local(after, zone).date()
    days = max(1, (day - then).days)
    return f"— {span(days)} later, {DAYS[day.weekday()][:3]} {short_date(day, today=then)} —"


_GAP_LINE = re.compile(r"— [^\n—]+ later, [^\n—]+ —\n")


def without_gap(text: str) -> str:
    """The text of a history message without the gap line put before it."""
    found = _GAP_LINE.match(text)
    return text[found.end() :] if found else text
