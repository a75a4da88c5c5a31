"""Relative dates in memories and time windows in messages on the held-out corpus
(tests/corpora/truth/dates.py): per language and half, the dated texts dated right, the texts
naming no date left undated (the rest are false resolutions), the windows right; the test
half's misses one per line. Part of make bench-truth (bench/truth/run.py)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bench.truth.report import Figure, Section
from memory.lexicon.dates import annotate, window
from tests.corpora.truth import dates as corpus
from tests.corpora.truth.dates import DateCase, WindowCase


def _instant(said: tuple[str, str]) -> tuple[float, ZoneInfo]:
    zone = ZoneInfo(said[1])
    return datetime.fromisoformat(said[0]).replace(tzinfo=zone).timestamp(), zone


def dated(case: DateCase) -> tuple[str, ...]:
    """The labels `annotate` gives the case's text, said at its instant."""
    now, zone = _instant(case.said)
    return tuple(span.label for span in annotate(case.text, now, zone)[1])


def windowed(case: WindowCase) -> tuple[str, str] | None:
    """The [first day, day after the last) `window` reads in the case's message, or None."""
    now, zone = _instant(case.said)
    found = window(case.text, now, zone)
    if found is None:
        return None
    return (
        datetime.fromtimestamp(found.start, zone).date().isoformat(),
        datetime.fromtimestamp(found.end, zone).date().isoformat(),
    )


def figures(half: str, dates: list[DateCase], windows: list[WindowCase]) -> list[Figure]:
    """The three rates of one half, per language."""
    out = []
    for language in ("fr", "en"):
        with_date = [c for c in dates if c.language == language and c.expected]
        without = [c for c in dates if c.language == language and not c.expected]
        asked = [c for c in windows if c.language == language]
        out += [
            Figure(language, half, "dates right", _dated_right(with_date), len(with_date)),
            Figure(language, half, "no date, none given", _dated_right(without), len(without)),
            Figure(language, half, "windows right", _windows_right(asked), len(asked)),
        ]
    return out


def _dated_right(cases: list[DateCase]) -> int:
    return sum(dated(c) == c.expected for c in cases)


def _windows_right(cases: list[WindowCase]) -> int:
    return sum(windowed(c) == c.expected for c in cases)


def misses(dates: list[DateCase], windows: list[WindowCase]) -> list[str]:
    """One line per case the rules get wrong: language, kind, class, text, expected, got."""
    out = []
    for case in dates:
        if (got := dated(case)) != case.expected:
            out.append(_line(case, "date", case.expected, got))
    for asked in windows:
        if (found := windowed(asked)) != asked.expected:
            out.append(_line(asked, "window", asked.expected, found))
    return out


def _line(case: DateCase | WindowCase, kind: str, expected: object, got: object) -> str:
    said = f"{case.said[0]} {case.said[1]}"
    return (
        f"{case.language} {kind} [{case.tag}] {case.text!r} said {said}: expected {expected}, "
        f"got {got}"
    )


def sections() -> list[Section]:
    """The dates section of make bench-truth."""
    return [
        Section(
            title="Relative dates and time windows",
            figures=[
                *figures("dev", corpus.DEV_DATES, corpus.DEV_WINDOWS),
                *figures("test", corpus.TEST_DATES, corpus.TEST_WINDOWS),
            ],
            misses=misses(corpus.TEST_DATES, corpus.TEST_WINDOWS),
            notes=(
                "`no date, none given`: memory texts naming no date that got none (the rest "
                "are false resolutions). Windows count the messages asking about no time too."
            ),
        )
    ]


if __name__ == "__main__":
    for f in sections()[0].figures:
        print(f"{f.language} {f.half:4} {f.measure:20} {f.right}/{f.total} {f.share:.0%}")
