"""Questions about a time to come (memory.lexicon.dates.ahead): the corpus they were read off,
and properties over drawn instants and time zones: a question about tomorrow asks about the
day after the one it is asked on where it is asked, a statement or a past question about the
same day asks nothing."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from bench.ahead import found, misses
from memory.lexicon.dates import ahead, local_day
from tests.corpora.ahead import HELD_OUT, MON, TUNE
from tests.memory.lexicon.test_dates import instants, zones


def test_every_case_the_rule_was_written_on_is_right() -> None:
    assert misses(TUNE) == []


def test_the_held_out_half_stays_above_what_was_measured() -> None:
    # Measured 58/61 when the rule was written (`make bench-ahead` lists the three misses): a
    # change that loses held-out cases is a regression, whatever it wins on the tuned half.
    right = len(HELD_OUT) - len(misses(HELD_OUT))
    assert right >= 58, f"{right}/{len(HELD_OUT)}"


def test_the_words_that_named_the_time_are_kept_as_typed() -> None:
    asked = ahead("ok so what do i have TMRW??", 1_765_000_000.0, ZoneInfo("Europe/Paris"))
    assert asked is not None and asked.words == "TMRW"


def test_this_week_asked_on_a_thursday_starts_that_day() -> None:
    case = ("what else do I have this week", ("2026-12-10T09:00", "Europe/Paris"), None)
    assert found(case) == "2026-12-10/2026-12-13"


def test_a_question_after_a_statement_asks_about_its_own_time() -> None:
    case = ("I have an exam tomorrow. what do i have on friday?", MON, None)
    assert found(case) == "2026-12-11"


@given(instants, zones, st.sampled_from(["en", "fr"]))
def test_tomorrow_asked_is_the_next_day_there_and_told_or_gone_asks_nothing(
    now: float, zone: ZoneInfo, language: str
) -> None:
    asking, telling, past = {
        "en": ("what do I have tomorrow?", "I have an exam tomorrow", "what did I do yesterday?"),
        "fr": ("j'ai quoi demain ?", "j'ai un exam demain", "qu'est-ce que j'ai fait hier ?"),
    }[language]
    asked = ahead(asking, now, zone)
    tomorrow = local_day(now, zone) + timedelta(days=1)
    assert asked is not None and (asked.span.first, asked.span.last) == (tomorrow, tomorrow)
    assert ahead(telling, now, zone) is None
    assert ahead(past, now, zone) is None


@given(instants, zones, st.sampled_from(["this week", "this month", "ce week-end", "next week"]))
def test_a_time_to_come_never_starts_before_the_day_asked_on(
    now: float, zone: ZoneInfo, period: str
) -> None:
    asked = ahead(f"what do I have {period}?", now, zone)
    today = local_day(now, zone)
    assert asked is not None and today <= asked.span.first <= asked.span.last
