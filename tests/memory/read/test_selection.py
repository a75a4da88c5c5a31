from __future__ import annotations

import itertools
import random
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from memory.model import Kind, Memory, Reason, Scope, Selected
from memory.read.selection import RankedPool, select

_ids = itertools.count(1)


def mem(
    kind: Kind = Kind.FACT,
    scope: Scope = Scope.STORY,
    *,
    pinned: bool = False,
    updated_at: float = 0.0,
    memory_id: int | None = None,
) -> Memory:
    return Memory(
        id=memory_id if memory_id is not None else next(_ids),
        user_id=1,
        text="t",
        kind=kind,
        scope=scope,
        story_id=7 if scope is Scope.STORY else None,
        origin="1",
        pinned=pinned,
        updated_at=updated_at,
    )


def reasons(selected: list[Selected]) -> Counter[Reason]:
    return Counter(s.reason for s in selected)


def test_pinned_story_memories_do_not_crowd_out_relevant_globals() -> None:
    # The original deployment's case: 26 pinned + 10 relevant globals gave 24 pinned, 0 global, 0
    # semantic.
    pinned = [mem(pinned=True) for _ in range(26)]
    globals_ = [mem(scope=Scope.GLOBAL) for _ in range(10)]
    scores = {m.id: 0.5 for m in globals_}
    selected = select(pinned + globals_, scores)
    assert len(selected) == 24
    assert reasons(selected) == {Reason.PINNED: 18, Reason.GLOBAL: 6}


def test_relevant_globals_beyond_their_quarter_come_in_by_meaning() -> None:
    pinned = [mem(pinned=True) for _ in range(10)]
    globals_ = [mem(scope=Scope.GLOBAL) for _ in range(10)]
    selected = select(pinned + globals_, {m.id: 0.5 for m in globals_})
    assert reasons(selected) == {Reason.PINNED: 10, Reason.GLOBAL: 6, Reason.SEMANTIC: 4}


def test_the_reserve_holds_places_for_story_memories_the_message_calls_for() -> None:
    pinned = [mem(pinned=True) for _ in range(30)]
    relevant = [mem() for _ in range(10)]
    selected = select(pinned + relevant, {m.id: 0.6 for m in relevant})
    assert reasons(selected) == {Reason.PINNED: 18, Reason.SEMANTIC: 6}


def test_keywords_recall_on_a_degraded_turn_and_say_which_words() -> None:
    story = [mem(updated_at=float(i)) for i in range(40)]
    felix = story[0]  # the oldest: recency alone would never serve it
    selected = select(story, None, keywords={felix.id: ("felix",)})
    [hit] = [s for s in selected if s.memory.id == felix.id]
    assert hit.reason is Reason.SEMANTIC and hit.matched == ("felix",) and hit.score is None


def test_fusion_puts_first_what_both_lists_rank_high() -> None:
    story = [mem() for _ in range(40)]
    a, b, c = story[:3]
    scores = {a.id: 0.9, b.id: 0.8, c.id: 0.7}
    keywords = {c.id: ("x",), b.id: ("y",)}
    recalled = [s.memory.id for s in select(story, scores, keywords=keywords, semantic_slots=3)
                if s.reason is Reason.SEMANTIC]  # fmt: skip
    assert set(recalled[:2]) == {b.id, c.id} and recalled[2] == a.id


def test_the_reserve_does_not_freeze_places_for_missing_candidates() -> None:
    # Only 2 global candidates: the pinned get 22 places, not 18.
    pinned = [mem(pinned=True) for _ in range(30)]
    globals_ = [mem(scope=Scope.GLOBAL) for _ in range(2)]
    selected = select(pinned + globals_, None)
    assert reasons(selected) == {Reason.PINNED: 22, Reason.GLOBAL: 2}


def test_rules_are_all_served_outside_the_limit() -> None:
    # A profile with 19 rules had them take 19 of 24 places.
    rules = [mem(Kind.RULE, Scope.GLOBAL) for _ in range(19)]
    others = [mem(kind) for kind in (Kind.FACT, Kind.PREFERENCE, Kind.PROMISE, Kind.EPISODE)] * 10
    others = [mem(m.kind) for m in others]
    selected = select(rules + others, None)
    assert reasons(selected)[Reason.RULE] == 19
    assert len([s for s in selected if s.reason is not Reason.RULE]) == 24


def test_semantic_pass_takes_best_scores_first_up_to_its_slots_and_threshold() -> None:
    story = [mem() for _ in range(40)]
    scores = {m.id: 0.9 - i * 0.01 for i, m in enumerate(story)}
    scores[story[-1].id] = 0.31  # under 0.32
    selected = select(story, scores)
    semantic = [s for s in selected if s.reason is Reason.SEMANTIC]
    assert len(semantic) == 16
    assert [s.memory.id for s in semantic] == [m.id for m in story[:16]]
    assert all(s.score is not None and s.score >= 0.32 for s in semantic)


def test_degraded_turn_runs_every_pass_but_the_semantic_one() -> None:
    story = [mem() for _ in range(40)]
    selected = select(story, None)
    assert Reason.SEMANTIC not in reasons(selected)
    assert len(selected) == 24


def test_kind_quotas_then_fallback_by_rank() -> None:
    facts = [mem(Kind.FACT, updated_at=float(i)) for i in range(20)]
    episodes = [mem(Kind.EPISODE, updated_at=float(i)) for i in range(20)]
    selected = select(facts + episodes, None)
    quota = [s.memory for s in selected if s.reason is Reason.QUOTA]
    assert Counter(m.kind for m in quota) == {Kind.FACT: 6, Kind.EPISODE: 5}
    # Within a kind, the freshest first.
    assert [m.updated_at for m in quota if m.kind is Kind.FACT] == [19, 18, 17, 16, 15, 14]
    fallback = [s.memory for s in selected if s.reason is Reason.FALLBACK]
    assert len(fallback) == 13 and all(m.kind is Kind.FACT for m in fallback)


def test_a_memory_just_created_without_a_vector_is_still_served() -> None:
    old = [mem(updated_at=1.0) for _ in range(30)]
    new = mem(updated_at=99.0)
    scores = {m.id: 0.8 for m in old}
    assert new.id in {s.memory.id for s in select([*old, new], scores)}


# --- properties -----------------------------------------------------------------------------

_memory = st.builds(
    Memory,
    id=st.integers(min_value=1, max_value=60),
    user_id=st.just(1),
    text=st.sampled_from(["a", "b"]),
    kind=st.sampled_from(list(Kind)),
    scope=st.sampled_from(list(Scope)),
    story_id=st.sampled_from([None, 7]),
    origin=st.sampled_from(["dm", "1"]),
    confidence=st.floats(allow_nan=True),
    pinned=st.booleans(),
    updated_at=st.floats(allow_nan=True),
)
_scores = st.none() | st.dictionaries(
    st.integers(min_value=1, max_value=70), st.floats(allow_nan=True), max_size=60
)


@given(
    st.lists(_memory, max_size=80, unique_by=lambda m: m.id),
    _scores,
    st.integers(min_value=-2, max_value=40),
)
def test_selection_invariants(
    memories: list[Memory], scores: dict[int, float] | None, limit: int
) -> None:
    selected = select(memories, scores, limit=limit)
    rules = {m.id for m in memories if m.kind is Kind.RULE}
    others = {m.id for m in memories if m.kind is not Kind.RULE}
    served = [s.memory.id for s in selected if s.reason is not Reason.RULE]
    assert {s.memory.id for s in selected if s.reason is Reason.RULE} == rules
    assert len(served) == len(set(served)) == min(len(others), max(0, limit))
    assert set(served) <= others
    for s in selected:
        if s.reason is Reason.SEMANTIC:
            assert scores is not None and s.score == scores[s.memory.id] >= 0.32
    assert select(memories, scores, limit=limit) == selected


@given(st.lists(_memory, max_size=80), _scores)
def test_repeated_ids_never_come_back_twice(
    memories: list[Memory], scores: dict[int, float] | None
) -> None:
    ids = [s.memory.id for s in select(memories, scores)]
    assert len(ids) == len(set(ids))


@given(st.lists(_memory, max_size=60, unique_by=lambda m: m.id), _scores, st.randoms())
def test_selection_does_not_depend_on_input_order(
    memories: list[Memory], scores: dict[int, float] | None, rnd: random.Random
) -> None:
    shuffled = memories[:]
    rnd.shuffle(shuffled)
    assert select(shuffled, scores) == select(memories, scores)


@given(st.lists(_memory, max_size=60), _scores, st.integers(min_value=0, max_value=30))
def test_a_prebuilt_ranked_pool_selects_exactly_the_same(
    memories: list[Memory], scores: dict[int, float] | None, limit: int
) -> None:
    keywords = {m.id: ("w",) for m in memories[::3]}
    assert select(RankedPool.build(memories), scores, limit=limit, keywords=keywords) == select(
        memories, scores, limit=limit, keywords=keywords
    )


@given(
    st.lists(_memory, max_size=60, unique_by=lambda m: m.id),
    st.lists(_memory, max_size=15, unique_by=lambda m: m.id),
    st.sets(st.integers(min_value=1, max_value=60), max_size=15),
)
def test_a_patched_pool_equals_a_fresh_build(
    before: list[Memory], current: list[Memory], deleted: set[int]
) -> None:
    changed = {m.id for m in current} | deleted
    after = [m for m in before if m.id not in changed] + current
    patched = RankedPool.build(before).patched(changed, current)
    assert patched == RankedPool.build(after)
    # Nothing of a changed id survives but its current version.
    assert {m.id for m in patched.ordered} & deleted <= {m.id for m in current}
