"""Dates in words: the day and time the prompt says, when a memory was said, a silence in the
history. The oracle is the standard library's own calendar in the same zone (strftime under
the C locale), over drawn instants and drawn zones, with the daylight-saving edges spelled out."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from memory.context.when import gap_line, now_line, said_on, without_gap

# 1970 to 2100: every instant a bot may see, and then some.
instants = st.integers(min_value=0, max_value=4_102_444_800).map(float)
zones = st.timezones()
DAY = 86_400.0


def _wall(at: float, zone: ZoneInfo) -> datetime:
    return datetime.fromtimestamp(at, tz=zone)


@given(instants, zones)
def test_the_prompt_says_the_weekday_date_and_time_of_the_zone(at: float, zone: ZoneInfo) -> None:
    wall = _wall(at, zone)
    line = now_line(at, zone)
    assert f"{wall:%A} {wall.day} {wall:%B} {wall.year}, {wall:%H:%M}" in line
    assert zone.key in line


def test_daylight_saving_edges_move_the_clock_not_the_day() -> None:
    paris, new_york = ZoneInfo("Europe/Paris"), ZoneInfo("America/New_York")
    spring = datetime(2026, 3, 29, 1, 0, tzinfo=UTC).timestamp()  # 02:00 in Paris becomes 03:00
    assert "Sunday 29 March 2026, 01:59 (Europe/Paris, UTC+01:00)" in now_line(spring - 60, paris)
    assert "Sunday 29 March 2026, 03:00 (Europe/Paris, UTC+02:00)" in now_line(spring, paris)
    # New York's fall back: 01:30 comes twice, told apart by the offset.
    fall = datetime(2026, 11, 1, 5, 30, tzinfo=UTC).timestamp()
    assert "01:30 (America/New_York, UTC-04:00)" in now_line(fall, new_york)
    assert "01:30 (America/New_York, UTC-05:00)" in now_line(fall + 3600, new_york)
    # A 23-hour day is still one day: said the evening before, it is "yesterday" the day after.
    evening = datetime(2026, 3, 28, 23, 30, tzinfo=paris).timestamp()
    assert said_on(evening, datetime(2026, 3, 29, 22, 0, tzinfo=paris).timestamp(), paris) == (
        "yesterday"
    )


@given(instants, st.floats(min_value=0, max_value=3 * 365 * DAY), zones)
def test_a_memory_is_dated_by_the_calendar_of_the_zone(
    now: float, ago: float, zone: ZoneInfo
) -> None:
    at = max(1.0, now - ago)
    then, today = _wall(at, zone).date(), _wall(now, zone).date()
    said = said_on(at, now, zone)
    days = (today - then).days
    if days == 0:
        assert said == "today"
    elif days == 1:
        assert said == "yesterday"
    else:
        date = f"{then.day} {then:%b}" + ("" if then.year == today.year else f" {then.year}")
        assert said.startswith((date, f"{then:%a} {date}")) and said.endswith(" ago")
        if days < 7:
            assert said.startswith(f"{then:%a} ")


def test_relative_words_a_person_would_use() -> None:
    zone = ZoneInfo("Europe/Paris")
    now = datetime(2026, 12, 2, 15, 0, tzinfo=zone).timestamp()

    def ago(**kw: float) -> str:
        return said_on((datetime.fromtimestamp(now, zone) - timedelta(**kw)).timestamp(), now, zone)

    assert ago(hours=2) == "today"
    assert ago(days=1) == "yesterday"
    assert ago(days=2) == "Mon 30 Nov, two days ago"
    assert ago(days=20) == "12 Nov, two weeks ago"
    assert ago(days=21) == "11 Nov, three weeks ago"
    assert ago(days=100) == "24 Aug, three months ago"
    assert ago(days=400) == "28 Oct 2025, a year ago"
    assert said_on(0.0, now, zone) == ""  # not known: nothing said rather than 1 Jan 1970
    assert said_on(now + 2 * DAY, now, zone) == "4 Dec"  # a clock put back: the date alone


@given(instants, st.floats(min_value=0, max_value=400 * DAY), zones)
def test_a_silence_of_a_day_or_more_is_marked_with_the_day_it_ended(
    before: float, silence: float, zone: ZoneInfo
) -> None:
    before = max(1.0, before)
    after = before + silence
    line = gap_line(before, after, zone)
    if silence < DAY:
        assert line == ""
        return
    day = _wall(after, zone)
    assert re.fullmatch(r"— (a|\w+|\d+) (day|week|month|year)s? later, \w{3} \d+ \w{3}( \d+)? —",
                        line), line  # fmt: skip
    assert f"{day:%a} {day.day} {day:%b}" in line
    # The condensed history reads the message without it.
    assert without_gap(f"{line}\nMarie: hello") == "Marie: hello"
