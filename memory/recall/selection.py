"""Pick the memories that enter the context: a pure function, six passes, a reason for each.

No await, no database, no clock: the same input gives the same output, whatever its order.
The passes, filling `limit` places:
  0. reserve a quarter of the places for non-pinned global and semantic memories (at least one,
     never more than there are such candidates);
  1. pinned memories, up to the limit minus the reserve;
  2. global memories, up to their quarter: those the message calls for first (in recall order,
     served as recalled), then by rank;
  3. recall: memories the message calls for, by meaning (cosine >= threshold) and by rare
     keywords, the two lists interleaved by rank, best first, up to `semantic_slots`; the
     recent conversation's best memories (its own cosines) take up to `conversation_slots` of
     these places, the last ones, when the message did not already recall them; then, when
     every candidate has a vector, the message's cosine top `limit` not yet chosen takes the
     places past recall's (`spare`); when the message names a time (`window`), memories said
     in it take up to `time_slots` of recall's places, after the message's best; when it asks
     about a time to come (`dated`), memories dated in it take up to `dated_slots`;
  4. a quota per kind (the kind's total in the selection, counting earlier passes);
  5. fallback: what remains, by rank (pinned, story-specific, kind, confidence, recency).
Rules never compete: every rule comes back with Reason.RULE, outside the limit.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

import numpy as np
import numpy.typing as npt

from memory.model import Kind, Memory, Reason, Scope, Selected

DEFAULT_LIMIT = 24

# A quarter of the places held for global and semantic memories: 26 pinned story memories and 10
# relevant globals gave 24 pinned, 0 global, 0 semantic before the reserve existed (original
# deployment).
GLOBAL_SHARE = 0.25

# Places for the semantic pass: recall degraded from about 200 memories, in depth only (the relevant
# ones fell out of 8 semantic places, never out of the 24): raised from 8 to 16 (original
# deployment).
SEMANTIC_SLOTS = 16

# Places of recall that the recent conversation's best memories may take
# (memory.recall.conversation):
# 1 changed no row with an unrelated conversation; 2 and 3 cost MiniLM 2 points at 234 memories
# (bench/corpora/conversations.py, bench/results/recall-changes.md).
CONVERSATION_SLOTS = 1

# Places of recall that memories said in the time the message names may take ("what did I say
# yesterday?"): a quarter of SEMANTIC_SLOTS, so the message's own best recall keeps three
# quarters. Not read off a measurement: no corpus of questions about a time exists yet.
TIME_SLOTS = 4

# Places of recall that memories dated in the time to come a message asks about may take ("what
# do I have next week?"): half of SEMANTIC_SLOTS, so a week of plans fits and the message's own
# best recall keeps the other half. Not read off a measurement: no corpus of a person's dated
# memories per week exists yet.
DATED_SLOTS = 8

# Cosine from which a memory is eligible for the semantic pass, read on the original deployment's
# model. It must be read again for another model (see memory.recall.semantic).
COSINE_THRESHOLD = 0.32

# Places per kind; they add up to 20 of 24: the 4 places that rules gave back when they left the
# budget go to the fallback (no measurement said which kind should get them).
DEFAULT_QUOTAS: Mapping[Kind, int] = {
    Kind.FACT: 6,
    Kind.PREFERENCE: 5,
    Kind.PROMISE: 4,
    Kind.EPISODE: 5,
}

_KIND_RANK = {Kind.FACT: 0, Kind.PREFERENCE: 1, Kind.PROMISE: 2, Kind.EPISODE: 3, Kind.RULE: 4}


def recall_places(
    limit: int = DEFAULT_LIMIT,
    semantic_slots: int = SEMANTIC_SLOTS,
    global_share: float = GLOBAL_SHARE,
) -> int:
    """Return how many places recall can hold in a turn: its slots and the global quarter."""
    limit = max(0, limit)
    quarter = max(1, round(limit * global_share)) if limit else 0
    return min(limit, max(0, semantic_slots) + quarter)


def spare_places(
    limit: int = DEFAULT_LIMIT,
    semantic_slots: int = SEMANTIC_SLOTS,
    global_share: float = GLOBAL_SHARE,
    *,
    every_memory_scored: bool = False,
) -> int:
    """Return the places past recall's (kind quotas, fallback) that the message's cosine top
    `limit` may take first: all of them when every candidate has a vector, none otherwise.

    The fallback's places wait for a memory written a moment ago, before the indexer embeds it.
    When none waits, they served memories nobody called for while the model ranked relevant
    ones 23rd and 24th (multilingual-e5-small, French, 234 memories: 73% served against 75% for
    plain cosine top 24, bench/results/recall-changes.md). Only the cosine top `limit` may take
    them (plain cosine top 24 is what the selection must never fall under); what they leave
    goes to the quotas and the fallback as before.
    """
    if not every_memory_scored:
        return 0
    return max(0, limit) - recall_places(limit, semantic_slots, global_share)


def eligibility_cutoff(
    sims: npt.NDArray[np.floating], *, floor: float, relative_sd: float, places: int
) -> float:
    """Return the cosine from which a memory is eligible for recall by meaning: the query's mean
    plus `relative_sd` standard deviations, but never above the `places`-th best score, and never
    under `floor`.

    The relative rule alone cut what the model itself ranked among the recall places: with
    multilingual-e5-small at 234 memories it served fewer relevant memories than plain cosine
    top 24 (English 80% vs 83%, French 70% vs 75%, bench/results/recall-changes.md), the
    relevant ones ranked 17th to 24th under mean + 1.5 sd. The relative rule still decides
    beyond those places: which memories go on competing with keyword hits and the quotas.
    """
    if sims.size == 0:
        return floor
    relative = float(sims.mean() + relative_sd * sims.std()) if sims.size > 1 else floor
    if places > 0:
        at = sims.size - min(places, sims.size)
        relative = min(relative, float(np.partition(sims, at)[at]))
    return max(floor, relative)


def rank_key(memory: Memory) -> tuple[object, ...]:
    """Return the sort key of the fallback order: pinned, story-specific, kind, confidence, recency.

    The remaining fields come last so that the order is total: no tie depends on input order.
    """
    return (
        not memory.pinned,
        memory.scope is not Scope.STORY,
        _KIND_RANK[memory.kind],
        -_finite(memory.confidence),
        -_finite(memory.updated_at),
        memory.id,
        memory.text,
        -1 if memory.story_id is None else memory.story_id,
        memory.origin or "",
        memory.user_id,
        _finite(memory.created_at),
    )


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0


@dataclass(frozen=True, slots=True)
class RankedPool:
    """A user's candidates in rank order, one per id, split the way the passes read them.

    Rank order depends on the memories alone, never on the message: build it once per change of
    the user's memories and `select()` on it costs O(selected + recalled), not O(N log N).
    """

    rules: tuple[Memory, ...]
    ordered: tuple[Memory, ...]
    position: Mapping[int, int]
    pinned: tuple[Memory, ...]
    globals: tuple[Memory, ...]
    by_kind: Mapping[Kind, tuple[Memory, ...]]
    unpinned_globals: int
    # The candidates' ids (rules aside) in increasing order, to tell whether every one has a
    # vector; derived from `ordered`, so left out of equality.
    ids: npt.NDArray[np.int64] = field(compare=False)

    @classmethod
    def build(cls, memories: Iterable[Memory]) -> RankedPool:
        """Sort and split the candidates (the only O(N log N) step of a selection)."""
        unique = _unique_by_rank(memories)
        return cls._split(
            tuple(m for m in unique if m.kind is Kind.RULE),
            tuple(m for m in unique if m.kind is not Kind.RULE),
        )

    def patched(self, changed: Collection[int], current: Iterable[Memory]) -> RankedPool:
        """The pool after the memories with ids in `changed` changed: their old versions go,
        `current` (what is visible of them now) goes in at its rank. Equal to a fresh build
        (a property test checks it) at O(N) list copies instead of an O(N log N) sort."""
        changed = set(changed)
        fresh = _unique_by_rank(m for m in current if m.id in changed)
        ordered = [m for m in self.ordered if m.id not in changed]
        for memory in fresh:
            if memory.kind is not Kind.RULE:
                at = bisect.bisect_left(ordered, rank_key(memory), key=rank_key)
                ordered.insert(at, memory)
        kept_rules = [m for m in self.rules if m.id not in changed]
        rules = _unique_by_rank([*kept_rules, *(m for m in fresh if m.kind is Kind.RULE)])
        return self._split(tuple(rules), tuple(ordered))

    @classmethod
    def _split(cls, rules: tuple[Memory, ...], ordered: tuple[Memory, ...]) -> RankedPool:
        by_kind: dict[Kind, list[Memory]] = {}
        for memory in ordered:
            by_kind.setdefault(memory.kind, []).append(memory)
        globals_ = tuple(m for m in ordered if m.scope is Scope.GLOBAL)
        return cls(
            rules=rules,
            ordered=ordered,
            position={m.id: i for i, m in enumerate(ordered)},
            pinned=tuple(m for m in ordered if m.pinned),
            globals=globals_,
            by_kind={k: tuple(v) for k, v in by_kind.items()},
            unpinned_globals=sum(1 for m in globals_ if not m.pinned),
            ids=np.sort(np.fromiter((m.id for m in ordered), dtype=np.int64, count=len(ordered))),
        )

    def all_among(self, ids: npt.NDArray[np.int64]) -> bool:
        """Tell whether every candidate (rules aside) is among `ids`: every one has a vector.
        The common case, a matrix of exactly the candidates (both sorted by id), is one compare
        (0.03 ms at 100k against 1.2 ms for np.isin)."""
        if self.ids.size == ids.size and np.array_equal(self.ids, ids):
            return True
        return self.ids.size <= ids.size and bool(np.isin(self.ids, ids).all())


def select(
    memories: Iterable[Memory] | RankedPool,
    semantic: Mapping[int, float] | None,
    *,
    limit: int = DEFAULT_LIMIT,
    threshold: float = COSINE_THRESHOLD,
    semantic_slots: int = SEMANTIC_SLOTS,
    quotas: Mapping[Kind, int] | Mapping[str, int] = DEFAULT_QUOTAS,
    global_share: float = GLOBAL_SHARE,
    keywords: Mapping[int, Sequence[str]] | None = None,
    conversation: Mapping[int, float] | None = None,
    conversation_slots: int = CONVERSATION_SLOTS,
    spare: int = 0,
    decisive: Collection[int] | None = None,
    window: tuple[float, float] | None = None,
    time_slots: int = TIME_SLOTS,
    dated: Mapping[int, tuple[date, date]] | None = None,
    asked: str = "",
    dated_slots: int = DATED_SLOTS,
) -> list[Selected]:
    """Return the rules, then up to `limit` memories, each with the reason it was selected.

    `semantic` maps memory ids to cosine scores, or is None on a degraded turn. `keywords` maps
    the ids recalled by keyword search, best first, to the words that matched; it still runs on a
    degraded turn. Without either, pass 3 is skipped. `conversation` maps the ids eligible for
    the recent conversation's query to their cosine with it (served as Reason.CONVERSATION, with
    that cosine). `spare`: places past recall's that the message's cosine top `limit` may take
    (see spare_places). `decisive`: the keyword hits that may displace the message's cosine top
    `limit` (None: all of them; see recall.DECISIVE_DF). `window`: the [start, end) the message
    names, if any; memories created in it take up to `time_slots` of recall's places (served
    as Reason.TIME, those the message recalls first, then the latest said). `dated`: the
    memories whose days meet the time to come the message asks about, each with the days it
    means there, `asked` the words that named that time; they take up to `dated_slots` of
    recall's places (served as Reason.DATED, its days and `asked` as what matched: those the
    message recalls first, then the soonest). `memories` may be a prebuilt RankedPool.
    """
    pool = memories if isinstance(memories, RankedPool) else RankedPool.build(memories)
    rules = [Selected(m, Reason.RULE) for m in pool.rules]
    scores = _eligible_scores(pool.position, semantic, threshold)
    words = {i: tuple(w) for i, w in (keywords or {}).items() if i in pool.position}
    limit = max(0, limit)
    recalled = _fused_order(pool, scores, words, decisive, limit)
    heard = _eligible_scores(pool.position, conversation, -1.0)

    chosen: dict[int, Selected] = {}

    def add(memory: Memory, reason: Reason) -> None:
        if reason is Reason.DATED:
            first, last = coming[memory.id]
            days = first.isoformat() if first == last else f"{first.isoformat()}/{last.isoformat()}"
            chosen[memory.id] = Selected(
                memory, reason, scores.get(memory.id), (days, *asked.split())
            )
            return
        if reason is Reason.CONVERSATION:
            chosen[memory.id] = Selected(memory, reason, heard[memory.id])
            return
        chosen[memory.id] = Selected(
            memory, reason, scores.get(memory.id), words.get(memory.id, ())
        )

    def room() -> int:
        return limit - len(chosen)

    # Pass 0: the reserve, bounded by the real candidates so no place is frozen for nothing.
    reserve_candidates = pool.unpinned_globals + sum(
        1 for m in recalled if not m.pinned and m.scope is not Scope.GLOBAL
    )
    quarter = max(1, round(limit * global_share)) if limit else 0
    reserve = min(quarter, reserve_candidates)

    # Pass 1: pinned.
    for memory in pool.pinned:
        if len(chosen) >= limit - reserve:
            break
        add(memory, Reason.PINNED)

    # Pass 2: global memories, up to their quarter: those the message calls for first, served
    # as recalled (at 10,000 memories, 6 of 24 places went to the most recent of thousands of
    # globals while relevant ones waited), then by rank.
    taken = 0
    recalled_globals = ((m, Reason.SEMANTIC) for m in recalled if m.scope is Scope.GLOBAL)
    by_rank = ((m, Reason.GLOBAL) for m in pool.globals)
    for memory, reason in itertools.chain(recalled_globals, by_rank):
        if taken >= quarter or room() <= 0:
            break
        if memory.id not in chosen:
            add(memory, reason)
            taken += 1

    # Pass 3: recall by meaning and rare keywords, the two rankings interleaved; the recent
    # conversation's best memories take the last places the message's recall would have held.
    said = sorted(heard, key=lambda i: (-heard[i], pool.position[i]))
    kept_for_conversation = max(0, min(conversation_slots, semantic_slots, len(said)))
    in_window = _said_in(pool, window, scores)
    kept_for_time = max(0, min(time_slots, semantic_slots - kept_for_conversation, len(in_window)))
    coming = {i: days for i, days in (dated or {}).items() if i in pool.position}
    in_days = _dated_in(pool, coming, scores)
    kept_for_dated = max(
        0, min(dated_slots, semantic_slots - kept_for_conversation - kept_for_time, len(in_days))
    )
    from_message = iter(recalled)
    taken = 0

    def recall_until(slots: int) -> None:
        nonlocal taken
        while taken < slots and room() > 0:
            memory = next(from_message, None)
            if memory is None:
                return
            if memory.id not in chosen:
                add(memory, Reason.SEMANTIC)
                taken += 1

    recall_until(semantic_slots - kept_for_conversation - kept_for_time - kept_for_dated)
    dated_taken = 0
    for memory in in_days:
        if dated_taken >= kept_for_dated or room() <= 0:
            break
        if memory.id not in chosen:
            add(memory, Reason.DATED)
            dated_taken += 1
    time_taken = 0
    for memory in in_window:
        if time_taken >= kept_for_time or room() <= 0:
            break
        if memory.id not in chosen:
            add(memory, Reason.TIME)
            time_taken += 1
    heard_taken = 0
    for memory_id in said:
        if heard_taken >= kept_for_conversation or room() <= 0:
            break
        if memory_id not in chosen:
            add(pool.ordered[pool.position[memory_id]], Reason.CONVERSATION)
            heard_taken += 1
    recall_until(semantic_slots - heard_taken - time_taken - dated_taken)

    # Pass 3b: what plain cosine would serve in `limit` places takes the spare places.
    if spare > 0:
        top = sorted(scores, key=lambda i: (-scores[i], pool.position[i]))[:limit]
        for memory_id in top:
            if spare <= 0 or room() <= 0:
                break
            if memory_id not in chosen:
                add(pool.ordered[pool.position[memory_id]], Reason.SEMANTIC)
                spare -= 1

    # Pass 4: per-kind quotas, counting what earlier passes already gave each kind.
    per_kind = {Kind(k): v for k, v in quotas.items()}
    for kind, quota in per_kind.items():
        have = sum(1 for s in chosen.values() if s.memory.kind is kind)
        for memory in pool.by_kind.get(kind, ()):
            if have >= quota or room() <= 0:
                break
            if memory.id not in chosen:
                add(memory, Reason.QUOTA)
                have += 1

    # Pass 5: fallback, by rank.
    for memory in pool.ordered:
        if room() <= 0:
            break
        if memory.id not in chosen:
            add(memory, Reason.FALLBACK)

    return rules + list(chosen.values())


def _said_in(
    pool: RankedPool, window: tuple[float, float] | None, scores: Mapping[int, float]
) -> list[Memory]:
    """The candidates created in `window` (none without one): those the message recalls by
    meaning first, best first, then the latest said."""
    if window is None:
        return []
    start, end = window
    inside = [m for m in pool.ordered if start <= _finite(m.created_at) < end]
    return sorted(
        inside,
        key=lambda m: (
            m.id not in scores,
            -scores.get(m.id, 0.0),
            -_finite(m.created_at),
            pool.position[m.id],
        ),
    )


def _dated_in(
    pool: RankedPool, coming: Mapping[int, tuple[date, date]], scores: Mapping[int, float]
) -> list[Memory]:
    """The candidates dated in the time asked about: those the message recalls by meaning
    first, best first, then the soonest."""
    return sorted(
        (pool.ordered[pool.position[i]] for i in coming),
        key=lambda m: (
            m.id not in scores,
            -scores.get(m.id, 0.0),
            coming[m.id],
            pool.position[m.id],
        ),
    )


def _fused_order(
    pool: RankedPool,
    scores: Mapping[int, float],
    words: Mapping[int, Sequence[str]],
    decisive: Collection[int] | None,
    limit: int,
) -> list[Memory]:
    """Return the recalled memories: the cosine ranking and the keyword ranking interleaved,
    each memory at its better rank (a keyword hit first at equal rank, then one on both lists);
    a hit that is neither decisive nor eligible by cosine comes after the cosine top `limit`.

    Not a sum over the lists (reciprocal rank fusion): there, 16 memories matching "wedding" and
    ranked 40th by cosine outranked the memory cosine ranked first, which was not served at
    1,000 memories (bench/results/recall.md). Interleaving keeps the cosine top half of the
    recall places whatever the keywords, and a rare word's memory near the top whatever cosine.
    A hit on a word many memories share ("travaille" in 15 of 234) that the model does not find
    eligible either is weaker evidence than the model's own top: it no longer pushes out what
    plain cosine would serve. Eligible, it still may ("drink" in 2 to 6 of 1,000 memories
    carries green tea, ranked 25th to 36th, for "a snack and a hot drink").
    """
    position = pool.position
    by_cosine = sorted(scores, key=lambda i: (-scores[i], position[i]))
    protected = min(limit, len(by_cosine))
    best: dict[int, tuple[int, int, int]] = {}
    for rank, memory_id in enumerate(words):
        # Weak: a word many memories share, and the model does not find it eligible either.
        weak = decisive is not None and memory_id not in decisive and memory_id not in scores
        at = max(rank, protected) if weak else rank
        best[memory_id] = (at, 0, 0 if memory_id in scores else 1)
    for rank, memory_id in enumerate(by_cosine):
        key = (rank, 1, 0 if memory_id in words else 1)
        best[memory_id] = min(best.get(memory_id, key), key)
    return [pool.ordered[position[i]] for i in sorted(best, key=lambda i: (*best[i], position[i]))]


def _unique_by_rank(memories: Iterable[Memory]) -> list[Memory]:
    """Return the memories by rank, one per id (the best-ranked copy when an id repeats)."""
    seen: set[int] = set()
    out: list[Memory] = []
    for memory in sorted(memories, key=rank_key):
        if memory.id not in seen:
            seen.add(memory.id)
            out.append(memory)
    return out


def _eligible_scores(
    position: Mapping[int, int], semantic: Mapping[int, float] | None, threshold: float
) -> dict[int, float]:
    if semantic is None:
        return {}
    return {
        memory_id: float(score)
        for memory_id, score in semantic.items()
        if memory_id in position and math.isfinite(score) and score >= threshold
    }
