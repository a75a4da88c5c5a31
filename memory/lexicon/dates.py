"""Relative dates, French and English: those a memory's text names, resolved against the day it
was said, and the time window a message asks about.

Pure functions: the instant ("now", POSIX seconds) and the time zone are parameters, no clock is
read. Both languages' lists (memory.lexicon.fr, .en) are tried on every text, as the filters do:
a memory's language is not known. Texts are matched accent- and case-insensitively on a shadow
copy of the same length, so what is found is a span of the original text.

Writing: `annotate` appends the date meant, ISO, in parentheses after each phrase it resolves
("interview tomorrow (2026-12-08)"): the person's words stay as they were said, and the date
travels with the text wherever it is shown, exported or compared. `dated_phrases` finds those
annotations again, for the dedup's carriers (memory.write.dedup). What cannot be resolved ("in a
few days", "every Monday") is left as it is: the memory keeps the date it was said.

Reading: `window` gives the [start, end) a message names ("yesterday", « la semaine
dernière », "in March", « il y a deux jours »), or None.

Known false positives, beyond those listed beside the words: a weekday in the past tense resolves
forward ("we met on Monday"); a duration after "in"/« dans » ("learned it in three months") reads
as a date. Known misses: absolute dates ("3 December", « le 3 décembre ») are not resolved, so they
are not compared with resolved ones; times of day are not kept (a date, not an hour).
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

from memory.lexicon import en, fr
from memory.text import strip_accents

_LANGS = (fr, en)


@dataclass(frozen=True, slots=True)
class Span:
    """The days a phrase means, `first` to `last` included (one day: both the same)."""

    first: date
    last: date

    @property
    def label(self) -> str:
        """The span as ISO: a day, a month ("2027-01"), a year, or "first/last"."""
        if self.first == self.last:
            return self.first.isoformat()
        if self.first.day == 1 and self.last == _month_end(self.first):
            return self.first.isoformat()[:7]
        if (self.first.month, self.first.day, self.last.month, self.last.day) == (
            1,
            1,
            12,
            31,
        ) and (self.first.year == self.last.year):
            return str(self.first.year)
        return f"{self.first.isoformat()}/{self.last.isoformat()}"


@dataclass(frozen=True, slots=True)
class Mention:
    """A phrase of a text (`start`:`end`) and the days it means."""

    start: int
    end: int
    span: Span


@dataclass(frozen=True, slots=True)
class Window:
    """The time a message asks about: POSIX seconds, `start` included, `end` excluded."""

    start: float
    end: float


# --- matching -------------------------------------------------------------------------------

_DASHES = dict.fromkeys(map(ord, "‐‑‒–—"), "-")
_APOSTROPHES = dict.fromkeys(map(ord, "’‘ʼ`"), "'")


def _shadow(text: str) -> str:
    """`text` lowercased, without accents, straight apostrophes and dashes, at the same length."""
    if text.isascii():
        return text.lower()
    return "".join(_shadow_char(c) for c in text)


@functools.cache
def _shadow_char(c: str) -> str:
    s = strip_accents(c.translate(_APOSTROPHES).translate(_DASHES)).lower()
    return s if len(s) == 1 else c


def _phrase(phrase: str) -> str:
    """A regex for a lexicon phrase: words apart by any spaces, a dash optional or a space
    ("week-end", "weekend"), an apostrophe optional ("aujourdhui")."""
    pieces = []
    for word in strip_accents(phrase).lower().split():
        escaped = re.escape(word).replace(r"\-", r"[-\s]?").replace("'", "'?")
        pieces.append(escaped)
    return r"\s+".join(pieces)


def _alt(phrases: Iterable[str]) -> str:
    return "(?:" + "|".join(_phrase(p) for p in sorted(set(phrases), key=len, reverse=True)) + ")"


def _merged(name: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for lang in _LANGS:
        for key, value in getattr(lang, name, {}).items():
            merged[_key(key)] = value
    return merged


def _phrases(name: str) -> set[str]:
    """The phrases of a list or mapping of both languages, as written (to build patterns)."""
    return {p for lang in _LANGS for p in getattr(lang, name, ())}


def _words(name: str) -> frozenset[str]:
    return frozenset(_key(w) for lang in _LANGS for w in getattr(lang, name, frozenset()))


def _key(phrase: str) -> str:
    """How a matched phrase is looked up: its shadow without spaces, dashes or apostrophes
    ("week-end", "weekend" and "week end" are one key)."""
    return re.sub(r"[-\s']+", "", _shadow(phrase))


_B = r"(?<![\w-])"  # a phrase starts a word
_E = r"(?![\w-])"  # and ends one ("tomorrow's" ends at the apostrophe)

_DAY_OFFSETS: dict[str, int] = _merged("DAY_OFFSETS")
_WEEKDAYS: dict[str, int] = _merged("WEEKDAY_INDEX")
_CARDINALS: dict[str, int] = _merged("CARDINALS")
_UNITS: dict[str, str] = _merged("UNITS")
_DURATIONS: dict[str, int] = _merged("DURATIONS")
_PERIODS: dict[str, tuple[str, int]] = _merged("PERIODS")
_PERIOD_PARTS: dict[str, tuple[str, int, str]] = _merged("PERIOD_PARTS")
_MONTHS: dict[str, int] = _merged("MONTH_INDEX")
_NEXT = _words("NEXT_BEFORE") | _words("NEXT_AFTER")
_THIS = _words("THIS_BEFORE")
_LAST = _words("LAST_BEFORE") | _words("LAST_AFTER")
_HABIT = _words("HABITUAL_BEFORE")
_NAMED = _words("NAMED_BEFORE") | _words("NAMED_AFTER")
_TODAY_ASKED = _words("TODAY_ASKED")

_NUMBER = r"(?P<n>\d{1,3}|" + _alt(_phrases("CARDINALS")) + ")"
_UNIT = r"(?P<u>" + _alt(_phrases("UNITS")) + ")"
_IN = _alt(_phrases("IN_BEFORE"))
_PART = r"(?:\s+" + _alt(w for lang in _LANGS for w in lang.DAY_PARTS) + ")?"
_BEFORE_WEEKDAY = _alt(
    {w for lang in _LANGS for n in ("NEXT_BEFORE", "THIS_BEFORE", "LAST_BEFORE") for w in
     getattr(lang, n, ())} | {w for lang in _LANGS for w in lang.HABITUAL_BEFORE}
    | {w for lang in _LANGS for w in getattr(lang, "NAMED_BEFORE", ())} | {"on"}
)  # fmt: skip
_AFTER_WEEKDAY = _alt(
    {w for lang in _LANGS for n in ("NEXT_AFTER", "LAST_AFTER", "NAMED_AFTER") for w in
     getattr(lang, n, ())}
)  # fmt: skip
# A weekday followed by a day number or a month is an absolute date ("mardi 3 décembre",
# "Tuesday, December 3"): not resolved (see the module's known misses).
_ABSOLUTE_AFTER = r"(?!,?\s*(?:the\s+|le\s+)?(?:\d|" + _alt(_phrases("MONTH_INDEX")) + _E + "))"


def _compile(body: str) -> re.Pattern[str]:
    return re.compile(_B + body + _E)


_DURATION_RE = _compile(_IN + r"\s+(?P<d>" + _alt(_phrases("DURATIONS")) + ")")
_IN_UNITS_RE = _compile(_IN + r"\s+" + _NUMBER + r"\s+" + _UNIT)
_PERIOD_RE = _compile("(?P<p>" + _alt(_phrases("PERIODS")) + ")")
# "tomorrow's meeting": the date goes after the possessive, not inside it.
_DAY_RE = _compile("(?P<d>" + _alt(_phrases("DAY_OFFSETS")) + ")" + _PART + "(?:'s)?")
_WEEKDAY_RE = _compile(
    "(?:(?P<pre>" + _BEFORE_WEEKDAY + r")\s+)?(?P<w>" + _alt(_phrases("WEEKDAY_INDEX")) + ")"
    + "(?:" + _E + r"\s+(?P<post>" + _AFTER_WEEKDAY + "))?" + _ABSOLUTE_AFTER
)  # fmt: skip
_AGO_RE = re.compile(
    _B + "(?:" + _alt(_phrases("AGO_BEFORE")) + r"\s+" + _NUMBER + r"\s+" + _UNIT
    + "|" + _NUMBER.replace("<n>", "<n2>") + r"\s+" + _UNIT.replace("<u>", "<u2>") + r"\s+"
    + _alt(_phrases("AGO_AFTER")) + ")" + _E
)  # fmt: skip
_PERIOD_PART_RE = _compile("(?P<p>" + _alt(_phrases("PERIOD_PARTS")) + ")")
_MONTH_RE = _compile(
    "(?P<pre>"
    + _alt(_phrases("MONTH_BEFORE"))
    + r")(?:(?<=')|\s+)(?P<m>"
    + _alt(_phrases("MONTH_INDEX"))
    + ")"
)

# An annotation `annotate` wrote: a day, a month, a year, or "first/last".
_LABEL = r"\d{4}(?:-\d{2}(?:-\d{2})?)?(?:/\d{4}-\d{2}-\d{2})?"
_ANNOTATION = re.compile(r"\s*\((" + _LABEL + r")\)")
_ANNOTATED = re.compile(r"\(\d{4}")


# --- calendar arithmetic --------------------------------------------------------------------


def _month_end(day: date) -> date:
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _day(day: date) -> Span:
    return Span(day, day)


def _period(today: date, unit: str, offset: int) -> Span:
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
        if unit == "weekend":
            return Span(monday + timedelta(days=5), monday + timedelta(days=6))
        return Span(monday, monday + timedelta(days=6))
    if unit == "month":
        first = _add_months(today.replace(day=1), offset)
        return Span(first, _month_end(first))
    year = today.year + offset
    return Span(date(year, 1, 1), date(year, 12, 31))


def _shifted(today: date, n: int, unit: str) -> date:
    if unit == "day":
        return today + timedelta(days=n)
    if unit == "week":
        return today + timedelta(weeks=n)
    return _add_months(today, n * (12 if unit == "year" else 1))


def _number(text: str) -> int:
    return int(text) if text.isdigit() else _CARDINALS[_key(text)]


def machine_zone(now: float) -> tzinfo:
    """The machine's time zone as it is at `now` (its UTC offset then)."""
    zone = datetime.fromtimestamp(now).astimezone().tzinfo
    assert zone is not None  # astimezone() always sets one
    return zone


def local_day(now: float, zone: tzinfo) -> date:
    """The calendar day it is at `now` in `zone`."""
    return datetime.fromtimestamp(now, zone).date()


# --- writing: a memory's dates ----------------------------------------------------------------

_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], Span | None]]


def _weekday(m: re.Match[str], today: date) -> Span | None:
    pre = _key(m["pre"]) if m["pre"] else ""
    post = _key(m["post"]) if m["post"] else ""
    if pre in _NAMED or post in _NAMED:
        return None
    target = _WEEKDAYS[_key(m["w"])]
    ahead = (target - today.weekday()) % 7
    if post in _LAST or pre in _LAST:
        return _day(today - timedelta(days=(today.weekday() - target) % 7 or 7))
    if post in _NEXT or pre in _NEXT:
        return _day(today + timedelta(days=ahead or 7))
    if pre in _HABIT:
        return None
    if pre in _THIS:
        return _day(today + timedelta(days=ahead))
    return _day(today + timedelta(days=ahead or 7))


def _in_units(m: re.Match[str], today: date) -> Span:
    return _day(_shifted(today, _number(m["n"]), _UNITS[_key(m["u"])]))


def _period_of(m: re.Match[str], today: date) -> Span:
    unit, offset = _PERIODS[_key(m["p"])]
    return _period(today, unit, offset)


_WRITE_RULES: tuple[_Rule, ...] = (
    (_DURATION_RE, lambda m, t: _day(t + timedelta(days=_DURATIONS[_key(m["d"])]))),
    (_IN_UNITS_RE, _in_units),
    (_PERIOD_RE, _period_of),
    (_DAY_RE, lambda m, t: _day(t + timedelta(days=_DAY_OFFSETS[_key(m["d"])]))),
    (_WEEKDAY_RE, _weekday),
)


def _found(
    text: str, rules: Iterable[_Rule]
) -> list[tuple[re.Match[str], Callable[[re.Match[str], date], Span | None]]]:
    """Every rule's matches on the shadow, the longest at each place, none overlapping."""
    shadow = _shadow(text)
    hits = [(m, meaning) for pattern, meaning in rules for m in pattern.finditer(shadow)]
    hits.sort(key=lambda h: (h[0].start(), -(h[0].end() - h[0].start())))
    kept: list[tuple[re.Match[str], Callable[[re.Match[str], date], Span | None]]] = []
    end = -1
    for match, meaning in hits:
        if match.start() >= end:
            kept.append((match, meaning))
            end = match.end()
    return kept


def resolve(text: str, now: float, zone: tzinfo) -> tuple[Mention, ...]:
    """Return the relative dates `text` names, said at `now` in `zone`, with the days meant."""
    today = local_day(now, zone)
    found = []
    for match, meaning in _found(text, _WRITE_RULES):
        span = meaning(match, today)
        if span is not None:
            found.append(Mention(match.start(), match.end(), span))
    return tuple(found)


def annotate(text: str, now: float, zone: tzinfo) -> tuple[str, tuple[Span, ...]]:
    """Return `text` with the date of each phrase it resolves in parentheses after it, and those
    dates; a phrase already followed by a date is left as it is (annotating twice is a no-op)."""
    out = text
    spans: list[Span] = []
    for mention in reversed(resolve(text, now, zone)):
        already = _ANNOTATION.match(text, mention.end)
        spans.append(mention.span)
        if already is None:
            out = f"{out[: mention.end]} ({mention.span.label}){out[mention.end :]}"
    return out, tuple(reversed(spans))


def dated_phrases(text: str) -> tuple[tuple[int, int, str], ...]:
    """Return each phrase `annotate` dated in `text`, as (start, end past its date, the date)."""
    if _ANNOTATED.search(text) is None:  # most texts: one scan, no rule run
        return ()
    out = []
    for match, _ in _found(text, _WRITE_RULES):
        annotation = _ANNOTATION.match(text, match.end())
        if annotation is not None:
            out.append((match.start(), annotation.end(), annotation.group(1)))
    return tuple(out)


# --- reading: the time a message asks about ---------------------------------------------------


def _past_day(m: re.Match[str], today: date) -> Span | None:
    offset = _DAY_OFFSETS[_key(m["d"])]
    if offset == 0 and _key(m["d"]) not in _TODAY_ASKED:
        return None
    return _day(today + timedelta(days=offset)) if offset <= 0 else None


def _past_period(m: re.Match[str], today: date) -> Span | None:
    unit, offset = _PERIODS[_key(m["p"])]
    return _period(today, unit, offset) if offset <= 0 else None


def _period_part(m: re.Match[str], today: date) -> Span:
    unit, offset, part = _PERIOD_PARTS[_key(m["p"])]
    return _part(_period(today, unit, offset), part, today)


def _part(whole: Span, part: str, today: date) -> Span:
    """The start of a month is its first ten days, the end from the 21st; a week's start is its
    first three days; "so far" ends today."""
    if part == "sofar":
        return Span(whole.first, min(whole.last, today))
    if whole.last - whole.first > timedelta(days=7):  # a month
        if part == "start":
            return Span(whole.first, whole.first.replace(day=10))
        return Span(whole.first.replace(day=21), whole.last)
    if part == "start":
        return Span(whole.first, whole.first + timedelta(days=2))
    return Span(whole.first + timedelta(days=4), whole.last)


def _ago(m: re.Match[str], today: date) -> Span:
    n = _number(m["n"] or m["n2"])
    unit = _UNITS[_key(m["u"] or m["u2"])]
    if unit == "day":
        return _day(today - timedelta(days=n))
    return _period(_shifted(today, -n, unit), unit, 0)


_MONTH_START = frozenset({_key("début"), _key("in early")})
_MONTH_END = frozenset({_key("fin"), _key("in late")})


def _month_of(m: re.Match[str], today: date) -> Span:
    month = _MONTHS[_key(m["m"])]
    year = today.year if month <= today.month else today.year - 1
    whole = _period(date(year, month, 1), "month", 0)
    pre = _key(m["pre"])
    if pre in _MONTH_START:
        return _part(whole, "start", today)
    if pre in _MONTH_END:
        return _part(whole, "end", today)
    return whole


def _last_weekday(m: re.Match[str], today: date) -> Span | None:
    pre = _key(m["pre"]) if m["pre"] else ""
    post = _key(m["post"]) if m["post"] else ""
    if pre in _LAST or post in _LAST:
        return _weekday(m, today)
    return None


_READ_RULES: tuple[_Rule, ...] = (
    (_PERIOD_PART_RE, _period_part),
    (_AGO_RE, _ago),
    (_PERIOD_RE, _past_period),
    (_DAY_RE, _past_day),
    (_MONTH_RE, _month_of),
    (_WEEKDAY_RE, _last_weekday),
)


def window(text: str, now: float, zone: tzinfo) -> Window | None:
    """Return the time the message names (its first such phrase), or None if it names none.

    Only the past and the present: "tomorrow" or "next week" name nothing said yet."""
    today = local_day(now, zone)
    for match, meaning in _found(text, _READ_RULES):
        span = meaning(match, today)
        if span is not None:
            return Window(_midnight(span.first, zone), _midnight(span.last + timedelta(1), zone))
    return None


def _midnight(day: date, zone: tzinfo) -> float:
    """The instant `day` starts in `zone` (where midnight is skipped by a DST change, the
    instant the wall clock reads it anyway: the first hour of that day)."""
    return datetime(day.year, day.month, day.day, tzinfo=zone).timestamp()
