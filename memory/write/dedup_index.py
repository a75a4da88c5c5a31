"""Fast, exact dedup decisions against many memories: the same decisions as `dedup.decide`.

Scoring every pair with difflib costs 0.2-0.4 ms, so seconds per candidate at 10,000 memories.
Every shortcut here is an upper bound, so nothing that could merge is ever skipped:
- a merge needs the same carrier tokens (otherwise the score is capped under the threshold): the
  same numbers, dates and amounts, and no name the candidate lacks unless it opens one of the
  candidate's sentences, so only the groups keyed by the candidate's tokens and a subset of its
  names and openers are looked at;
- difflib's ratio (either direction) is at most 2·M/(la+lb) with M the characters the two texts
  share as multisets; counting characters in 64 hashed buckets can only raise M, so one numpy
  pass bounds the ratio of the whole group;
- Jaccard comes exactly from a content-word index; verbatim containment needs every content word
  of the shorter text in the longer one, which the same index tells.
Only the memories whose bound reaches the threshold (and can still beat the best so far) are
scored for real, best bound first.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memory.bulk import quiet, yielding
from memory.model import Memory
from memory.read.cache import DEDUP_BYTES_PER_MEMORY, CacheBudget, SizedCache
from memory.text import content_words, fold
from memory.write.dedup import (
    MIN_CONTAINED_WORDS,
    MIN_RATIO_CHARS,
    NAME_PREFIX,
    SIMILARITY_THRESHOLD,
    Decision,
    _better,
    _decision,
    carriers,
    openers,
    similarity,
)

BUCKETS = 64
# Up to this many names and openers in a candidate, its groups are found by enumerating their
# subsets (2**12 lookups); past it, by one pass over the group keys.
MAX_ENUMERATED_NAMES = 12


def _histogram(folded: str) -> npt.NDArray[np.int32]:
    codes = np.frombuffer(folded.encode("utf-32-le"), dtype=np.uint32)
    return np.bincount(codes % BUCKETS, minlength=BUCKETS).astype(np.int32)


@dataclass
class _Group:
    """The memories sharing one carrier set."""

    memories: list[Memory | None] = field(default_factory=list)
    words: list[frozenset[str]] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    rows: list[npt.NDArray[np.int32]] = field(default_factory=list)
    postings: dict[str, list[int]] = field(default_factory=dict)
    _matrix: npt.NDArray[np.int32] | None = None

    def add(self, memory: Memory) -> None:
        folded = fold(memory.text)
        index = len(self.memories)
        self.memories.append(memory)
        words = content_words(memory.text)
        self.words.append(words)
        self.lengths.append(len(folded))
        row = _histogram(folded)
        self.rows.append(row)
        for word in words:
            self.postings.setdefault(word, []).append(index)
        if self._matrix is not None:
            # One copy of the group's rows (a memory added on the event loop, during a write)
            # instead of stacking them all again: 100k separate rows took far longer.
            self._matrix = np.vstack((self._matrix, row[np.newaxis]))

    def matrix(self) -> npt.NDArray[np.int32]:
        if self._matrix is None:
            self._matrix = np.stack(self.rows)
        return self._matrix


class DedupIndex:
    """One user's mergeable memories, indexed so that `decide` is exact and fast."""

    def __init__(self, memories: Iterable[Memory] = ()) -> None:
        self._groups: dict[frozenset[str], _Group] = {}
        self._where: dict[int, tuple[frozenset[str], int]] = {}
        for memory in memories:
            self.add(memory)

    def add(self, memory: Memory) -> None:
        """Index a memory (a new one, or the new wording of a replaced one)."""
        key = carriers(memory.text)
        group = self._groups.setdefault(key, _Group())
        self._where[memory.id] = (key, len(group.memories))
        group.add(memory)

    def replace(self, old: Memory, new: Memory) -> None:
        """Index a memory's new wording in place of the old one."""
        self.remove(old.id)
        self.add(new)

    def stack(self) -> None:
        """Stack every group's rows now (a build in a worker thread), not at the first
        decision (on the event loop)."""
        for group in self._groups.values():
            group.matrix()

    def remove(self, memory_id: int) -> None:
        where = self._where.pop(memory_id, None)
        if where is not None:
            self._groups[where[0]].memories[where[1]] = None

    def _candidate_groups(self, text: str) -> Iterator[_Group]:
        """The groups whose carriers may equal the text's (`dedup.same_carriers`): the text's
        tokens, and names among the text's names and openers."""
        key = carriers(text)
        names = (key | openers(text)) - _tokens(key)
        tokens = key - names
        if len(names) > MAX_ENUMERATED_NAMES:
            yield from (g for k, g in self._groups.items() if k - names == tokens)
            return
        ordered = sorted(names)
        for size in range(len(ordered) + 1):
            for chosen in itertools.combinations(ordered, size):
                group = self._groups.get(tokens.union(chosen))
                if group is not None:
                    yield group

    def decide(self, text: str) -> Decision:
        """Return exactly what `dedup.decide(text, memories)` would, without scoring every pair."""
        ranked: list[tuple[float, int, Memory]] = []
        for group in self._candidate_groups(text):
            if not group.memories:
                continue
            bounds = self._bounds(group, text)
            ranked.extend(
                (float(bounds[i]), memory.id, memory)
                for i in np.flatnonzero(bounds >= SIMILARITY_THRESHOLD).tolist()
                if (memory := group.memories[i]) is not None
            )
        ranked.sort(key=lambda t: (-t[0], t[1]))
        best: Memory | None = None
        best_score = 0.0
        for bound, _, memory in ranked:
            if bound < best_score:
                break
            score = similarity(text, memory.text)
            if _better(score, memory, best_score, best):
                best, best_score = memory, score
        return _decision(text, best, best_score)

    def _bounds(self, group: _Group, text: str) -> npt.NDArray[np.float64]:
        """An upper bound of `similarity(text, m)` for every memory of the group."""
        folded = fold(text)
        lengths = np.asarray(group.lengths, dtype=np.float64)
        bounds = np.zeros(len(group.memories), dtype=np.float64)
        if len(folded) >= MIN_RATIO_CHARS:
            shared = np.minimum(group.matrix(), _histogram(folded)).sum(axis=1)
            ratio = 2.0 * shared / (lengths + len(folded))
            bounds = np.where(lengths >= MIN_RATIO_CHARS, ratio, 0.0)
        words = content_words(text)
        overlap: Counter[int] = Counter()
        for word in words:
            overlap.update(group.postings.get(word, ()))
        for index, inter in overlap.items():
            other = group.words[index]
            jaccard = inter / (len(words) + len(other) - inter)
            shorter = min(len(words), len(other))
            # Containment needs all of the shorter text's content words in the longer one.
            contained = inter == shorter and shorter >= MIN_CONTAINED_WORDS
            bounds[index] = max(bounds[index], jaccard, 1.0 if contained else 0.0)
        if len(folded) < MIN_RATIO_CHARS or not words:
            # Identical folded texts score 1.0 whatever their length or words.
            for index, memory in enumerate(group.memories):
                same_length = group.lengths[index] == len(folded)
                if memory is not None and same_length and fold(memory.text) == folded:
                    bounds[index] = 1.0
        return bounds


def _tokens(key: frozenset[str]) -> frozenset[str]:
    return frozenset(k for k in key if not k.startswith(NAME_PREFIX))


@quiet
def build_index(memories: Iterable[Memory]) -> DedupIndex:
    """Build an index whole, group matrices included, in a worker thread. What stalled the
    loop beside a build were the garbage collector's full passes (paused during it) and the
    hand-over of the interpreter lock on a busy machine (let go regularly): `memory.bulk`."""
    index = DedupIndex(yielding(memories))
    index.stack()
    return index


IndexKey = tuple[int, int, bool]


class IndexCache:
    """Keeps each (user, story, DM side) index between reflections of the same worker.

    Building an index is the costly part (seconds at 100k memories); keeping it is exact as long
    as nobody else changed that user's memories: the cached entry carries the store generation
    its content matches, so any other write (a /forget, a /remember) forces a rebuild. The
    indexes count against `budget` in bytes with the engine's caches (memory.read.cache).
    """

    def __init__(self, budget: CacheBudget | None = None) -> None:
        # What the budget evicted (possibly to make room in another cache), for `release`.
        self._evicted: list[DedupIndex] = []
        self._entries: SizedCache[IndexKey, tuple[int, DedupIndex]] = SizedCache(
            budget or CacheBudget(),
            lambda entry: DEDUP_BYTES_PER_MEMORY * len(entry[1]._where),
            evicted=lambda entry: self._evicted.append(entry[1]),
        )

    def get(self, key: IndexKey, generation: int) -> DedupIndex | None:
        """Return the cached index if it matches `generation`."""
        entry = self._entries.peek(key)
        if entry is None or entry[0] != generation:
            return None
        self._entries.get(key)  # just used
        return entry[1]

    def put(self, key: IndexKey, generation: int, index: DedupIndex) -> list[DedupIndex]:
        """Cache `index` as matching the store at `generation`; return the indexes it no
        longer holds, for `release` (nothing else refers to them)."""
        dropped = []
        old = self._entries.pop(key)
        if old is not None and old[1] is not index:
            dropped.append(old[1])
        self._entries.put(key, (generation, index))
        dropped += self._evicted
        self._evicted = []
        return dropped

    def discard(self, key: IndexKey) -> list[DedupIndex]:
        """Forget the index of `key`; return it (if any) and what was evicted, for `release`."""
        old = self._entries.pop(key)
        dropped = ([] if old is None else [old[1]]) + self._evicted
        self._evicted = []
        return dropped


async def release(dropped: list[DedupIndex]) -> None:
    """Free indexes a cache dropped, in a worker thread and in slices: freeing one of 100,000
    memories is hundreds of thousands of objects, 90-230 ms of the event loop's thread when it
    happened there (make bench-loop), and one C call freeing them all would hold the
    interpreter lock as long. The caller holds no other reference to them."""
    if dropped:
        await asyncio.to_thread(_dismantle, dropped)


# Objects freed per slice: the other threads get the interpreter lock between two slices.
RELEASE_SLICE = 2_000


def _dismantle(dropped: list[DedupIndex]) -> None:
    while dropped:
        index = dropped.pop()
        if sys.getrefcount(index) > 2:  # ours and the call's: someone still uses it
            continue
        index._where.clear()
        while index._groups:
            _, group = index._groups.popitem()
            group._matrix = None
            for part in (group.memories, group.words, group.lengths, group.rows):
                while part:
                    del part[-RELEASE_SLICE:]
            while group.postings:
                group.postings.popitem()
