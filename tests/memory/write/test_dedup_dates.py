"""The dedup compares the dates a memory's relative dates were resolved to, not their words:
different days are different facts whatever the wording, the same day never caps a pair, and
the index still decides like brute force on dated texts."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.lexicon.dates import annotate
from memory.model import Kind, Memory, Scope
from memory.write.dedup import SIMILARITY_THRESHOLD, carriers, decide, similarity
from memory.write.dedup_index import DedupIndex

PHRASES = [
    "tomorrow", "demain", "the day after tomorrow", "après-demain", "next Tuesday",
    "mardi prochain", "on Friday", "vendredi", "this Friday", "ce vendredi", "in 3 days",
    "dans 3 jours", "next week", "la semaine prochaine", "tonight", "ce soir",
]  # fmt: skip
TEMPLATES = ["Léa has a job interview {}", "Léa a un entretien d'embauche {}"]
ZONES = [ZoneInfo(z) for z in ("Europe/Paris", "America/New_York", "Pacific/Apia")]

said = st.tuples(
    st.floats(min_value=1.7e9, max_value=2.0e9),
    st.floats(min_value=0, max_value=10 * 86400),
    st.sampled_from(ZONES),
)


@settings(max_examples=150, deadline=None)
@given(
    template=st.sampled_from(TEMPLATES),
    first=st.sampled_from(PHRASES),
    second=st.sampled_from(PHRASES),
    when=said,
)
def test_different_days_are_different_facts_and_the_same_day_is_not_capped(
    template: str, first: str, second: str, when: tuple[float, float, ZoneInfo]
) -> None:
    now, later, zone = when
    a, a_days = annotate(template.format(first), now, zone)
    b, b_days = annotate(template.format(second), now + later, zone)
    if a_days == b_days:
        assert carriers(a) == carriers(b)
    else:
        assert similarity(a, b) < SIMILARITY_THRESHOLD, (a, b)


def test_demain_said_on_monday_merges_with_mardi_said_that_monday() -> None:
    monday = 1796652000.0  # Mon 7 Dec 2026, 15:00 in Paris
    paris = ZoneInfo("Europe/Paris")
    a, _ = annotate("Léa a un entretien d'embauche demain", monday, paris)
    b, _ = annotate("Léa a un entretien d'embauche mardi", monday, paris)
    c, _ = annotate("Léa a un entretien d'embauche demain", monday + 86400, paris)
    assert similarity(a, b) >= SIMILARITY_THRESHOLD
    assert similarity(a, c) < SIMILARITY_THRESHOLD


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(TEMPLATES), st.sampled_from(PHRASES), said), max_size=12),
    st.tuples(st.sampled_from(TEMPLATES), st.sampled_from(PHRASES), said),
)
def test_the_index_decides_like_brute_force_on_dated_texts(
    stored: list[tuple[str, str, tuple[float, float, ZoneInfo]]],
    candidate: tuple[str, str, tuple[float, float, ZoneInfo]],
) -> None:
    def text(item: tuple[str, str, tuple[float, float, ZoneInfo]]) -> str:
        template, phrase, (now, later, zone) = item
        return annotate(template.format(phrase), now + later, zone)[0]

    existing = [
        Memory(id=i + 1, user_id=1, text=text(item), kind=Kind.FACT, scope=Scope.GLOBAL)
        for i, item in enumerate(stored)
    ]
    new = text(candidate)
    assert DedupIndex(existing).decide(new) == decide(new, existing)
