"""Dates in words, for the prompts and for /why and /memories: what day and time it is, when a
memory was said ("12 Nov, three weeks ago"), a long silence in a conversation ("— three days
later, Fri 4 Dec —"), in English or in French.

Pure: the instant (POSIX seconds), the time zone and the language are parameters, never read
here. Each language's words are a small table below (`_WORDS`), not strftime, the `locale`
module or a library such as Babel: strftime and `locale` follow the machine's locale, one
setting for the whole process, where here two people asking at the same moment each get their
own language; and a table of twelve months and seven days needs no dependency. French is
written as French typography has it: day and month names in lower case, months abbreviated with
a dot except those of four letters or fewer (mars, mai, juin, août), "1er" for the first of a
month, hours as "14 h 05", the typographic apostrophe (aujourd’hui).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from typing import Literal

# The languages dates are written in; "en" wherever none is said.
Language = Literal["en", "fr"]
LANGUAGES: tuple[Language, ...] = ("en", "fr")


@dataclass(frozen=True, slots=True)
class _Words:
    """One language's words for dates: names, numbers, units, and the phrases around them."""

    days: tuple[str, ...]  # Monday first
    short_days: tuple[str, ...]
    months: tuple[str, ...]
    short_months: tuple[str, ...]
    numbers: tuple[str, ...]  # zero to twelve; digits past them
    # unit -> (one of it, the plural noun): ("a week", "weeks").
    units: dict[str, tuple[str, str]]
    first: str  # the first day of a month: "1", "1er"
    today: str
    yesterday: str
    ago: str  # "{span} ago"
    later: str  # "{span} later"
    clock: str  # "{hour}:{minute}", the minute on two digits
    now: str  # "Now it is {date}, {time} ({zone}, {offset})."
    exchange: str  # "The exchange took place on {date} at {time} ({zone}, {offset})."


_ENGLISH = _Words(
    days=("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    short_days=("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
    months=(
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
    ),
    short_months=(
        "Jan",
        "Feb",
        "Mar",
        "Apr",
        "May",
        "Jun",
        "Jul",
        "Aug",
        "Sep",
        "Oct",
        "Nov",
        "Dec",
    ),
    numbers=(
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
    ),
    units={
        "day": ("a day", "days"),
        "week": ("a week", "weeks"),
        "month": ("a month", "months"),
        "year": ("a year", "years"),
    },
    first="1",
    today="today",
    yesterday="yesterday",
    ago="{span} ago",
    later="{span} later",
    clock="{hour:02d}:{minute:02d}",
    now="Now it is {date}, {time} ({zone}, {offset}).",
    exchange="The exchange took place on {date} at {time} ({zone}, {offset}).",
)

_FRENCH = _Words(
    days=("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
    short_days=("lun.", "mar.", "mer.", "jeu.", "ven.", "sam.", "dim."),
    months=(
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ),
    short_months=(
        "janv.",
        "févr.",
        "mars",
        "avr.",
        "mai",
        "juin",
        "juil.",
        "août",
        "sept.",
        "oct.",
        "nov.",
        "déc.",
    ),
    numbers=(
        "zéro",
        "un",
        "deux",
        "trois",
        "quatre",
        "cinq",
        "six",
        "sept",
        "huit",
        "neuf",
        "dix",
        "onze",
        "douze",
    ),
    # "semaine" is feminine: "une semaine"; "mois" is the same in the plural.
    units={
        "day": ("un jour", "jours"),
        "week": ("une semaine", "semaines"),
        "month": ("un mois", "mois"),
        "year": ("un an", "ans"),
    },
    first="1er",
    today="aujourd’hui",
    yesterday="hier",
    ago="il y a {span}",
    later="{span} plus tard",
    clock="{hour} h {minute:02d}",
    now="Nous sommes le {date}, il est {time} ({zone}, {offset}).",
    exchange="L’échange a eu lieu le {date} à {time} ({zone}, {offset}).",
)

_WORDS: dict[str, _Words] = {"en": _ENGLISH, "fr": _FRENCH}

# Seconds of silence between two messages that the history marks: under a day, the turns of
# one conversation; past it, the person came back.
GAP_SECONDS = 86_400.0


def _words(lang: Language) -> _Words:
    return _WORDS[lang]


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


def _day_number(day: int, words: _Words) -> str:
    return words.first if day == 1 else str(day)


def long_date(moment: date, language: Language = "en") -> str:
    """ "Wednesday 2 December 2026"; « mardi 1er décembre 2026 »."""
    w = _words(language)
    day = _day_number(moment.day, w)
    return f"{w.days[moment.weekday()]} {day} {w.months[moment.month - 1]} {moment.year}"


def short_date(moment: date, *, today: date | None = None, language: Language = "en") -> str:
    """ "12 Nov", with the year when it is not `today`'s or no `today` is given ("12 Nov
    2025"); « 12 nov. », « 1er déc. 2025 »."""
    w = _words(language)
    said = f"{_day_number(moment.day, w)} {w.short_months[moment.month - 1]}"
    return said if today is not None and moment.year == today.year else f"{said} {moment.year}"


def _time(moment: datetime, words: _Words) -> str:
    return words.clock.format(hour=moment.hour, minute=moment.minute)


def now_line(now: float, zone: tzinfo, language: Language = "en") -> str:
    """The prompt's line saying what day and time it is where the character lives."""
    moment, w = local(now, zone), _words(language)
    return w.now.format(
        date=long_date(moment, language),
        time=_time(moment, w),
        zone=zone_name(zone, now),
        offset=_offset(moment),
    )


def exchange_line(at: float, zone: tzinfo, language: Language = "en") -> str:
    """The reflection's line saying when the exchange took place."""
    moment, w = local(at, zone), _words(language)
    return w.exchange.format(
        date=long_date(moment, language),
        time=_time(moment, w),
        zone=zone_name(zone, at),
        offset=_offset(moment),
    )


def _amount(n: int, unit: str, words: _Words) -> str:
    one, many = words.units[unit]
    if n == 1:
        return one
    return f"{words.numbers[n] if n < len(words.numbers) else n} {many}"


def span(days: int, language: Language = "en") -> str:
    """A number of days in the unit a person would use: days under two weeks, then weeks,
    months (of 30 days) past two of them, years past 365 days."""
    w = _words(language)
    if days < 14:
        return _amount(days, "day", w)
    if days < 60:
        return _amount(days // 7, "week", w)
    if days < 365:
        return _amount(days // 30, "month", w)
    return _amount(days // 365, "year", w)


def said_on(at: float, now: float, zone: tzinfo, language: Language = "en") -> str:
    """When something was said, seen from `now`: "today", "yesterday", "Mon 30 Nov, two days
    ago", "12 Nov, three weeks ago" (« lun. 30 nov., il y a deux jours »); a date alone when it
    is after `now` (a clock put back); "" when the instant is unknown (0)."""
    if at <= 0:
        return ""
    w = _words(language)
    then, today = local(at, zone).date(), local(now, zone).date()
    days = (today - then).days
    if days == 0:
        return w.today
    if days == 1:
        return w.yesterday
    shown = short_date(then, today=today, language=language)
    if days < 0:
        return shown
    ago = w.ago.format(span=span(days, language))
    if days < 7:
        return f"{w.short_days[then.weekday()]} {shown}, {ago}"
    return f"{shown}, {ago}"


def gap_line(before: float, after: float, zone: tzinfo, language: Language = "en") -> str:
    """The line that marks a silence of a day or more between two messages ("— three days
    later, Fri 4 Dec —", « — trois jours plus tard, ven. 4 déc. — »); "" for a shorter one, or
    when either instant is unknown."""
    if before <= 0 or after - before < GAP_SECONDS:
        return ""
    w = _words(language)
    then, day = local(before, zone).date(), local(after, zone).date()
    later = w.later.format(span=span(max(1, (day - then).days), language))
    shown = short_date(day, today=then, language=language)
    return f"— {later}, {w.short_days[day.weekday()]} {shown} —"


# A gap line in either language: "— <span> later, <day> —", « — <span> plus tard, <day> — ».
_GAP_LINE = re.compile(r"— [^\n—]+ (?:later|plus tard), [^\n—]+ —\n")


def without_gap(text: str) -> str:
    """The text of a history message without the gap line put before it."""
    found = _GAP_LINE.match(text)
    return text[found.end() :] if found else text
