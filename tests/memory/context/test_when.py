"""Dates in words: the day and time the prompt says, when a memory was said, a silence in the
history. The oracle is the standard library's own calendar in the same zone (strftime under
the C locale), over drawn instants and drawn zones, with the daylight-saving edges spelled out."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from memory.context.when import (
    Language,
    exchange_line,
    gap_line,
    long_date,
    now_line,
    said_on,
    short_date,
    without_gap,
)

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


# The words that say a date in each language, as each writes them (case and all): a French line
# holds none of the English ones, an English line none of the French ones.
ENGLISH_WORDS = {
    *"Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(),
    *"Mon Tue Wed Thu Fri Sat Sun".split(),
    *"January February March April May June July August September October November".split(),
    *"December Jan Feb Mar Apr Jun Jul Aug Sep Oct Nov Dec".split(),
    *"today yesterday ago later day days week weeks month months year years Now".split(),
}
FRENCH_WORDS = {
    *"lundi mardi mercredi jeudi vendredi samedi dimanche lun mar mer jeu ven sam dim".split(),
    *"janvier février mars avril mai juin juillet août septembre octobre novembre".split(),
    *"décembre janv févr avr juil sept oct nov déc 1er".split(),
    *"aujourd’hui hier il y plus tard jour jours semaine semaines mois an ans Nous".split(),
}


def _words_of(line: str) -> set[str]:
    return set(re.findall(r"[\w’]+", line))


@given(instants, st.floats(min_value=0, max_value=3 * 365 * DAY), zones)
def test_each_language_says_every_date_in_its_own_words_only(
    now: float, ago: float, zone: ZoneInfo
) -> None:
    at = max(1.0, now - ago)
    for lang, foreign in (("en", FRENCH_WORDS), ("fr", ENGLISH_WORDS)):
        lines = [
            now_line(now, zone, lang),
            exchange_line(at, zone, lang),
            said_on(at, now, zone, lang),
            gap_line(at, at + DAY + max(DAY, ago), zone, lang),
        ]
        assert all(lines), lines
        # A zone's own name may hold a word of either ("America/Punta_Arenas"): not ours.
        said = _words_of(" ".join(lines)) - _words_of(zone.key)
        assert not said & foreign, (lang, lines)
        gap = lines[-1]
        assert without_gap(f"{gap}\nMarie: bonjour") == "Marie: bonjour"
        # Any one language's history reads without any language's gap line.
        assert without_gap(f"{gap}\n— Marie: tiens") == "— Marie: tiens"


def test_french_dates_as_people_write_them() -> None:
    zone = ZoneInfo("Europe/Paris")
    now = datetime(2026, 12, 2, 15, 0, tzinfo=zone).timestamp()

    def ago(**kw: float) -> str:
        then = (datetime.fromtimestamp(now, zone) - timedelta(**kw)).timestamp()
        return said_on(then, now, zone, "fr")

    assert ago(hours=2) == "aujourd’hui"
    assert ago(days=1) == "hier"
    assert ago(days=2) == "lun. 30 nov., il y a deux jours"
    assert ago(days=1, hours=14, minutes=1) == "hier"  # 00:59 on 1 Dec is still yesterday
    assert ago(days=7) == "25 nov., il y a sept jours"
    assert ago(days=14) == "18 nov., il y a deux semaines"
    assert ago(days=20) == "12 nov., il y a deux semaines"
    assert ago(days=21) == "11 nov., il y a trois semaines"
    assert ago(days=59) == "4 oct., il y a huit semaines"
    assert ago(days=60) == "3 oct., il y a deux mois"  # "un mois" never: weeks until 60 days
    assert ago(days=100) == "24 août, il y a trois mois"
    assert ago(days=400) == "28 oct. 2025, il y a un an"
    assert ago(days=800) == "23 sept. 2024, il y a deux ans"
    assert said_on(now + 2 * DAY, now, zone, "fr") == "4 déc."
    first = datetime(2026, 12, 1, 9, 5, tzinfo=zone).timestamp()
    assert now_line(first, zone, "fr") == (
        "Nous sommes le mardi 1er décembre 2026, il est 9 h 05 (Europe/Paris, UTC+01:00)."
    )
    assert exchange_line(now, zone, "fr") == (
        "L’échange a eu lieu le mercredi 2 décembre 2026 à 15 h 00 (Europe/Paris, UTC+01:00)."
    )
    assert gap_line(first - 4 * DAY, now + 2 * DAY, zone, "fr") == (
        "— sept jours plus tard, ven. 4 déc. —"
    )
    assert gap_line(first, first + DAY, zone, "fr") == "— un jour plus tard, mer. 2 déc. —"


@given(st.dates(), st.sampled_from(("en", "fr")))
def test_a_month_is_abbreviated_with_a_dot_unless_it_is_short_already(
    day: date, language: Language
) -> None:
    said = short_date(day, language=language)
    number, month, year = said.split(" ")
    assert year == str(day.year)
    assert number == ("1er" if day.day == 1 and language == "fr" else str(day.day))
    if language == "en":
        assert month == f"{day:%b}"
    else:
        full = long_date(day, "fr").split(" ")[2]
        assert month == (full if len(full) <= 4 else month.rstrip(".") + ".")
        assert month.islower() and full.startswith(month.rstrip("."))
