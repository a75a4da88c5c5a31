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
dernière », "in March", "mid-November", « il y a deux jours »), or None. `ahead` gives the days
to come a message asks about ("what do I have tomorrow?", « j'ai quoi ce week-end »), from the
day asked on at the earliest, or None: only in a sentence that asks (a question mark, an asking
word) and does not suppose ("if", « si », "imagine"). Known false positives there: a statement
and a question in one sentence ("I have an exam tomorrow, what should I eat?" asks about
tomorrow), "what" or « quoi » in a statement ("that's what I'm doing tomorrow"); known misses:
named days ("christmas"), "my week".

A bare weekday goes where its sentence's tense points: the nearest mark of the past ("went",
"-ed", "did", "was"; « a mangé », « est rentrée », « c'était ») or of a plan ("will", "'d", "is
flying"; « va », « passerait », « a prévu ») in its clause, else in its sentence; with none,
ahead. In a past sentence it is the last such day, 1 to 7 days back (said on that weekday, a
week ago: the same day would be "today"); "for"/« pour », "to"/« à » before it keep it ahead,
"since"/« depuis » back. "this weekend" in a past sentence said Monday to Friday is the one just
gone. A day word in quotes, capitalised inside a sentence, or after "named"/« s'appelle » is a
title or a name ("the song Yesterday", « le film « Demain » »), not a date; a weekday too when
it is inside quotes ("'Friday I'm in Love'", « « Mercredi » sur Netflix »), its capital being
how English writes any weekday.

Known false positives, beyond those listed beside the words: a duration after "in"/« dans »
("learned it in three months") reads as a date; a past-tense mark nearer than the plan it
belongs to ("the meeting she missed is on Monday" reads as the Monday gone); a capitalised day
word inside a sentence by a writer who capitalises it ("Has an exam Tomorrow") is read as a
title; a weekday in quoted speech ('texted "see you Friday"') is read as a title, so left
undated. Known misses: absolute dates ("3 December", « le 3 décembre ») are not resolved, so they
are not compared with resolved ones; times of day are not kept (a date, not an hour); an "-ed"
of four letters ("died", "aged") is not read as a past; a French participle without its accent
(« a mange ») is not read as one; a title in lower case ("watched tomorrow never dies").
"""

from __future__ import annotations

import bisect
import calendar
import collections
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Any, NamedTuple

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


@functools.lru_cache(maxsize=4096)  # a text's phrases and the words before them repeat
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
_MONTH_PARTS: dict[str, str] = _merged("MONTH_PART_BEFORE")
_NAMING = _words("NAMING_BEFORE")
_BEHIND = _words("BEHIND_BEFORE")
# Compared as written (lowercased, accents kept): « à dimanche » is ahead, « a » is "a".
_AHEAD = frozenset(w for lang in _LANGS for w in lang.AHEAD_BEFORE)

_NUMBER = r"(?P<n>\d{1,3}|" + _alt(_phrases("CARDINALS")) + ")"
_UNIT = r"(?P<u>" + _alt(_phrases("UNITS")) + ")"
_IN = _alt(_phrases("IN_BEFORE"))
_PART = r"(?:\s+" + _alt(w for lang in _LANGS for w in lang.DAY_PARTS) + ")?"
_BEFORE_WEEKDAY = _alt(
    {
        w
        for lang in _LANGS
        for n in ("NEXT_BEFORE", "THIS_BEFORE", "LAST_BEFORE")
        for w in getattr(lang, n, ())
    }
    | {w for lang in _LANGS for w in lang.HABITUAL_BEFORE}
    | {w for lang in _LANGS for w in getattr(lang, "NAMED_BEFORE", ())}
    | {"on"}
)
_AFTER_WEEKDAY = _alt(
    {
        w
        for lang in _LANGS
        for n in ("NEXT_AFTER", "LAST_AFTER", "NAMED_AFTER")
        for w in getattr(lang, n, ())
    }
)
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
    "(?:(?P<pre>"
    + _BEFORE_WEEKDAY
    + r")\s+)?(?P<w>"
    + _alt(_phrases("WEEKDAY_INDEX"))
    + ")"
    + "(?:"
    + _E
    + r"\s+(?P<post>"
    + _AFTER_WEEKDAY
    + "))?"
    + _ABSOLUTE_AFTER
)
_AGO_RE = re.compile(
    _B
    + "(?:"
    + _alt(_phrases("AGO_BEFORE"))
    + r"\s+"
    + _NUMBER
    + r"\s+"
    + _UNIT
    + "|"
    + _NUMBER.replace("<n>", "<n2>")
    + r"\s+"
    + _UNIT.replace("<u>", "<u2>")
    + r"\s+"
    + _alt(_phrases("AGO_AFTER"))
    + ")"
    + _E
)
_PERIOD_PART_RE = _compile("(?P<p>" + _alt(_phrases("PERIOD_PARTS")) + ")")
# « mi-novembre », "mid-November": a dash may join the part to its month.
_MONTH_RE = _compile(
    "(?P<pre>"
    + _alt(_phrases("MONTH_BEFORE") | _phrases("MONTH_PART_BEFORE"))
    + r")(?:(?<=')|\s+|-)(?P<m>"
    + _alt(_phrases("MONTH_INDEX"))
    + ")"
)
# Two weekdays joined by "to" or "through": a span of every week ("works Monday to Friday").
_WEEKDAY_WORD = _alt(_phrases("WEEKDAY_INDEX"))
_BETWEEN = _alt(_phrases("RANGE_BETWEEN"))
_RANGE_AFTER = re.compile(r"\s+" + _BETWEEN + r"\s+" + _WEEKDAY_WORD + _E)
_RANGE_BEFORE = re.compile(_B + _WEEKDAY_WORD + r"\s+" + _BETWEEN + r"\s+\Z")
_WORD_BEFORE = re.compile(r"(?<![\w'])([^\W\d_][\w']*)\s+\Z")

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


# --- the sentence around a phrase: its tense, a title ----------------------------------------


def _shadows(name: str) -> frozenset[str]:
    """A word list of both languages as the shadow writes it (apostrophes kept)."""
    return frozenset(_shadow(w) for lang in _LANGS for w in getattr(lang, name, ()))


def _written(name: str) -> frozenset[str]:
    """A word list of both languages as written, lowercased, accents kept."""
    return frozenset(w.lower() for lang in _LANGS for w in getattr(lang, name, ()))


def _endings(name: str) -> tuple[str, ...]:
    return tuple(_shadow(e) for lang in _LANGS for e in getattr(lang, name, ()))


_PAST_WORDS = _shadows("PAST_WORDS")
_PAST_ENDINGS = _endings("PAST_ENDINGS")
_NOT_PAST = _shadows("NOT_PAST")
_STATE_BEFORE = _shadows("STATE_BEFORE")
_FUTURE_WORDS = _shadows("FUTURE_WORDS")
_FUTURE_ENDINGS = _endings("FUTURE_ENDINGS")
_NOT_FUTURE = _shadows("NOT_FUTURE")
_PROGRESSIVE_BEFORE = _shadows("PROGRESSIVE_BEFORE")
_PLAN_WORDS = _written("PLAN_WORDS")
_PAST_AUXILIARIES = _shadows("PAST_AUXILIARIES")
_BEING_AUXILIARIES = _shadows("BEING_AUXILIARIES")
_REFLEXIVES = _shadows("REFLEXIVES")
_PARTICIPLES = _written("PARTICIPLES")
_MOTION_PARTICIPLES = _written("MOTION_PARTICIPLES")
_NOT_PARTICIPLES = _written("NOT_PARTICIPLES")
_PARTICIPLE_GAP = _shadows("PARTICIPLE_GAP")
_CONJUNCTIONS = _shadows("CONJUNCTIONS")
_DETERMINERS = _shadows("TENSE_DETERMINERS")
_RECALL = _shadows("RECALL")
_MARKING = (
    _PAST_WORDS
    | _FUTURE_WORDS
    | _PROGRESSIVE_BEFORE
    | _PAST_AUXILIARIES
    | _BEING_AUXILIARIES
    | frozenset(_shadow(w) for w in _PLAN_WORDS)
)
_MARKING_ENDINGS = _PAST_ENDINGS + _FUTURE_ENDINGS
_ELIDED = frozenset({"l", "j", "c", "s", "m", "t", "n", "d", "qu", "jusqu", "lorsqu", "puisqu"})
_PARTICIPLE_ENDINGS = ("é", "ée", "és", "ées")


def _any_word(words: Iterable[str]) -> str:
    """A regex for any of `words`, as a trie ("wa(?:s|sn't)" …): tried at every token, it
    checks a letter at a time, not each word."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for c in word:
            node = node.setdefault(c, {})
        node[""] = {}

    def branch(node: dict[str, Any]) -> str:
        alternatives = [re.escape(c) + branch(child) for c, child in sorted(node.items()) if c]
        if not alternatives:
            return ""
        body = "(?:" + "|".join(alternatives) + ")" if len(alternatives) > 1 else alternatives[0]
        return f"(?:{body})?" if "" in node else body

    return branch(root)


# A whole token of the shadow (as `_TOKEN` cuts them: "s'est", "i'm", "aujourd'hui"): it
# starts at a letter or digit after none (nor one and an apostrophe), and ends before none.
_TOKEN_START = r"(?<![^\W_])(?<![^\W_]')(?=[^\W_])"
_TOKEN_END = r"(?![^\W_])(?!'[^\W_])"
_MAY_ELIDE = r"(?:(?:" + _any_word(_ELIDED) + r")'(?=[^\W_]))?"  # « s'est », « qu'il »
# The tokens whose word may mark a tense or start a clause (a superset: each is then read):
# one of those words, or any token with one of the endings (the token taken whole, atomic,
# then its end looked behind).
_CANDIDATE = re.compile(
    _TOKEN_START
    + "(?:"
    + _MAY_ELIDE
    + "(?P<w>"
    + _any_word(_MARKING | _CONJUNCTIONS)
    + ")"
    + _TOKEN_END
    + r"|(?>[^\W_]+(?:'[^\W_]+)*)(?:"
    + "|".join(f"(?<={re.escape(e)})" for e in _MARKING_ENDINGS)
    + "))"
)

PAST, AHEAD = "past", "ahead"
# Words whose mark needs nothing else read: "will", « va »; "went", « était » (not one also
# with a future's ending, which a capital would make a name).
_DECIDED = {w: AHEAD for w in _FUTURE_WORDS} | {
    w: PAST
    for w in _PAST_WORDS - _FUTURE_WORDS - {_shadow(p) for p in _PLAN_WORDS}
    if not w.endswith(_FUTURE_ENDINGS)
}
_RECALL_RE = re.compile(_TOKEN_START + _MAY_ELIDE + "(?:" + _any_word(_RECALL) + ")" + _TOKEN_END)

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_SENTENCE_END = re.compile(r"[.!?;…\n]")
_CLAUSE_END = re.compile(r"[,:()]")
_LOWER_WORD = re.compile(r"(?:^|\s)[^\W\d_]", re.UNICODE)
_OPENING = "\"«“‘'*"
_CLOSING = "\"»”’'*"
# A quoted span of a sentence (on the shadow, where ‘’ are straight): « … », "…", “…”, '…'. A
# straight quote opens after no letter and closes before none ("Léa's" opens nothing; "I'm"
# inside 'Friday I'm in Love' closes nothing).
_QUOTED = re.compile(
    r"«[^«»\n]{1,80}»|(?<!\w)\"[^\"\n]{1,80}\"|“[^“”\n]{1,80}”"
    r"|(?<!\w)'(?=\w)(?:[^'\n]|(?<=\w)'(?=\w)){1,80}'(?!\w)"
)
_STARTS = ".!?:;\n(-•"

_NEAR = 64  # how far back a sentence's start or a quote is looked for (bounds the work)


class _Token(NamedTuple):
    start: int
    word: str  # as the shadow writes it
    written: str  # lowercased, accents kept
    elided: str  # the elided word before it (« s' » of « s'est »), or ""
    capital: bool  # capitalised inside a sentence: a name


class _Text:
    """A text being read, with what is worked out once for all its phrases: the marks of its
    tense, where its sentences and clauses end (all found lazily: most texts need none)."""

    def __init__(self, text: str, shadow: str) -> None:
        self.text = text
        self.shadow = shadow

    def _token(self, raw: re.Match[str]) -> _Token:
        """The token `raw` (a `_TOKEN` match on the shadow) as the tense reader reads it."""
        start, word, elided = raw.start(), raw.group(), ""
        head, _, tail = word.partition("'")
        if tail and head in _ELIDED:
            start, word, elided = start + len(head) + 1, tail, head + "'"
        written = self.text[start : raw.end()]
        if not written.isascii() or "'" in written:
            written = written.translate(_APOSTROPHES).lower()
        else:
            written = word
        capital = self.text[start].isupper() and not self._starts_sentence(start)
        return _Token(start, word, written, elided, capital)

    def _after(self, end: int) -> Iterator[_Token]:
        """The tokens after the one ending at `end`, as many as a participle is looked for in,
        each read when asked for."""
        return map(self._token, itertools.islice(_TOKEN.finditer(self.shadow, end), 4))

    def _before(self, start: int) -> str:
        """The word of the token before the one starting at `start` ("" at the start)."""
        low, reach = start, _NEAR
        while low > 0:
            low = max(0, low - reach)
            tail = collections.deque(_TOKEN.finditer(self.shadow, low, start), maxlen=1)
            last = tail[0] if tail else None
            # Two characters before it seen: a whole token (« s'est » is not « est »).
            if last is not None and (last.start() >= low + 2 or low == 0):
                return self._token(last).word
            reach *= 2
        return ""

    def _starts_sentence(self, start: int) -> bool:
        i = start - 1
        while i >= 0 and self.text[i].isspace() and start - i < _NEAR:
            i -= 1
        return i < 0 or self.text[i] in _STARTS or self.text[i] in _OPENING

    @functools.cached_property
    def _scan(self) -> tuple[list[int], list[str], list[int]]:
        """Where the tense shows and which (`PAST` or `AHEAD`), and where a conjunction starts
        a clause, in text order. One regex finds the few words that may say either; only they
        are read as tokens, with their neighbours."""
        where: list[int] = []
        which: list[str] = []
        joins: list[int] = []
        for raw in _CANDIDATE.finditer(self.shadow):  # each a whole token, as `_TOKEN` cuts
            decided = _DECIDED.get(raw["w"] or "")
            if decided is not None:
                where.append(raw.start("w"))
                which.append(decided)
                continue
            token = self._token(raw)
            if token.word in _CONJUNCTIONS and _joins(next(self._after(raw.end()), None)):
                joins.append(token.start)
            before = functools.partial(self._before, raw.start())
            mark = _mark(token, before, functools.partial(self._after, raw.end()))
            if mark is not None:
                where.append(token.start)
                which.append(mark)
        return where, which, joins

    @property
    def _marks(self) -> tuple[list[int], list[str]]:
        """Where the tense shows, and which: `PAST` or `AHEAD`, in text order."""
        where, which, _ = self._scan
        return where, which

    @functools.cached_property
    def _ends(self) -> tuple[list[int], list[int]]:
        """Where sentences end (and clauses a conjunction starts), and where any clause ends."""
        hard = sorted([m.start() for m in _SENTENCE_END.finditer(self.shadow)] + self._scan[2])
        soft = sorted(hard + [m.start() for m in _CLAUSE_END.finditer(self.shadow)])
        return hard, soft

    def tense(self, start: int, end: int) -> str | None:
        """The tense of the phrase at `start`:`end`: the nearest mark before it in its clause,
        else after it in its clause, else before it, else after it, in its sentence."""
        where, which = self._marks
        hard, soft = self._ends
        h0, h1 = _around(hard, start, end, len(self.shadow))
        s0, s1 = _around(soft, start, end, len(self.shadow))

        def last(a: int, b: int) -> str | None:
            i = bisect.bisect_left(where, b) - 1
            return which[i] if i >= 0 and where[i] >= a else None

        def first(a: int, b: int) -> str | None:
            i = bisect.bisect_left(where, a)
            return which[i] if i < len(where) and where[i] < b else None

        return last(s0, start) or first(end, s1) or last(h0, start) or first(end, h1)

    @functools.cached_property
    def recalls(self) -> bool:
        """Whether the text says something was said ("what did I tell you", « je t'ai dit »)."""
        return _RECALL_RE.search(self.shadow) is not None

    def word_before(self, start: int) -> str:
        """The word before `start`, lowercased as written ("" at the start)."""
        found = _WORD_BEFORE.search(self.text, max(0, start - 40), start)
        return found.group(1).translate(_APOSTROPHES).lower() if found else ""

    def is_title(self, start: int, end: int) -> bool:
        """Whether the day word at `start`:`end` is a title or a name: after "named" or
        « s'appelle », in quotes ("'Yesterday Once More'", « « Demain » »), or capitalised
        inside a sentence of a text not all in capitals ("the song Yesterday", "the Today
        show")."""
        if _key(self.word_before(start)) in _NAMING:
            return True
        i = start - 1
        while i >= 0 and self.text[i] == " " and start - i < _NEAR:
            i -= 1
        before = self.text[i] if i >= 0 else ""
        j = end
        while j < len(self.text) and self.text[j] == " " and j - end < _NEAR:
            j += 1
        after = self.text[j] if j < len(self.text) else ""
        capital = self.text[start].isupper() and not self.text[start:end].isupper()
        if before and before in _OPENING and (capital or (after and after in _CLOSING)):
            return True
        return capital and not self._starts_sentence(start) and self._has_lower

    def is_quoted(self, start: int, end: int) -> bool:
        """Whether `start`:`end` lies inside a quoted span: a title ("'Friday I'm in Love'",
        « « Mercredi » sur Netflix »), not a day."""
        spans = self._quoted
        i = bisect.bisect_right(spans, (start, len(self.shadow))) - 1
        return i >= 0 and spans[i][1] >= end

    @functools.cached_property
    def _quoted(self) -> list[tuple[int, int]]:
        return [m.span() for m in _QUOTED.finditer(self.shadow)]

    @functools.cached_property
    def _has_lower(self) -> bool:
        return any(w[-1].islower() for w in _LOWER_WORD.findall(self.text))


def _around(ends: list[int], start: int, end: int, size: int) -> tuple[int, int]:
    """The piece between `ends` that holds `start`:`end`."""
    i = bisect.bisect_right(ends, start)
    before = ends[i - 1] if i > 0 else 0
    j = bisect.bisect_left(ends, end)
    return before, ends[j] if j < len(ends) else size


def _joins(after: _Token | None) -> bool:
    """Whether a conjunction followed by `after` starts a clause: a verb follows, not a noun
    (« et part samedi », not « et un oral jeudi », « et Léa »)."""
    return after is not None and not (
        after.capital
        or after.word in _DETERMINERS
        or after.elided + after.word in _DETERMINERS
        or after.elided in _DETERMINERS
    )


def _mark(
    token: _Token, before: Callable[[], str], after: Callable[[], Iterator[_Token]]
) -> str | None:
    """What `token` says of its sentence's tense, or None; `before` gives the word before it,
    `after` the tokens after it (asked only when needed)."""
    word = token.word
    if word not in _MARKING and not word.endswith(_MARKING_ENDINGS):
        return None
    if word in _FUTURE_WORDS or token.written in _PLAN_WORDS:
        return AHEAD
    if word.endswith(_FUTURE_ENDINGS) and word not in _NOT_FUTURE and not token.capital:
        return AHEAD if len(word) >= 4 or "'" in word else None
    if word in _PAST_WORDS:
        return PAST
    if word in _PROGRESSIVE_BEFORE:
        following = next(after(), None)
        if following is not None and following.word.endswith("ing") and len(following.word) >= 5:
            return AHEAD
    if (
        word.endswith(_PAST_ENDINGS)
        and len(word) >= 5
        and word not in _NOT_PAST
        and not token.capital
        and before() not in _STATE_BEFORE
    ):
        return PAST
    if word in _PAST_AUXILIARIES and token.written != "à":
        participle = _participle(after())
        if participle is not None:
            return AHEAD if participle.written in _PLAN_WORDS else PAST
    if word in _BEING_AUXILIARIES:
        participle = _participle(after())
        if participle is not None and participle.written in _PLAN_WORDS:
            return AHEAD
        reflexive = token.elided in _REFLEXIVES or before() in _REFLEXIVES
        if participle is not None and (reflexive or participle.written in _MOTION_PARTICIPLES):
            return PAST
    return None


def _participle(tokens: Iterable[_Token]) -> _Token | None:
    """The participle after an auxiliary (`tokens` follow it), past adverbs and negations
    (« n'a pas dormi »)."""
    for token in itertools.islice(tokens, 4):
        if token.word in _PARTICIPLE_GAP:
            continue
        written = token.written
        if written in _NOT_PARTICIPLES:
            return None
        if written in _PARTICIPLES or written in _MOTION_PARTICIPLES or written in _PLAN_WORDS:
            return token
        if written.endswith(_PARTICIPLE_ENDINGS) and len(written) >= 3:
            return token
        return None
    return None


# --- writing: a memory's dates ----------------------------------------------------------------

_Meaning = Callable[[re.Match[str], date, _Text], Span | None]
_Rule = tuple[re.Pattern[str], _Meaning]


def _back(today: date, target: int, this: bool) -> Span:
    """The last such weekday: 1 to 7 days back ("this": 0 to 6)."""
    return _day(today - timedelta(days=(today.weekday() - target) % 7 or (0 if this else 7)))


def _ahead(today: date, target: int, this: bool) -> Span:
    """The next such weekday: 1 to 7 days ahead ("this": 0 to 6)."""
    return _day(today + timedelta(days=(target - today.weekday()) % 7 or (0 if this else 7)))


def _weekday_direction(m: re.Match[str], t: _Text) -> str | None:
    """Where the weekday phrase points: `PAST`, `AHEAD`, "last", "next", or None (not a date)."""
    pre = _key(m["pre"]) if m["pre"] else ""
    post = _key(m["post"]) if m["post"] else ""
    before = t.word_before(m.start())
    if pre in _NAMED or post in _NAMED or _key(before) in _NAMING:
        return None
    if _RANGE_AFTER.match(t.shadow, m.end()) or _RANGE_BEFORE.search(
        t.shadow, max(0, m.start("w") - 40), m.start("w")
    ):
        return None
    if post in _LAST or pre in _LAST:
        return "last"
    if post in _NEXT or pre in _NEXT:
        return "next"
    if pre in _HABIT:
        # « décalé à dimanche »: the shadow's "a" was « à », ahead.
        return AHEAD if t.text[m.start("pre")] == "à" else None
    if before in _AHEAD:
        return AHEAD
    if _key(before) in _BEHIND:
        return PAST
    return t.tense(m.start(), m.end()) or AHEAD


def _weekday(m: re.Match[str], today: date, t: _Text) -> Span | None:
    direction = _weekday_direction(m, t)
    target = _WEEKDAYS[_key(m["w"])]
    this = bool(m["pre"]) and _key(m["pre"]) in _THIS
    if direction == "last":
        return _back(today, target, False)
    if direction == "next":
        return _ahead(today, target, False)
    if direction == PAST:
        return _back(today, target, this)
    if direction == AHEAD:
        return _ahead(today, target, this)
    return None


def _in_units(m: re.Match[str], today: date, t: _Text) -> Span:
    return _day(_shifted(today, _number(m["n"]), _UNITS[_key(m["u"])]))


def _ago_day(m: re.Match[str], today: date, t: _Text) -> Span:
    """ "three days ago" in a memory: that day ("two weeks ago": the day 14 days before)."""
    return _day(_shifted(today, -_number(m["n"] or m["n2"]), _UNITS[_key(m["u"] or m["u2"])]))


def _period_of(m: re.Match[str], today: date, t: _Text) -> Span:
    unit, offset = _PERIODS[_key(m["p"])]
    if _weekend_gone(unit, offset, today) and t.tense(m.start(), m.end()) == PAST:
        offset = -1
    return _period(today, unit, offset)


def _weekend_gone(unit: str, offset: int, today: date) -> bool:
    """Whether "this weekend" said on `today` may be the one just gone (said Monday to
    Friday; on a Saturday or a Sunday it is the one under way)."""
    return unit == "weekend" and offset == 0 and today.weekday() < 5


def _day_word(m: re.Match[str], today: date, t: _Text) -> Span:
    return _day(today + timedelta(days=_DAY_OFFSETS[_key(m["d"])]))


_WRITE_RULES: tuple[_Rule, ...] = (
    (_DURATION_RE, lambda m, t, _: _day(t + timedelta(days=_DURATIONS[_key(m["d"])]))),
    (_IN_UNITS_RE, _in_units),
    (_AGO_RE, _ago_day),
    (_PERIOD_RE, _period_of),
    (_DAY_RE, _day_word),
    (_WEEKDAY_RE, _weekday),
)


def _found(text: str, rules: Iterable[_Rule]) -> tuple[list[tuple[re.Match[str], _Meaning]], _Text]:
    """Every rule's matches on the shadow, the longest at each place, none overlapping, but
    titles ("the song Yesterday"); and the text as read."""
    t = _Text(text, _shadow(text))
    hits = [(m, meaning) for pattern, meaning in rules for m in pattern.finditer(t.shadow)]
    hits.sort(key=lambda h: (h[0].start(), -(h[0].end() - h[0].start())))
    kept: list[tuple[re.Match[str], _Meaning]] = []
    end = -1
    for match, meaning in hits:
        if match.start() >= end:
            end = match.end()
            if not _titled(match, t):
                kept.append((match, meaning))
    return kept, t


def _titled(match: re.Match[str], t: _Text) -> bool:
    """Whether a day word or a weekday is part of a title: a day word by its capital or quotes
    (`_Text.is_title`); a weekday only inside quotes, its capital being how English writes it."""
    if match.re is _DAY_RE:
        return t.is_title(match.start(), match.end())
    if match.re is _WEEKDAY_RE:
        return t.is_quoted(match.start("w"), match.end("w"))
    return False


def resolve(text: str, now: float, zone: tzinfo) -> tuple[Mention, ...]:
    """Return the relative dates `text` names, said at `now` in `zone`, with the days meant."""
    today = local_day(now, zone)
    found = []
    hits, t = _found(text, _WRITE_RULES)
    for match, meaning in hits:
        span = meaning(match, today, t)
        if span is not None:
            found.append(Mention(match.start(), match.end(), span))
    return tuple(found)


def annotate(text: str, now: float, zone: tzinfo) -> tuple[str, tuple[Span, ...]]:
    """Return `text` with the date of each phrase it resolves in parentheses after it, and those
    dates; a phrase already followed by a date is left as it is (annotating twice is a no-op)."""
    mentions = resolve(text, now, zone)
    pieces: list[str] = []
    done = 0
    for mention in mentions:  # in text order, none overlapping
        pieces.append(text[done : mention.end])
        if _ANNOTATION.match(text, mention.end) is None:
            pieces.append(f" ({mention.span.label})")
        done = mention.end
    pieces.append(text[done:])
    return "".join(pieces), tuple(mention.span for mention in mentions)


def dated_phrases(text: str) -> tuple[tuple[int, int, str], ...]:
    """Return each phrase `annotate` dated in `text`, as (start, end past its date, the date)."""
    if _ANNOTATED.search(text) is None:  # most texts: one scan, no rule run
        return ()
    out = []
    for match, _ in _found(text, _WRITE_RULES)[0]:
        annotation = _ANNOTATION.match(text, match.end())
        if annotation is not None:
            out.append((match.start(), annotation.end(), annotation.group(1)))
    return tuple(out)


# --- reading: the time a message asks about ---------------------------------------------------


def _past_day(m: re.Match[str], today: date, t: _Text) -> Span | None:
    """A day word: the past ones; today when asked ("this morning", or a past-tense sentence
    saying something was said: "what did I tell you today?")."""
    key = _key(m["d"])
    offset = _DAY_OFFSETS[key]
    asked = key in _TODAY_ASKED or (t.recalls and t.tense(m.start(), m.end()) == PAST)
    if offset == 0 and not asked:
        return None
    return _day(today + timedelta(days=offset)) if offset <= 0 else None


def _past_period(m: re.Match[str], today: date, t: _Text) -> Span | None:
    unit, offset = _PERIODS[_key(m["p"])]
    if _weekend_gone(unit, offset, today):
        # Asked from Monday to Friday: the weekend gone if the sentence is past, else a plan.
        if t.tense(m.start(), m.end()) != PAST:
            return None
        offset = -1
    return _period(today, unit, offset) if offset <= 0 else None


def _period_part(m: re.Match[str], today: date, t: _Text) -> Span:
    unit, offset, part = _PERIOD_PARTS[_key(m["p"])]
    return _part(_period(today, unit, offset), part, today)


def _part(whole: Span, part: str, today: date) -> Span:
    """The start of a month is its first ten days, its middle the 11th to the 20th, its end
    from the 21st; a week's start is its first three days; "so far" ends today."""
    if part == "sofar":
        return Span(whole.first, min(whole.last, today))
    if whole.last - whole.first > timedelta(days=7):  # a month
        if part == "start":
            return Span(whole.first, whole.first.replace(day=10))
        if part == "mid":
            return Span(whole.first.replace(day=11), whole.first.replace(day=20))
        return Span(whole.first.replace(day=21), whole.last)
    if part == "start":
        return Span(whole.first, whole.first + timedelta(days=2))
    return Span(whole.first + timedelta(days=4), whole.last)


def _ago(m: re.Match[str], today: date, t: _Text) -> Span:
    n = _number(m["n"] or m["n2"])
    unit = _UNITS[_key(m["u"] or m["u2"])]
    if unit == "day":
        return _day(today - timedelta(days=n))
    return _period(_shifted(today, -n, unit), unit, 0)


def _month_of(m: re.Match[str], today: date, t: _Text) -> Span:
    month = _MONTHS[_key(m["m"])]
    year = today.year if month <= today.month else today.year - 1
    whole = _period(date(year, month, 1), "month", 0)
    part = _MONTH_PARTS.get(_key(m["pre"]))
    return whole if part is None else _part(whole, part, today)


def _asked_weekday(m: re.Match[str], today: date, t: _Text) -> Span | None:
    """A weekday asked about: "last Monday", or one in a past-tense sentence ("what did I say
    on Tuesday?"); one to come asks nothing."""
    direction = _weekday_direction(m, t)
    if direction in ("last", PAST):
        this = direction == PAST and bool(m["pre"]) and _key(m["pre"]) in _THIS
        return _back(today, _WEEKDAYS[_key(m["w"])], this)
    return None


_READ_RULES: tuple[_Rule, ...] = (
    (_PERIOD_PART_RE, _period_part),
    (_AGO_RE, _ago),
    (_PERIOD_RE, _past_period),
    (_DAY_RE, _past_day),
    (_MONTH_RE, _month_of),
    (_WEEKDAY_RE, _asked_weekday),
)


def window(text: str, now: float, zone: tzinfo) -> Window | None:
    """Return the time the message names (its first such phrase), or None if it names none.

    Only the past and the present: "tomorrow" or "next week" name nothing said yet."""
    today = local_day(now, zone)
    hits, t = _found(text, _READ_RULES)
    for match, meaning in hits:
        span = meaning(match, today, t)
        if span is not None:
            return Window(_midnight(span.first, zone), _midnight(span.last + timedelta(1), zone))
    return None


def _midnight(day: date, zone: tzinfo) -> float:
    """The instant `day` starts in `zone` (where midnight is skipped by a DST change, the
    instant the wall clock reads it anyway: the first hour of that day)."""
    return datetime(day.year, day.month, day.day, tzinfo=zone).timestamp()


# --- reading: a time to come asked about ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ahead:
    """A time to come a message asks about: its days (from the day asked on at the earliest)
    and the words that named it, as typed."""

    span: Span
    words: str


_ASKING_RE = re.compile(_B + _alt(_phrases("ASKING")) + _E)
# Only before a word: « j'ai rien de prévu ce soir si ? » asks.
_SUPPOSING_RE = re.compile(_B + _alt(_phrases("SUPPOSING")) + r"(?=\s+[^\W\d_])")
_QUESTION_END = re.compile(r"[.!?…]+")


def _asks(t: _Text, start: int, end: int) -> bool:
    """Whether the sentence holding `start`:`end` asks (its end mark is a question mark, or it
    holds an asking word) and does not suppose ("if", « si », "imagine")."""
    ends = [m.start() for m in _SENTENCE_END.finditer(t.shadow)]
    before, after = _around(ends, start, end, len(t.shadow))
    sentence = t.shadow[before:after]
    if _SUPPOSING_RE.search(sentence):
        return False
    mark = _QUESTION_END.match(t.shadow, after)
    return (mark is not None and "?" in mark.group()) or _ASKING_RE.search(sentence) is not None


def _coming_day(m: re.Match[str], today: date, t: _Text) -> Span | None:
    """A day word ahead ("tomorrow"), or today unless the sentence is past ("what did you do
    today?")."""
    offset = _DAY_OFFSETS[_key(m["d"])]
    if offset < 0 or (offset == 0 and t.tense(m.start(), m.end()) == PAST):
        return None
    return _day(today + timedelta(days=offset))


def _coming_period(m: re.Match[str], today: date, t: _Text) -> Span | None:
    """A period ahead ("next week"), or the one under way unless the sentence is past."""
    unit, offset = _PERIODS[_key(m["p"])]
    if offset < 0 or (offset == 0 and t.tense(m.start(), m.end()) == PAST):
        return None
    return _period(today, unit, offset)


def _coming_part(m: re.Match[str], today: date, t: _Text) -> Span | None:
    """Part of a period under way or ahead ("at the end of the month"), not of one gone."""
    unit, offset, part = _PERIOD_PARTS[_key(m["p"])]
    if offset < 0 or part == "sofar" or t.tense(m.start(), m.end()) == PAST:
        return None
    return _part(_period(today, unit, offset), part, today)


def _coming_month(m: re.Match[str], today: date, t: _Text) -> Span | None:
    """A month named ("in January"): the next one of that name, this one from today."""
    if t.tense(m.start(), m.end()) == PAST:
        return None
    month = _MONTHS[_key(m["m"])]
    year = today.year if month >= today.month else today.year + 1
    whole = _period(date(year, month, 1), "month", 0)
    part = _MONTH_PARTS.get(_key(m["pre"]))
    return whole if part is None else _part(whole, part, today)


def _coming_weekday(m: re.Match[str], today: date, t: _Text) -> Span | None:
    """A weekday ahead: as the write side dates it ("next friday", a bare one in a sentence
    that is not past); one gone asks nothing here."""
    direction = _weekday_direction(m, t)
    if direction not in ("next", AHEAD):
        return None
    this = direction == AHEAD and bool(m["pre"]) and _key(m["pre"]) in _THIS
    return _ahead(today, _WEEKDAYS[_key(m["w"])], this)


_AHEAD_RULES: tuple[_Rule, ...] = (
    (_PERIOD_PART_RE, _coming_part),
    (_DURATION_RE, lambda m, t, _: _day(t + timedelta(days=_DURATIONS[_key(m["d"])]))),
    (_IN_UNITS_RE, _in_units),
    (_PERIOD_RE, _coming_period),
    (_DAY_RE, _coming_day),
    (_MONTH_RE, _coming_month),
    (_WEEKDAY_RE, _coming_weekday),
)


def ahead(text: str, now: float, zone: tzinfo) -> Ahead | None:
    """Return the time to come the message asks about (its first such phrase in a sentence
    that asks and does not suppose), or None: "what do I have tomorrow?", « j'ai quoi ce
    week-end », not "I have an exam tomorrow" (it tells) nor "what did I do yesterday?"."""
    today = local_day(now, zone)
    hits, t = _found(text, _AHEAD_RULES)
    for match, meaning in hits:
        span = meaning(match, today, t)
        if span is None or span.last < today or not _asks(t, match.start(), match.end()):
            continue
        return Ahead(Span(max(span.first, today), span.last), text[match.start() : match.end()])
    return None
