from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memory.model import Kind, Memory, Reason, Scope, Selected
from memory.recall.selection import RankedPool, eligibility_cutoff, recall_places, select
from memory.recall.semantic import COSINE_FLOOR

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
    # The relevant globals hold the quarter as recalled: /why says the message called for them.
    assert reasons(selected) == {Reason.PINNED: 18, Reason.SEMANTIC: 6}


def test_the_global_quarter_goes_to_the_globals_the_message_calls_for() -> None:
    # At 10,000 memories the quarter went to the 6 most recent of thousands of globals.
    globals_ = [mem(scope=Scope.GLOBAL, updated_at=float(i)) for i in range(100)]
    relevant = globals_[:30]  # the oldest: rank alone would never serve them
    scores = {m.id: 0.9 - i * 0.01 for i, m in enumerate(relevant)}
    selected = select(globals_, scores)
    served = {s.memory.id for s in selected if s.reason is Reason.SEMANTIC}
    assert served == {m.id for m in relevant[:22]}
    assert reasons(selected) == {Reason.SEMANTIC: 22, Reason.FALLBACK: 2}


def test_relevant_globals_beyond_their_quarter_come_in_by_meaning() -> None:
    pinned = [mem(pinned=True) for _ in range(10)]
    globals_ = [mem(scope=Scope.GLOBAL) for _ in range(10)]
    selected = select(pinned + globals_, {m.id: 0.5 for m in globals_})
    assert reasons(selected) == {Reason.PINNED: 10, Reason.SEMANTIC: 10}


def test_globals_not_called_for_still_get_their_quarter_by_rank() -> None:
    globals_ = [mem(scope=Scope.GLOBAL) for _ in range(10)]
    story = [mem() for _ in range(30)]
    selected = select(globals_ + story, {m.id: 0.5 for m in story})
    assert reasons(selected) == {Reason.GLOBAL: 6, Reason.SEMANTIC: 16, Reason.FALLBACK: 2}


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


def test_what_cosine_ranks_first_is_not_outvoted_by_what_both_lists_rank_lower() -> None:
    # At 1,000 memories, 16 memories matching "wedding" and ranked lower by cosine took every
    # recall place from the memory cosine ranked first (a sum of reciprocal ranks).
    story = [mem() for _ in range(40)]
    first, both = story[0], story[1:17]
    scores = {m.id: 0.9 - i * 0.01 for i, m in enumerate(story[:17])}
    keywords = {m.id: ("wedding",) for m in both}
    recalled = [s.memory.id for s in select(story, scores, keywords=keywords)
                if s.reason is Reason.SEMANTIC]  # fmt: skip
    assert first.id in recalled[:2]


def test_a_rare_word_brings_its_memory_near_the_top_whatever_cosine() -> None:
    story = [mem() for _ in range(40)]
    felix = story[-1]
    scores = {m.id: 0.9 - i * 0.01 for i, m in enumerate(story[:30])}
    selected = select(story, scores, keywords={felix.id: ("felix",)})
    [hit] = [s for s in selected if s.memory.id == felix.id]
    assert hit.reason is Reason.SEMANTIC and hit.matched == ("felix",) and hit.score is None
    assert next(s.memory.id for s in selected if s.reason is Reason.SEMANTIC) == felix.id


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


_recall_case = st.tuples(
    st.lists(st.tuples(st.sampled_from(list(Kind)), st.sampled_from(list(Scope))), min_size=30,
             max_size=80),
    st.randoms(use_true_random=False),
    st.integers(min_value=0, max_value=16),
)  # fmt: skip


def _recall_input(
    shapes: list[tuple[Kind, Scope]], rnd: random.Random
) -> tuple[list[Memory], dict[int, float], dict[int, tuple[str, ...]]]:
    """Memories (never pinned), distinct cosine scores for most, keyword hits for many."""
    memories = [mem(kind, scope, updated_at=rnd.random()) for kind, scope in shapes]
    distinct = rnd.sample(range(1_000_000), len(memories))  # ties would leave the order open
    scores = {m.id: v / 1e6 for m, v in zip(memories, distinct, strict=True) if rnd.random() < 0.9}
    hits = [m.id for m in memories if rnd.random() < 0.6]
    rnd.shuffle(hits)
    return memories, scores, {i: ("w",) for i in hits}


def _cosine_order(memories: list[Memory], scores: dict[int, float]) -> list[int]:
    """The brute-force ranking: every non-rule memory at or above 0.32, best score first."""
    eligible = [m.id for m in memories if m.kind is not Kind.RULE and scores.get(m.id, 0) >= 0.32]
    return sorted(eligible, key=lambda i: -scores[i])


@given(_recall_case)
def test_the_cosine_top_half_of_the_recall_places_is_always_served(
    case: tuple[list[tuple[Kind, Scope]], random.Random, int],
) -> None:
    shapes, rnd, slots = case
    memories, scores, keywords = _recall_input(shapes, rnd)
    selected = select(memories, scores, keywords=keywords, semantic_slots=slots)
    served = {s.memory.id for s in selected}
    assert set(_cosine_order(memories, scores)[: slots // 2]) <= served


@given(_recall_case)
def test_without_keywords_recall_serves_a_prefix_of_the_cosine_ranking(
    case: tuple[list[tuple[Kind, Scope]], random.Random, int],
) -> None:
    shapes, rnd, slots = case
    memories, scores, _ = _recall_input(shapes, rnd)
    selected = select(memories, scores, semantic_slots=slots)
    recalled = {s.memory.id for s in selected if s.reason is Reason.SEMANTIC}
    order = _cosine_order(memories, scores)
    # Per scope: the global quarter may take a global the story ranking has not reached yet.
    for scope in Scope:
        ranked = [i for i in order if i in {m.id for m in memories if m.scope is scope}]
        taken = recalled & set(ranked)
        assert taken == set(ranked[: len(taken)])
    # And it is not cut short while places went to rank alone.
    by_rank = [s for s in selected if s.reason in (Reason.GLOBAL, Reason.FALLBACK)]
    if by_rank:
        assert len(recalled) >= min(len(order), slots)


@given(
    st.lists(st.tuples(st.sampled_from(list(Kind)), st.sampled_from(list(Scope))), min_size=1,
             max_size=120),
    st.randoms(use_true_random=False),
    st.integers(min_value=0, max_value=40),
    st.integers(min_value=0, max_value=24),
    st.floats(min_value=0.0, max_value=3.0),
)  # fmt: skip
def test_never_below_plain_cosine_within_the_recall_places(
    shapes: list[tuple[Kind, Scope]], rnd: random.Random, limit: int, slots: int, sd: float
) -> None:
    """Whatever the query's scores, what plain cosine would serve in the places recall holds is
    served: the cosine top `slots` (within the limit, after the global quarter), and every global
    in the cosine top of all the recall places. The eligibility cutoff is computed as the engine
    computes it (VectorCache.scores) over every memory's score; `floor` aside."""
    memories = [mem(kind, scope, updated_at=rnd.random()) for kind, scope in shapes]
    distinct = rnd.sample(range(-1_000_000, 1_000_000), len(memories))  # no ties
    sims = np.array([v / 1e6 for v in distinct])
    cutoff = eligibility_cutoff(
        sims, floor=COSINE_FLOOR, relative_sd=sd, places=recall_places(limit, slots)
    )
    eligible = {m.id: float(s) for m, s in zip(memories, sims, strict=True) if s >= cutoff}
    selected = select(memories, eligible, limit=limit, threshold=cutoff, semantic_slots=slots)
    served = {s.memory.id for s in selected}
    scored = sorted(
        (m for m, s in zip(memories, sims, strict=True) if m.kind is not Kind.RULE),
        key=lambda m: -sims[memories.index(m)],
    )
    plain = [m for m in scored if sims[memories.index(m)] >= COSINE_FLOOR]
    quarter = max(1, round(limit / 4)) if limit else 0
    assert {m.id for m in plain[: min(slots, limit - quarter)]} <= served
    places = plain[: recall_places(limit, slots)]
    assert {m.id for m in places if m.scope is Scope.GLOBAL} <= served
    for s in selected:
        if s.reason is Reason.SEMANTIC:  # /why shows the real cosine
            assert s.score == float(sims[memories.index(s.memory)])


@given(
    st.sets(st.integers(1, 40), max_size=25),
    st.sets(st.integers(1, 40), max_size=30),
    st.booleans(),
)
def test_every_candidate_has_a_vector_exactly_when_its_id_is_in_the_matrix(
    pool_ids: set[int], matrix_ids: set[int], shuffled: bool
) -> None:
    pool = RankedPool.build([mem(memory_id=i) for i in pool_ids])
    ids = sorted(matrix_ids)
    if shuffled:  # a matrix in any order answers the same
        random.Random(len(ids)).shuffle(ids)
    assert pool.all_among(np.array(ids, dtype=np.int64)) == (pool_ids <= matrix_ids)
