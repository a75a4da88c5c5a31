"""What the selection guarantees against plain cosine, and the recent conversation's places."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.model import Kind, Memory, Reason, Scope
from memory.recall.selection import (
    DEFAULT_LIMIT,
    SEMANTIC_SLOTS,
    eligibility_cutoff,
    recall_places,
    select,
    spare_places,
)
from memory.recall.semantic import COSINE_FLOOR
from tests.memory.recall.test_selection import mem

_KINDS = [k for k in Kind if k is not Kind.RULE]
_shapes = st.lists(
    st.tuples(st.sampled_from(_KINDS), st.sampled_from(list(Scope))), min_size=1, max_size=120
)
# More memories than places, and the default limit and slots often: where places are scarce.
_crowded = st.lists(
    st.tuples(st.sampled_from(_KINDS), st.sampled_from(list(Scope))), min_size=25, max_size=120
)
_limits = st.just(DEFAULT_LIMIT) | st.integers(min_value=0, max_value=40)
_slots = st.just(SEMANTIC_SLOTS) | st.integers(min_value=0, max_value=24)


def _scored(
    memories: list[Memory], rnd: random.Random, sd: float, places: int
) -> tuple[dict[int, float], float, list[int]]:
    """Distinct scores for every memory; the eligible ones as the engine computes them, the
    cutoff, and the plain cosine order (above the floor)."""
    # Mostly above the floor (0.10), so that the model ranks more memories than there are places.
    distinct = rnd.sample(range(-200_000, 1_000_000), len(memories))
    sims = np.array([v / 1e6 for v in distinct])
    cutoff = eligibility_cutoff(sims, floor=COSINE_FLOOR, relative_sd=sd, places=places)
    eligible = {m.id: float(s) for m, s in zip(memories, sims, strict=True) if s >= cutoff}
    order = [m.id for _, m in sorted(zip(-sims, memories, strict=True), key=lambda p: p[0])]
    plain = [i for i in order if -sims[[m.id for m in memories].index(i)] <= -COSINE_FLOOR]
    return eligible, cutoff, plain


def _plain_cosine_holds(
    shapes: list[tuple[Kind, Scope]], rnd: random.Random, limit: int, slots: int, sd: float,
    weak: int,
) -> None:  # fmt: skip
    memories = [mem(kind, scope, updated_at=rnd.random()) for kind, scope in shapes]
    spare = spare_places(limit, slots, every_memory_scored=True)
    eligible, cutoff, plain = _scored(memories, rnd, sd, recall_places(limit, slots) + spare)
    outside = [m.id for m in memories if m.id not in eligible]
    hits = {i: ("common",) for i in rnd.sample(outside, min(weak, len(outside)))}
    selected = select(memories, eligible, limit=limit, threshold=cutoff, semantic_slots=slots,
                      keywords=hits, decisive=frozenset(), spare=spare)  # fmt: skip
    served = {s.memory.id for s in selected}
    quarter = max(1, round(limit / 4)) if limit else 0
    assert set(plain[: min(slots + spare, limit - quarter)]) <= served
    if all(scope is Scope.GLOBAL for _, scope in shapes):  # the bench's case: all of the limit
        assert set(plain[:limit]) <= served


@pytest.mark.slow
@settings(max_examples=200)
@given(_crowded, st.randoms(use_true_random=False), _limits, _slots,
       st.floats(min_value=0.0, max_value=3.0), st.integers(min_value=0, max_value=30))  # fmt: skip
def test_every_memory_with_a_vector_plain_cosine_is_never_beaten_by_weak_keywords(
    shapes: list[tuple[Kind, Scope]], rnd: random.Random, limit: int, slots: int, sd: float,
    weak: int,
) -> None:  # fmt: skip
    """When every candidate has a vector, what plain cosine would serve in the places left after
    the global quarter is served, even with keyword hits on common words that the model does not
    find eligible either (they are not decisive): they no longer push out the model's top."""
    _plain_cosine_holds(shapes, rnd, limit, slots, sd, weak)


@given(st.lists(st.sampled_from(_KINDS), min_size=25, max_size=120),
       st.randoms(use_true_random=False), _limits, _slots,
       st.floats(min_value=0.0, max_value=3.0), st.integers(min_value=0, max_value=30))  # fmt: skip
def test_every_global_memory_with_a_vector_plain_cosine_top_is_all_served(
    kinds: list[Kind], rnd: random.Random, limit: int, slots: int, sd: float, weak: int
) -> None:
    """The bench's case (global memories, every one with a vector, no pin): everything plain
    cosine would serve in `limit` places is served, whatever common-word hits say."""
    _plain_cosine_holds([(kind, Scope.GLOBAL) for kind in kinds], rnd, limit, slots, sd, weak)


def test_a_decisive_keyword_hit_still_takes_a_place_from_the_cosine_top() -> None:
    """A name in one memory is served whatever cosine says; a word many memories share that the
    model does not rank among the places waits behind the model's top."""
    memories = [mem(scope=Scope.GLOBAL) for _ in range(60)]
    scores = {m.id: 0.9 - i * 0.01 for i, m in enumerate(memories[:30])}
    felix, common = memories[59], memories[40:45]
    hits = {felix.id: ("felix",), **{m.id: ("train",) for m in common}}
    selected = select(memories, scores, threshold=0.5, keywords=hits, decisive={felix.id},
                      spare=spare_places(every_memory_scored=True))  # fmt: skip
    served = {s.memory.id: s for s in selected}
    assert served[felix.id].reason is Reason.SEMANTIC and served[felix.id].matched == ("felix",)
    assert not {m.id for m in common} & set(served)
    # The decisive hit took one place: plain cosine's 24th waits.
    assert {m.id for m in memories[:23]} <= set(served) and memories[23].id not in served
    # Without the keyword split (every hit decisive, as before), the common word's hits took
    # places from the model's top.
    before = {s.memory.id for s in select(memories, scores, threshold=0.5, keywords=hits)}
    assert {m.id for m in common} & before


def test_the_spare_places_wait_for_a_memory_without_a_vector() -> None:
    """Some memory has no vector yet: the 2 places past recall's stay the fallback's, which
    serves it (the most recent) instead of the model's 23rd and 24th."""
    memories = [mem(scope=Scope.GLOBAL, updated_at=float(i)) for i in range(40)]
    fresh = mem(scope=Scope.GLOBAL, updated_at=1_000.0)
    scores = {m.id: 0.9 - i * 0.01 for i, m in enumerate(memories)}
    waiting = select([*memories, fresh], scores, threshold=0.1,
                     spare=spare_places(every_memory_scored=False))  # fmt: skip
    assert fresh.id in {s.memory.id for s in waiting}
    assert spare_places(every_memory_scored=False) == 0
    assert spare_places(every_memory_scored=True) == DEFAULT_LIMIT - recall_places()
    scored = select(memories, scores, threshold=0.1, spare=spare_places(every_memory_scored=True))
    assert {s.memory.id for s in scored} == {m.id for m in memories[:DEFAULT_LIMIT]}


@given(_shapes, st.randoms(use_true_random=False), st.integers(min_value=0, max_value=40),
       st.integers(min_value=0, max_value=3), st.integers(min_value=0, max_value=20))  # fmt: skip
def test_the_conversation_takes_at_most_its_places_each_with_its_own_cosine(
    shapes: list[tuple[Kind, Scope]], rnd: random.Random, limit: int, places: int, heard: int
) -> None:
    """Whatever both queries score: the conversation's memories come as Reason.CONVERSATION
    with the conversation's cosine, never more than its places, only those the message did not
    recall; the message's recall gives back at most that many; without a conversation the
    selection is the message's alone."""
    memories = [mem(kind, scope, updated_at=rnd.random()) for kind, scope in shapes]
    eligible, cutoff, _ = _scored(memories, rnd, 1.5, recall_places(limit))
    said = {m.id: rnd.uniform(0.2, 1.0) for m in rnd.sample(memories, min(heard, len(memories)))}
    alone = select(memories, eligible, limit=limit, threshold=cutoff)
    assert select(memories, eligible, limit=limit, threshold=cutoff, conversation={}) == alone
    both = select(memories, eligible, limit=limit, threshold=cutoff, conversation=said,
                  conversation_slots=places)  # fmt: skip
    from_conversation = [s for s in both if s.reason is Reason.CONVERSATION]
    assert len(from_conversation) <= places
    for s in from_conversation:
        assert s.score == said[s.memory.id] and s.matched == ()
    by_message = {s.memory.id for s in alone if s.reason is Reason.SEMANTIC}
    still = {s.memory.id for s in both if s.reason is Reason.SEMANTIC}
    assert not {s.memory.id for s in from_conversation} & still
    assert len(by_message - still) <= len(from_conversation)
    assert len(both) == len(alone)


def test_the_conversation_brings_what_the_message_alone_misses() -> None:
    """'My race' after talking about this morning's run: the half marathon, which the message
    alone does not recall, takes the last place of recall, shown as the conversation's."""
    memories = [mem(scope=Scope.GLOBAL) for _ in range(60)]
    race = memories[59]
    scores = {m.id: 0.9 - i * 0.01 for i, m in enumerate(memories[:30])}
    selected = select(memories, scores, threshold=0.5, conversation={race.id: 0.71},
                      spare=spare_places(every_memory_scored=True))  # fmt: skip
    served = {s.memory.id: s for s in selected}
    assert served[race.id].reason is Reason.CONVERSATION and served[race.id].score == 0.71
    assert len(selected) == DEFAULT_LIMIT
    # It took the place of the message's 22nd (the message's recall holds one place fewer).
    recalled = [m.id for m in memories[:30] if m.id in served]
    assert recalled == [m.id for m in memories[: DEFAULT_LIMIT - 1]]
    # Already recalled by the message: it stays the message's, the place goes back to it.
    again = select(memories, scores, threshold=0.5, conversation={memories[0].id: 0.7},
                   spare=spare_places(every_memory_scored=True))  # fmt: skip
    assert not [s for s in again if s.reason is Reason.CONVERSATION]
    assert {s.memory.id for s in again} == {m.id for m in memories[:DEFAULT_LIMIT]}
    assert SEMANTIC_SLOTS == 16  # the places above are read with the default slots
