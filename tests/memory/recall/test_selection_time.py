"""Recall by the time a message names: memories said in its window take places of recall, with
their own reason; no window, no change. The selection stays a pure function."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.model import Kind, Memory, Reason, Scope
from memory.recall.selection import SEMANTIC_SLOTS, TIME_SLOTS, select

DAY = 86400.0
TODAY = 100 * DAY


def _memory(memory_id: int, said: float, kind: Kind = Kind.FACT) -> Memory:
    return Memory(
        id=memory_id, user_id=1, text=f"t{memory_id}", kind=kind, scope=Scope.STORY,
        story_id=7, origin="1", created_at=said, updated_at=said,
    )  # fmt: skip


def test_what_was_said_yesterday_is_served_when_asked_about_and_only_then() -> None:
    # 60 memories of this morning outrank yesterday's two in every pass by rank.
    today = [_memory(i, TODAY + 3600 + i) for i in range(1, 61)]
    yesterday = [_memory(100, TODAY - DAY + 600), _memory(101, TODAY - DAY + 900)]
    pool = today + yesterday
    asked = select(pool, None, window=(TODAY - DAY, TODAY))
    served = {s.memory.id: s.reason for s in asked}
    assert served[100] is Reason.TIME and served[101] is Reason.TIME
    assert len(asked) == 24
    unasked = select(pool, None)
    assert {100, 101}.isdisjoint(s.memory.id for s in unasked)
    assert all(s.reason is not Reason.TIME for s in unasked)


def test_the_message_own_recall_keeps_its_places_before_time() -> None:
    said = [_memory(i, TODAY - DAY + i) for i in range(1, 41)]
    others = [_memory(i, TODAY + i) for i in range(100, 140)]
    scores = {m.id: 0.9 - m.id / 1000 for m in others[:30]}
    asked = select(said + others, scores, threshold=0.3, window=(TODAY - DAY, TODAY))
    by_reason = [s.reason for s in asked]
    assert by_reason.count(Reason.TIME) == TIME_SLOTS
    # Recall's places: the message's best first, time in the last TIME_SLOTS of them.
    assert by_reason.count(Reason.SEMANTIC) >= SEMANTIC_SLOTS - TIME_SLOTS


memories = st.lists(
    st.builds(
        _memory,
        memory_id=st.integers(min_value=1, max_value=400),
        said=st.floats(min_value=0, max_value=200 * DAY),
        kind=st.sampled_from([Kind.FACT, Kind.PREFERENCE, Kind.PROMISE, Kind.EPISODE]),
    ),
    max_size=80,
    unique_by=lambda m: m.id,
)


@settings(max_examples=200, deadline=None)
@given(
    pool=memories,
    start=st.floats(min_value=0, max_value=200 * DAY),
    length=st.floats(min_value=1, max_value=40 * DAY),
    limit=st.integers(min_value=0, max_value=30),
    scored=st.floats(min_value=0, max_value=1),
)
def test_time_recall_stays_inside_its_window_and_its_places(
    pool: list[Memory], start: float, length: float, limit: int, scored: float
) -> None:
    scores = {m.id: (m.id % 97) / 97 for m in pool if (m.id % 97) / 97 < scored}
    window = (start, start + length)
    asked = select(pool, scores, limit=limit, window=window)
    timed = [s for s in asked if s.reason is Reason.TIME]
    assert len(timed) <= min(TIME_SLOTS, SEMANTIC_SLOTS)
    assert all(start <= s.memory.created_at < start + length for s in timed)
    assert len(asked) <= limit
    assert len({s.memory.id for s in asked}) == len(asked)
    # A window in which nothing was said changes nothing.
    empty = (300 * DAY, 301 * DAY)
    assert select(pool, scores, limit=limit, window=empty) == select(pool, scores, limit=limit)
    # The same input, the same output, whatever the order.
    assert select(list(reversed(pool)), scores, limit=limit, window=window) == asked
