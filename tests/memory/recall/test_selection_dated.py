"""Recall by the days memories mean, for a message asking about a time to come: the memories
dated in it take places of recall with their own reason, which says their days and the words
that asked; none asked, no change. The selection stays a pure function."""

from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.model import Kind, Memory, Reason, Scope
from memory.recall.selection import DATED_SLOTS, SEMANTIC_SLOTS, select

TOMORROW = (date(2026, 12, 8), date(2026, 12, 8))


def _memory(memory_id: int, kind: Kind = Kind.FACT) -> Memory:
    return Memory(
        id=memory_id, user_id=1, text=f"t{memory_id}", kind=kind, scope=Scope.STORY,
        story_id=7, origin="1", created_at=float(memory_id), updated_at=float(memory_id),
    )  # fmt: skip


def test_what_is_dated_tomorrow_is_served_when_asked_about_and_says_so() -> None:
    # 60 newer facts outrank the two promises in every pass by rank.
    others = [_memory(i) for i in range(100, 160)]
    plans = [_memory(1, Kind.EPISODE), _memory(2, Kind.EPISODE)]
    dated = {1: TOMORROW, 2: (date(2026, 12, 7), date(2026, 12, 13))}
    asked = select(others + plans, None, quotas={}, dated=dated, asked="tomorrow")
    served = {s.memory.id: s for s in asked}
    assert served[1].reason is Reason.DATED and served[1].matched == ("2026-12-08", "tomorrow")
    assert served[2].matched == ("2026-12-07/2026-12-13", "tomorrow")
    assert len(asked) == 24
    unasked = select(others + plans, None, quotas={})
    assert {1, 2}.isdisjoint(s.memory.id for s in unasked)


def test_a_memory_dated_there_that_is_not_a_candidate_here_is_never_served() -> None:
    # Another person's, another story's, or one forgotten since: not in the pool.
    asked = select([_memory(1)], None, dated={1: TOMORROW, 999: TOMORROW}, asked="tomorrow")
    assert [s.memory.id for s in asked] == [1]


def test_the_message_own_recall_keeps_half_its_places_before_a_week_of_plans() -> None:
    plans = [_memory(i) for i in range(1, 41)]
    others = [_memory(i) for i in range(100, 140)]
    scores = {m.id: 0.9 - m.id / 1000 for m in others[:30]}
    week = {m.id: TOMORROW for m in plans}
    asked = select(plans + others, scores, threshold=0.3, dated=week, asked="next week")
    by_reason = [s.reason for s in asked]
    assert by_reason.count(Reason.DATED) == DATED_SLOTS
    assert by_reason.count(Reason.SEMANTIC) >= SEMANTIC_SLOTS - DATED_SLOTS
    assert len(asked) == 24


def test_the_soonest_come_first_and_one_the_message_recalls_stays_recalled() -> None:
    plans = [_memory(i) for i in range(1, 21)]
    days = {m.id: (date(2026, 12, 30) - timedelta(days=m.id),) * 2 for m in plans}
    asked = select(plans, {7: 0.5}, threshold=0.3, dated=days, asked="this month", quotas={})
    served = {s.memory.id: s.reason for s in asked}
    assert served[7] is Reason.SEMANTIC
    assert [s.memory.id for s in asked if s.reason is Reason.DATED] == list(range(20, 12, -1))


ids = st.integers(min_value=1, max_value=400)


@settings(max_examples=200, deadline=None)
@given(
    pool=st.lists(ids, max_size=80, unique=True),
    dated=st.dictionaries(ids, st.integers(0, 30), max_size=60),
    limit=st.integers(min_value=0, max_value=30),
    scored=st.floats(min_value=0, max_value=1),
)
def test_dated_recall_stays_inside_what_was_dated_and_its_places(
    pool: list[int], dated: dict[int, int], limit: int, scored: float
) -> None:
    memories = [_memory(i) for i in pool]
    scores = {i: (i % 97) / 97 for i in pool if (i % 97) / 97 < scored}
    days = {i: (date(2026, 12, 1) + timedelta(days=d),) * 2 for i, d in dated.items()}
    asked = select(memories, scores, limit=limit, dated=days, asked="next week")
    served = [s for s in asked if s.reason is Reason.DATED]
    assert len(served) <= min(DATED_SLOTS, SEMANTIC_SLOTS)
    assert all(s.memory.id in dated for s in served)
    assert len(asked) <= limit
    assert len({s.memory.id for s in asked}) == len(asked)
    # Nothing dated in the time asked about changes nothing.
    assert select(memories, scores, limit=limit, dated={}, asked="x") == select(
        memories, scores, limit=limit
    )
