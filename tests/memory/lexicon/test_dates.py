"""The relative-date resolver and the time-window parser: their corpus, and properties over
drawn instants, time zones (DST edges among them) and phrasings, French and English."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from types import ModuleType
from zoneinfo import ZoneInfo

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bench.dates import resolved, windowed
from bench.truth import blind as truth_blind
from bench.truth import dates as truth_dates
from memory.lexicon import dates
from memory.lexicon.dates import annotate, dated_phrases, local_day, resolve, window
from tests.corpora import dates_en, dates_fr

ZONES = [
    "Europe/Paris",
    "America/New_York",
    "America/Santiago",  # its DST changes at midnight: a day starting at 01:00
    "Australia/Lord_Howe",  # a half-hour DST
    "Pacific/Apia",
    "Asia/Kolkata",
    "America/St_Johns",
    "UTC",
]
# Instants of DST changes (UTC) to draw near: the hours around them are where a day is 23 or
# 25 hours long and a naive "now + 86400" lands on the wrong day.
CHANGES = [
    datetime(2026, 3, 29, 1, tzinfo=UTC),  # Paris, spring
    datetime(2026, 10, 25, 1, tzinfo=UTC),  # Paris, autumn
    datetime(2026, 3, 8, 7, tzinfo=UTC),  # New York
    datetime(2026, 11, 1, 6, tzinfo=UTC),
    datetime(2026, 4, 5, 3, tzinfo=UTC),  # Santiago, midnight
    datetime(2026, 9, 6, 4, tzinfo=UTC),
]
WEEKDAYS = [
    ("monday", "lundi"),
    ("tuesday", "mardi"),
    ("wednesday", "mercredi"),
    ("thursday", "jeudi"),
    ("friday", "vendredi"),
    ("saturday", "samedi"),
    ("sunday", "dimanche"),
]

zones = st.sampled_from(ZONES).map(ZoneInfo)
instants = st.one_of(
    st.floats(min_value=1.5e9, max_value=2.2e9),
    st.tuples(st.sampled_from(CHANGES), st.floats(min_value=-40 * 3600, max_value=40 * 3600)).map(
        lambda c: c[0].timestamp() + c[1]
    ),
)
weekdays = st.sampled_from(list(enumerate(WEEKDAYS)))


def _days(text: str, now: float, zone: ZoneInfo) -> list[date]:
    return [m.span.first for m in resolve(text, now, zone)]


@pytest.mark.parametrize("corpus", [dates_en, dates_fr], ids=["en", "fr"])
def test_the_corpus_resolves_as_labelled_but_its_known_misses(corpus: ModuleType) -> None:
    assert len(corpus.DATES) >= 40 and len(corpus.WINDOWS) >= 40
    for text, expected in corpus.DATES:
        got = resolved(corpus, text)
        assert (got == expected) != (text in corpus.KNOWN_MISSES), (text, got)
    for text, window_expected in corpus.WINDOWS:
        found = windowed(corpus, text)
        assert (found == window_expected) != (text in corpus.KNOWN_MISSES), (text, found)


@settings(max_examples=150, deadline=None)
@given(now=instants, zone=zones, day=weekdays, capital=st.booleans())
def test_next_weekday_is_one_to_seven_days_ahead_on_that_weekday_in_both_languages(
    now: float, zone: ZoneInfo, day: tuple[int, tuple[str, str]], capital: bool
) -> None:
    index, (english, french) = day
    today = local_day(now, zone)
    english = english.capitalize() if capital else english
    phrasings = [
        f"Has an interview next {english}",
        f"Has an interview on {english}",
        f"A un entretien {french} prochain",
        f"A un entretien {french}",
    ]
    meant = {d for text in phrasings for d in _days(text, now, zone)}
    assert len(meant) == 1, (phrasings, meant)
    (found,) = meant
    assert 1 <= (found - today).days <= 7 and found.weekday() == index


@settings(max_examples=150, deadline=None)
@given(now=instants, zone=zones, day=weekdays)
def test_this_and_last_weekday_agree_across_languages(
    now: float, zone: ZoneInfo, day: tuple[int, tuple[str, str]]
) -> None:
    index, (english, french) = day
    today = local_day(now, zone)
    this = _days(f"is free this {english}", now, zone)
    assert this == _days(f"est libre ce {french}", now, zone)
    assert 0 <= (this[0] - today).days <= 6 and this[0].weekday() == index
    last = _days(f"went out last {english}", now, zone)
    assert last == _days(f"est sorti {french} dernier", now, zone)
    assert 1 <= (today - last[0]).days <= 7 and last[0].weekday() == index


EQUIVALENT = [
    ("tomorrow", "demain", 1),
    ("the day after tomorrow", "après-demain", 2),
    ("yesterday", "hier", -1),
    ("the day before yesterday", "avant-hier", -2),
    ("tonight", "ce soir", 0),
    ("today", "aujourd'hui", 0),
    ("in a week", "dans huit jours", 7),
    ("in two weeks", "dans quinze jours", 14),
    ("in two weeks", "dans deux semaines", 14),
]


@settings(max_examples=150, deadline=None)
@given(
    now=instants,
    zone=zones,
    pair=st.sampled_from(EQUIVALENT),
    n=st.integers(min_value=1, max_value=60),
)
def test_equivalent_phrasings_mean_the_same_day_in_both_languages(
    now: float, zone: ZoneInfo, pair: tuple[str, str, int], n: int
) -> None:
    english, french, offset = pair
    today = local_day(now, zone)
    assert _days(f"Léa sees Paul {english}", now, zone) == [today + timedelta(days=offset)]
    assert _days(f"Léa voit Paul {french}", now, zone) == [today + timedelta(days=offset)]
    assert _days(f"moves in {n} days", now, zone) == _days(f"déménage dans {n} jours", now, zone)
    assert _days(f"moves in {n} days", now, zone) == [today + timedelta(days=n)]


@settings(max_examples=150, deadline=None)
@given(
    now=instants,
    zone=zones,
    pair=st.sampled_from(
        [
            ("next week", "la semaine prochaine"),
            ("last week", "la semaine dernière"),
            ("this weekend", "ce week-end"),
            ("next month", "le mois prochain"),
            ("last month", "le mois dernier"),
            ("next year", "l'année prochaine"),
        ]
    ),
)
def test_periods_agree_across_languages_and_hold_what_they_name(
    now: float, zone: ZoneInfo, pair: tuple[str, str]
) -> None:
    english, french = pair
    (en_span,) = [m.span for m in resolve(f"starts {english}", now, zone)]
    (fr_span,) = [m.span for m in resolve(f"commence {french}", now, zone)]
    assert en_span == fr_span
    today = local_day(now, zone)
    if "week" in english and "end" not in english:
        assert en_span.first.weekday() == 0 and (en_span.last - en_span.first).days == 6
        assert abs((en_span.first - (today - timedelta(days=today.weekday()))).days) == 7
    if "month" in english:
        assert en_span.first.day == 1 and (en_span.last + timedelta(days=1)).day == 1
        assert en_span.first.month != today.month


@settings(max_examples=150, deadline=None)
@given(
    now=instants, zone=zones, text=st.sampled_from([t for t, _ in dates_en.DATES + dates_fr.DATES])
)
def test_annotating_twice_changes_nothing_and_the_dates_are_found_again(
    now: float, zone: ZoneInfo, text: str
) -> None:
    once, spans = annotate(text, now, zone)
    again, spans_again = annotate(once, now, zone)
    assert again == once and spans_again == spans
    assert [label for _, _, label in dated_phrases(once)] == [s.label for s in spans]
    # The person's words are all there, in order: only the dates were added.
    assert re.sub(r" \(\d{4}[-0-9/]*\)", "", once) == text


@settings(max_examples=150, deadline=None)
@given(
    now=instants,
    zone=zones,
    text=st.sampled_from(
        ["what did I say yesterday?", "qu'est-ce que j'ai dit hier ?", "last week", "la semaine "
         "dernière", "in March", "en mars", "two days ago", "il y a deux jours", "début du mois",
         "at the start of the month", "this morning", "ce matin", "last year", "l'an dernier"]
    ),
)  # fmt: skip
def test_a_window_is_whole_local_days_in_the_past_or_present(
    now: float, zone: ZoneInfo, text: str
) -> None:
    found = window(text, now, zone)
    assert found is not None and found.start < found.end
    start, end = datetime.fromtimestamp(found.start, zone), datetime.fromtimestamp(found.end, zone)
    # Local midnights, or the first hour of a day whose midnight a DST change skips.
    assert start.minute == 0 and start.hour <= 1 and end.minute == 0 and end.hour <= 1
    assert found.start <= now  # never a time nobody could have said anything in yet
    if text in ("this morning", "ce matin"):
        assert found.start <= now < found.end
    if text in ("what did I say yesterday?", "qu'est-ce que j'ai dit hier ?"):
        assert start.date() == local_day(now, zone) - timedelta(days=1)
        assert found.end <= now


@settings(max_examples=150, deadline=None)
@given(
    now=instants,
    zone=zones,
    words=st.lists(
        st.sampled_from(
            "I you she loves may march Mars planet cats tea Tuesdays Mondays every le lundi "
            "chaque mission vers chats il y a deux thé next time last one a few quelques".split()
        ),
        max_size=12,
    ),
)
def test_a_message_naming_no_time_gives_no_window(
    now: float, zone: ZoneInfo, words: list[str]
) -> None:
    text = " ".join(words)
    # Near misses only: no unit ("il y a deux" names no time without "jours"), no "in" before
    # "may"/"march" ("in May" does name one). "last lundi" does name one: the word lists are
    # read together, so a Franglais "last lundi" is last Monday (found by Hypothesis).
    assume("last lundi" not in text)
    assert window(text, now, zone) is None, text


# --- the held-out corpus (tests/corpora/truth/dates.py) and the rules tuned on its dev half ----

# What the rules gave when they were final (make bench-truth): a fall below fails. The test
# half was measured once, after the rules were final; the corpus and the rules have one author,
# so these are upper bounds of what phrasing written elsewhere gets.
FLOORS = {
    ("fr", "dev", "dates right"): 30,
    ("fr", "dev", "no date, none given"): 12,
    ("fr", "dev", "windows right"): 27,
    ("en", "dev", "dates right"): 30,
    ("en", "dev", "no date, none given"): 10,
    ("en", "dev", "windows right"): 28,
    ("fr", "test", "dates right"): 30,
    ("fr", "test", "no date, none given"): 12,
    ("fr", "test", "windows right"): 28,
    ("en", "test", "dates right"): 29,
    ("en", "test", "no date, none given"): 11,
    ("en", "test", "windows right"): 28,
}


def test_the_held_out_halves_stay_at_their_measured_floors() -> None:
    (section,) = truth_dates.sections()
    got = {(f.language, f.half, f.measure): f.right for f in section.figures}
    assert got.keys() == FLOORS.keys()
    assert {k: v for k, v in got.items() if v < FLOORS[k]} == {}


SATURDAY = datetime(2026, 12, 12, 18, 30, tzinfo=ZoneInfo("Europe/Paris")).timestamp()
MONDAY = datetime(2026, 12, 14, 9, 15, tzinfo=ZoneInfo("America/New_York")).timestamp()
WEDNESDAY = datetime(2026, 12, 9, 13, 0, tzinfo=ZoneInfo("America/New_York")).timestamp()
PARIS, NEW_YORK = ZoneInfo("Europe/Paris"), ZoneInfo("America/New_York")


def _labels(text: str, now: float = SATURDAY, zone: ZoneInfo = PARIS) -> list[str]:
    return [span.label for span in annotate(text, now, zone)[1]]


def _window(text: str, now: float = SATURDAY, zone: ZoneInfo = PARIS) -> tuple[str, str] | None:
    found = window(text, now, zone)
    if found is None:
        return None
    return (
        datetime.fromtimestamp(found.start, zone).date().isoformat(),
        datetime.fromtimestamp(found.end, zone).date().isoformat(),
    )


@settings(max_examples=150, deadline=None)
@given(now=instants, zone=zones, day=weekdays)
def test_a_weekday_in_a_past_sentence_is_the_last_such_day_in_both_languages(
    now: float, zone: ZoneInfo, day: tuple[int, tuple[str, str]]
) -> None:
    index, (english, french) = day
    today = local_day(now, zone)
    past = [
        f"Went to a concert on {english.capitalize()}",
        f"Didn't sleep at all {english} night",
        f"On {english.capitalize()} she lost her wallet",
        f"Est allée au cinéma {french}",
        f"S'est disputée avec son frère {french}",
        f"{french.capitalize()}, il a perdu son portefeuille",
    ]
    meant = {d for text in past for d in _days(text, now, zone)}
    assert len(meant) == 1, (past, meant)
    (found,) = meant
    # The same weekday as today is a week ago: today would be "today".
    assert 1 <= (today - found).days <= 7 and found.weekday() == index
    # Counter-examples: a plan made in the past, a present or future sentence: ahead.
    ahead = [
        f"Booked a table for {english.capitalize()}",
        f"Said she'd come over on {english.capitalize()}",
        f"Is going to a gig on {english.capitalize()}",
        f"Finished his exams and flies home on {english.capitalize()}",
        f"A réservé un resto pour {french}",
        f"A prévu de partir {french}",
        f"Son vol a été décalé à {french}",
    ]
    later = {d for text in ahead for d in _days(text, now, zone)}
    assert len(later) == 1, (ahead, later)
    assert 1 <= (later.pop() - today).days <= 7


@settings(max_examples=150, deadline=None)
@given(now=instants, zone=zones, n=st.integers(min_value=1, max_value=60))
def test_days_ago_in_a_memory_is_that_day_in_both_languages(
    now: float, zone: ZoneInfo, n: int
) -> None:
    today = local_day(now, zone)
    assert _days(f"Adopted a cat {n} days ago", now, zone) == [today - timedelta(days=n)]
    assert _days(f"A adopté un chat il y a {n} jours", now, zone) == [today - timedelta(days=n)]
    assert _days(f"a commencé le yoga y a {n} jours", now, zone) == [today - timedelta(days=n)]
    # Counter-example: no number, no date.
    assert _days("Adopted a cat a few days ago", now, zone) == []


@pytest.mark.parametrize(
    "text",
    ["has a dentist appt tmrw", "moving out 2moro", "exam tomorow", "A un exam dem1",
     "doit rendre son dossier 2main", "a piscine dmain"],
)  # fmt: skip
def test_chat_spellings_of_tomorrow_are_tomorrow(text: str) -> None:
    assert _labels(text) == ["2026-12-13"]


def test_chat_spellings_of_today_and_yesterday_and_the_afternoon() -> None:
    assert _labels("got her results yday") == ["2026-12-11"]
    assert _labels("Has a date tonite") == _labels("Voit sa sœur cet aprem") == ["2026-12-12"]
    assert _labels("Va chez le coiffeur ajd") == _labels("Job interview this arvo")
    # Counter-examples: a festival, a course two days long.
    assert _labels("Went to Tomorrowland in Belgium") == []
    assert _labels("Took a 2day course") == []


def test_day_after_tomorrow_without_the_is_two_days_on() -> None:
    assert _labels("Is babysitting day after tomorrow") == ["2026-12-14"]
    assert _labels("Broke up with her bf day before yesterday") == ["2026-12-10"]


@pytest.mark.parametrize(
    "text",
    ["Loves the song Yesterday by the Beatles", "Watched Edge of Tomorrow twice",
     "Watches the Today show every morning", "Listened to 'Yesterday Once More' on repeat",
     "A adoré le film « Demain » de Cyril Dion", "Relit le roman Demain les chiens",
     "Has a dog named Tuesday", "A un chat qui s'appelle Mardi"],
)  # fmt: skip
def test_titles_of_works_and_names_are_not_dates(text: str) -> None:
    assert _labels(text) == []


def test_a_day_word_opening_a_sentence_or_in_lower_case_is_still_a_date() -> None:
    assert _labels("Tomorrow she flies to Rome") == ["2026-12-13"]
    assert _labels("Is tired. Tomorrow she flies to Rome") == ["2026-12-13"]
    assert _labels("Rewatched The Day After Tomorrow last night") == ["2026-12-11"]
    assert _labels("HAS AN EXAM TOMORROW") == ["2026-12-13"]


def test_two_weekdays_as_a_span_are_a_habit() -> None:
    assert _labels("Works Monday to Friday at a bakery") == []
    assert _labels("Bosse du lundi au vendredi") == []
    assert _labels("Has a meeting on Monday and a lunch on Friday") == ["2026-12-14", "2026-12-18"]


def test_this_weekend_in_a_past_sentence_said_on_a_weekday_is_the_one_gone() -> None:
    gone = "2026-12-12/2026-12-13"
    assert _labels("Visited her parents this weekend", MONDAY, NEW_YORK) == [gone]
    assert _labels("Est allée voir ses parents ce week-end", MONDAY, NEW_YORK) == [gone]
    assert _labels("Is going hiking this weekend", WEDNESDAY, NEW_YORK) == [gone]
    # Said on a Saturday, the weekend under way.
    assert _labels("Went clubbing this weekend") == [gone]
    assert _window("what did we chat about this weekend?", MONDAY, NEW_YORK) == (
        "2026-12-12",
        "2026-12-14",
    )
    assert _window("what are you up to this weekend?", WEDNESDAY, NEW_YORK) is None
    assert _window("tu fais quoi ce week-end ?", WEDNESDAY, NEW_YORK) is None


def test_a_weekday_asked_in_the_past_tense_is_the_last_such_day() -> None:
    tuesday = ("2026-12-08", "2026-12-09")
    assert _window("remember what I said on Tuesday?") == tuesday
    assert _window("je t'ai dit quoi mardi ?") == tuesday
    assert _window("what did I tell you Saturday") == ("2026-12-05", "2026-12-06")
    # Counter-examples: a plan asks nothing.
    assert _window("what are you doing Tuesday?") is None
    assert _window("je te raconte mardi") is None
    assert _window("I'll tell you on Tuesday") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("I told you about it mid-November", ("2026-11-11", "2026-11-21")),
     ("je t'en ai parlé mi-novembre", ("2026-11-11", "2026-11-21")),
     ("it was late November I think", ("2026-11-21", "2026-12-01")),
     ("c'était fin novembre", ("2026-11-21", "2026-12-01")),
     ("I mentioned it in early October", ("2026-10-01", "2026-10-11")),
     ("je t'avais dit un truc début octobre", ("2026-10-01", "2026-10-11")),
     ("I'm running late", None),
     ("j'adore le mois de mai", None)],
)  # fmt: skip
def test_month_parts_name_a_third_of_the_month(text: str, expected: tuple[str, str] | None) -> None:
    assert _window(text) == expected


def test_today_is_asked_about_only_by_a_past_question_about_what_was_said() -> None:
    today = ("2026-12-12", "2026-12-13")
    assert _window("what did I tell you today?") == today
    assert _window("qu'est-ce que je t'ai dit ajd") == today
    assert _window("je t'ai dit quoi cet aprem ?") == today
    assert _window("I was so tired today") is None
    assert _window("je suis crevé aujourd'hui") is None


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300), now=instants, zone=zones)
def test_any_text_is_read_without_raising(text: str, now: float, zone: ZoneInfo) -> None:
    annotate(text, now, zone)
    window(text, now, zone)
    dated_phrases(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("commence la muscu la semaine pro", "2026-12-14/2026-12-20"),
     ("starts his new job nxt week", "2026-12-14/2026-12-20"),
     ("va chez ses parents ce we", "2026-12-12/2026-12-13"),
     ("sees her mum this wknd", "2026-12-12/2026-12-13"),
     ("part en rando le we pro", "2026-12-19/2026-12-20"),
     ("was sick all last wk", "2026-11-30/2026-12-06"),
     ("a vu Léa semaine dernière", "2026-11-30/2026-12-06")],
)  # fmt: skip
def test_chat_spellings_of_a_week_and_a_weekend_are_that_period(text: str, expected: str) -> None:
    assert _labels(text, WEDNESDAY, NEW_YORK) == [expected]


def test_chat_week_words_alone_are_no_period() -> None:
    assert _labels("next we go home", WEDNESDAY, NEW_YORK) == []
    assert _labels("Did a 3 wk course", WEDNESDAY, NEW_YORK) == []
    assert _labels("Est un pro du ski", WEDNESDAY, NEW_YORK) == []
    # Asked about: the week gone, the weekend gone; one to come asks nothing.
    assert _window("what did i tell u last wk?", WEDNESDAY, NEW_YORK) == (
        "2026-11-30",
        "2026-12-07",
    )
    assert _window("on a parlé de quoi ce we ?", MONDAY, NEW_YORK) == ("2026-12-12", "2026-12-14")
    assert _window("wanna chat nxt week?", WEDNESDAY, NEW_YORK) is None


@pytest.mark.parametrize(
    "text",
    ["Loves 'Friday I'm in Love' by The Cure", "Regarde la série « Mercredi » sur Netflix",
     "Binge-watched 'Wednesday' on Netflix", "Loves the song \"Manic Monday\"",
     "Chante « Lundi au soleil » sous la douche", "Rewatched ‘Wednesday’ with her sister"],
)  # fmt: skip
def test_a_weekday_inside_quotes_is_a_title_not_a_day(text: str) -> None:
    assert _labels(text, WEDNESDAY, NEW_YORK) == []


def test_a_weekday_beside_a_quoted_title_or_an_apostrophe_is_still_a_day() -> None:
    assert _labels("Watched 'Dune' on Friday", WEDNESDAY, NEW_YORK) == ["2026-12-04"]
    assert _labels("A vu « Dune » vendredi", WEDNESDAY, NEW_YORK) == ["2026-12-04"]
    assert _labels("Sees Léa's mum on Friday and Tom's on Saturday", WEDNESDAY, NEW_YORK) == [
        "2026-12-11",
        "2026-12-12",
    ]
    assert _labels("Watches ‘Wednesday’ with her sister on Sunday", WEDNESDAY, NEW_YORK) == [
        "2026-12-13"
    ]


def test_earlier_this_week_runs_from_monday_to_today() -> None:
    # Today included: a wider window loses none of what was meant (this morning's talk too);
    # the blind corpus's author ends it yesterday (see docs/measurements.md). Said on a Monday,
    # Monday alone.
    assert _window("what did we say earlier this week?", WEDNESDAY, NEW_YORK) == (
        "2026-12-07",
        "2026-12-10",
    )
    assert _window("de quoi on a parlé plus tôt cette semaine ?", MONDAY, NEW_YORK) == (
        "2026-12-14",
        "2026-12-15",
    )


_PIECES = [*"abdeilnorstw'’ _-.,«»\"éàÉAIST1\n", "ed", "ait", "a ", "s'", "l'", "'ll", "'d",
           "is ", "et ", "and ", "mangé", "allé", "Monday", "lundi", "told", "went", "will",
           "c'était", "qu'il", "jusqu'à", "excited", "walked", "se ", "est "]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=40))
def test_the_tense_marks_found_by_one_regex_are_those_of_reading_every_word(
    pieces: list[str],
) -> None:
    # Oracle: every token read, each with its neighbours from the whole list.
    text = "".join(pieces)
    t = dates._Text(text, dates._shadow(text))
    tokens = [t._token(raw) for raw in dates._TOKEN.finditer(t.shadow)]
    where, which, joins = [], [], []
    for i, token in enumerate(tokens):
        before = tokens[i - 1].word if i else ""
        mark = dates._mark(token, lambda b=before: b, lambda i=i: iter(tokens[i + 1 : i + 5]))
        if mark is not None:
            where.append(token.start)
            which.append(mark)
        if token.word in dates._CONJUNCTIONS and dates._joins(next(iter(tokens[i + 1 :]), None)):
            joins.append(token.start)
    assert t._scan == (where, which, joins)
    assert t.recalls == any(token.word in dates._RECALL for token in tokens)


# Texts a quadratic step would take minutes on (their cost is measured side by side with texts
# ten times shorter by `make bench-time`, never timed here).
LONG_TEXTS = [
    ("went to the gym on Monday and will see her on Friday, " * 2000)[:100_000],
    ("a mangé chez elle mardi et part samedi, c'était dimanche " * 2000)[:100_000],
    "Monday" + " " * 99_980 + "to Friday",
    " " * 99_990 + "Tomorrow",
    ("went " * 20_000)[:99_990] + " Monday",
]


def test_a_long_text_is_read_whole() -> None:
    for text in LONG_TEXTS:
        annotated, spans = annotate(text, SATURDAY, PARIS)
        assert annotated.startswith(text[:20]) and len(annotated) >= len(text)
        assert all(span.first <= span.last for span in spans)
        window(text, SATURDAY, PARIS)


# What annotate and window got on the blind corpus (tests/corpora/truth/blind.py, written apart)
# when the rules were final: A the development half, B held out and measured once. The one miss
# of each language is "earlier this week", which the rules end today and the corpus yesterday
# (test_earlier_this_week_runs_from_monday_to_today). A fall below fails.
BLIND_FLOORS = {
    ("fr", "A", "no-date left undated"): 6,
    ("fr", "B", "no-date left undated"): 7,
    ("en", "A", "no-date left undated"): 7,
    ("en", "B", "no-date left undated"): 7,
    ("fr", "A", "dates right"): 22,
    ("fr", "B", "dates right"): 21,
    ("en", "A", "dates right"): 22,
    ("en", "B", "dates right"): 21,
    ("fr", "A", "no-time left without window"): 7,
    ("fr", "B", "no-time left without window"): 7,
    ("en", "A", "no-time left without window"): 7,
    ("en", "B", "no-time left without window"): 7,
    ("fr", "A", "windows right"): 13,
    ("fr", "B", "windows right"): 14,
    ("en", "A", "windows right"): 14,
    ("en", "B", "windows right"): 13,
}


def test_the_rules_keep_their_figures_on_the_blind_corpus() -> None:
    figures = truth_blind._dates().figures + truth_blind._windows().figures
    got = {(f.language, f.half, f.measure): f.right for f in figures}
    assert got.keys() == BLIND_FLOORS.keys()
    assert {k: v for k, v in got.items() if v < BLIND_FLOORS[k]} == {}
