"""Fast, exact dedup decisions against many memories: the same decisions as `dedup.decide`.

Scoring every pair with difflib costs 0.2-0.4 ms, so seconds per candidate at 10,000 memories.
Every shortcut here is an upper bound, so nothing that could merge is ever skipped:
- a merge needs the same carrier tokens (otherwise the score is capped under the threshold): the
  same numbers, dates and amounts, and no name the candidate lacks unless it opens one of the
  candidate's sentences, so only the groups keyed by the candidate's tokens and a subset of its
  names and openers are looked at;
- difflib's ratio (either direction) is at most 2·M/(la+lb) with M the characters the two texts
  share as multisets; counting characters in 64 hashed buckets can only raise M, so one numpy
  pass bounds the ratio of every memory at once;
- Jaccard comes exactly from the content words; verbatim containment needs every content word
  of the shorter text in the longer one, which the same words tell.
Only the memories whose bound reaches the threshold (and can still beat the best so far) are
scored for real, best bound first.

The index is a few numpy arrays (`memory.write.dedup_features`), not objects per memory: it is
built from features computed in another process (`memory.write.dedup_pool`) or a thread, and a
memory read from the store becomes a `Memory` only when a decision scores it.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memory.bulk import quiet
from memory.cache import (
    DEDUP_BYTES,
    DEDUP_BYTES_PER_MEMORY,
    ENTRY_BYTES,
    CacheBudget,
    SizedCache,
)
from memory.model import Memory
from memory.text import fold
from memory.write.dedup import (
    MIN_CONTAINED_WORDS,
    MIN_RATIO_CHARS,
    NAME_PREFIX,
    SIMILARITY_THRESHOLD,
    Decision,
    _better,
    _decision,
    carrier_key,
    openers,
    similarity,
)
from memory.write.dedup_features import (
    Features,
    features,
    group_key,
    histogram,
    key_tokens,
)
from memory.write.dedup_words import compared_words, content

# Up to this many names and openers in a candidate, its groups are found by enumerating their
# subsets (2**12 lookups); past it, by one pass over the group keys.
MAX_ENUMERATED_NAMES = 12
_U16 = int(np.iinfo(np.uint16).max)


class Source(Protocol):
    """Memories in ascending id order, made into `Memory` objects only when asked."""

    # What holds them (rows or memories): freed in slices by `release`.
    items: list[Any]

    def __len__(self) -> int: ...
    def memory(self, i: int) -> Memory: ...
    def text(self, i: int) -> str: ...
    def ids(self) -> list[int]: ...
    def texts(self) -> list[str]: ...


class Listed:
    """A `Source` over memories already made."""

    def __init__(self, memories: Iterable[Memory]) -> None:
        self.items: list[Any] = sorted(memories, key=lambda m: m.id)

    def __len__(self) -> int:
        return len(self.items)

    def memory(self, i: int) -> Memory:
        return self.items[i]  # type: ignore[no-any-return]

    def text(self, i: int) -> str:
        return self.memory(i).text

    def ids(self) -> list[int]:
        return [m.id for m in self.items]

    def texts(self) -> list[str]:
        return [m.text for m in self.items]


class _Column:
    """A numpy array appended to in place: its capacity doubles, so n appends cost O(n)."""

    def __init__(self, data: npt.NDArray[Any]) -> None:
        self._data = data
        self.size = len(data)

    def view(self) -> npt.NDArray[Any]:
        return self._data[: self.size]

    def extend(self, rows: npt.NDArray[Any]) -> None:
        need = self.size + len(rows)
        dtype = np.result_type(self._data.dtype, rows.dtype)
        if need > len(self._data) or dtype != self._data.dtype:
            grown = np.empty((max(need, 2 * len(self._data), 16), *self._data.shape[1:]), dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : need] = rows
        self.size = need

    def set(self, i: int, value: Any) -> None:
        self._data[i] = value


class DedupIndex:
    """One user's mergeable memories, indexed so that `decide` is exact and fast."""

    def __init__(self, memories: Iterable[Memory] = ()) -> None:
        source = Listed(memories)
        self._load(source, [features(source.texts())])

    @classmethod
    def assembled(cls, source: Source, parts: Sequence[Features]) -> DedupIndex:
        """The index of `source` from the features of its texts, in order, in parts."""
        index = cls.__new__(cls)
        index._load(source, parts)
        return index

    def _load(self, source: Source, parts: Sequence[Features]) -> None:
        self._source = source
        self._base = len(source)
        self._base_ids = np.asarray(source.ids(), dtype=np.int64)
        # Memories added since (new ones, new wordings): by position past the source's.
        self._added: list[Memory] = []
        self._where: dict[int, int] = {}
        self._words: dict[str, int] = {}
        self._groups: dict[str, int] = {}
        group, word_ids, word_start, wcount = [], [], [], []
        offset = entries = 0
        for part in parts:
            words = [self._words.setdefault(w, len(self._words)) for w in part.words]
            keys = [self._groups.setdefault(k, len(self._groups)) for k in part.groups]
            group.append(np.asarray(keys, dtype=np.int32)[part.group])
            word_ids.append(np.asarray(words, dtype=np.int32)[part.word_ids])
            counts = np.diff(part.word_ptr).astype(np.int32)
            wcount.append(counts)
            word_start.append(part.word_ptr[:-1] + entries)
            offset += len(counts)
            entries += len(part.word_ids)
        if offset != self._base:
            raise ValueError(f"features of {offset} texts for {self._base} memories")
        self._ids = _Column(self._base_ids.copy())
        self._lengths = _Column(_joined([p.lengths for p in parts], np.int32))
        self._compared_lengths = _Column(_joined([p.compared_lengths for p in parts], np.int32))
        self._hist = _Column(_joined([p.hist for p in parts], np.uint16, 2))
        self._group = _Column(_joined(group, np.int32))
        self._wcount = _Column(_joined(wcount, np.int32))
        self._word_ids = _Column(_joined(word_ids, np.int32))
        # Where each memory's words start in `_word_ids` (they follow each other in order).
        self._word_start = _Column(_joined(word_start, np.int64))
        self._alive = _Column(np.ones(self._base, dtype=bool))

    def __len__(self) -> int:
        return int(self._alive.view().sum())

    @property
    def stored(self) -> int:
        """The memories its arrays hold, removed ones included until it is built again."""
        return self._base + len(self._added)

    def add(self, memory: Memory) -> None:
        """Index a memory (a new one, or the new wording of a replaced one)."""
        self.remove(memory.id)
        position = self._ids.size
        spelled = compared_words(memory.text)
        compared = " ".join(spelled)
        row = histogram(compared)
        words = [self._words.setdefault(w, len(self._words)) for w in content(spelled)]
        group = self._groups.setdefault(group_key(carrier_key(memory.text)), len(self._groups))
        self._ids.extend(np.asarray([memory.id], dtype=np.int64))
        self._lengths.extend(np.asarray([len(fold(memory.text))], dtype=np.int32))
        self._compared_lengths.extend(np.asarray([len(compared)], dtype=np.int32))
        self._hist.extend((row if row.max() > _U16 else row.astype(np.uint16))[np.newaxis])
        self._group.extend(np.asarray([group], dtype=np.int32))
        self._wcount.extend(np.asarray([len(words)], dtype=np.int32))
        self._word_start.extend(np.asarray([self._word_ids.size], dtype=np.int64))
        self._word_ids.extend(np.asarray(words, dtype=np.int32))
        self._alive.extend(np.ones(1, dtype=bool))
        self._added.append(memory)
        self._where[memory.id] = position

    def replace(self, old: Memory, new: Memory) -> None:
        """Index a memory's new wording in place of the old one."""
        self.remove(old.id)
        self.add(new)

    def remove(self, memory_id: int) -> None:
        position = self._where.pop(memory_id, None)
        if position is None:
            i = int(np.searchsorted(self._base_ids, memory_id))
            if i < self._base and self._base_ids[i] == memory_id:
                position = i
        if position is not None:
            self._alive.set(position, False)

    def _memory(self, position: int) -> Memory:
        if position < self._base:
            return self._source.memory(position)
        return self._added[position - self._base]

    def _text(self, position: int) -> str:
        if position < self._base:
            return self._source.text(position)
        return self._added[position - self._base].text

    def _candidate_groups(self, text: str) -> list[int]:
        """The groups whose carriers may equal the text's (`dedup.same_carriers`): the text's
        tokens, and names among the text's names and openers."""
        key = carrier_key(text)
        names = (key | openers(text)) - _tokens(key)
        tokens = key - names
        if len(names) > MAX_ENUMERATED_NAMES:
            return [g for k, g in self._groups.items() if key_tokens(k) - names == tokens]
        ordered = sorted(names)
        found = []
        for size in range(len(ordered) + 1):
            for chosen in itertools.combinations(ordered, size):
                group = self._groups.get(group_key(tokens.union(chosen)))
                if group is not None:
                    found.append(group)
        return found

    def decide(self, text: str) -> Decision:
        """Return exactly what `dedup.decide(text, memories)` would, without scoring every pair."""
        # Lookup tables: one gather over the memories (and their words, below), where np.isin
        # made a pass per group or word (a decision 3.5 ms instead of 0.6 ms at 30k memories).
        wanted = np.zeros(len(self._groups), dtype=bool)
        wanted[self._candidate_groups(text)] = True
        members = np.flatnonzero(wanted[self._group.view()] & self._alive.view())
        best: Memory | None = None
        best_score = 0.0
        if not members.size:
            return _decision(text, best, best_score)
        bounds = self._bounds(members, text)
        kept = bounds >= SIMILARITY_THRESHOLD
        positions, bounds = members[kept], bounds[kept]
        # Best bound first, ties by id: the order the scores are compared in.
        for k in np.lexsort((self._ids.view()[positions], -bounds)).tolist():
            if bounds[k] < best_score:
                break
            memory = self._memory(int(positions[k]))
            score = similarity(text, memory.text)
            if _better(score, memory, best_score, best):
                best, best_score = memory, score
        return _decision(text, best, best_score)

    def _bounds(self, members: npt.NDArray[np.intp], text: str) -> npt.NDArray[np.float64]:
        """An upper bound of `similarity(text, m)` for every memory at `members`."""
        folded = fold(text)
        spelled = compared_words(text)
        compared = " ".join(spelled)
        lengths = self._lengths.view()[members]
        bounds = np.zeros(len(members), dtype=np.float64)
        if len(folded) >= MIN_RATIO_CHARS:
            # The ratio compares the compared texts, used when both folded texts are long enough.
            hist = self._hist.view()[members].astype(np.int32)
            shared = np.minimum(hist, histogram(compared)).sum(axis=1)
            total = self._compared_lengths.view()[members].astype(np.float64) + len(compared)
            ratio = 2.0 * shared / np.maximum(total, 1.0)
            bounds = np.where(lengths >= MIN_RATIO_CHARS, ratio, 0.0)
        words = content(spelled)
        known = [self._words[w] for w in words if w in self._words]
        if known:
            shared = np.zeros(len(self._words), dtype=bool)
            shared[known] = True
            # The members' words only (a gather of their ranges), not every memory's.
            other = self._wcount.view()[members]
            starts = self._word_start.view()[members]
            ends = np.cumsum(other)
            entries = np.repeat(starts - ends + other, other) + np.arange(int(ends[-1]))
            owner = np.repeat(np.arange(len(members)), other)
            hits = shared[self._word_ids.view()[entries]]
            inter = np.bincount(owner[hits], minlength=len(members)).astype(np.float64)
            jaccard = inter / np.maximum(len(words) + other - inter, 1)
            shorter = np.minimum(len(words), other)
            # Containment needs all of the shorter text's content words in the longer one.
            contained = (inter == shorter) & (shorter >= MIN_CONTAINED_WORDS)
            bounds = np.maximum(bounds, np.where(inter > 0, np.maximum(jaccard, contained), 0.0))
        if len(folded) < MIN_RATIO_CHARS or not words:
            # Identical folded texts score 1.0 whatever their length or words.
            for k in np.flatnonzero(lengths == len(folded)).tolist():
                if fold(self._text(int(members[k]))) == folded:
                    bounds[k] = 1.0
        return bounds


def _joined(parts: Sequence[npt.NDArray[Any]], dtype: Any, ndim: int = 1) -> npt.NDArray[Any]:
    if not parts:
        return np.empty((0, 64) if ndim == 2 else 0, dtype=dtype)
    return np.concatenate(parts)


def _tokens(key: frozenset[str]) -> frozenset[str]:
    return frozenset(k for k in key if not k.startswith(NAME_PREFIX))


@quiet
def build_index(memories: Iterable[Memory]) -> DedupIndex:
    """Build an index whole in this thread (a worker thread: seconds at 100k memories);
    `memory.write.dedup_pool` builds one in another process."""
    return DedupIndex(memories)


IndexKey = tuple[int, int, bool]


class IndexCache:
    """Keeps each (user, story, DM side) index between reflections of the same worker.

    Building an index is the costly part (seconds at 100k memories); keeping it is exact as long
    as nobody else changed that user's memories: the cached entry carries the store generation
    its content matches, so any other write (a /forget, a /remember) forces a rebuild. The
    indexes count against `budget` in bytes with the engine's caches (memory.cache).
    """

    def __init__(self, budget: CacheBudget | None = None) -> None:
        # What the budget evicted (possibly to make room in another cache), for `release`.
        self._evicted: list[DedupIndex] = []
        self._entries: SizedCache[IndexKey, tuple[int, DedupIndex]] = SizedCache(
            budget or CacheBudget(),
            lambda entry: ENTRY_BYTES + DEDUP_BYTES + DEDUP_BYTES_PER_MEMORY * entry[1].stored,
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
    """Free indexes a cache dropped, in a worker thread and in slices: an index of 100,000
    memories read from the store holds their 100,000 rows, and one C call freeing them all
    holds the interpreter lock as long (90-230 ms of the event loop's thread when the index
    was objects per memory, freed there: make bench-loop). The caller holds no other
    reference to them."""
    if dropped:
        await asyncio.to_thread(_dismantle, dropped)


# Objects freed per slice: the other threads get the interpreter lock between two slices.
RELEASE_SLICE = 2_000


def _dismantle(dropped: list[DedupIndex]) -> None:
    while dropped:
        index = dropped.pop()
        if sys.getrefcount(index) > 2:  # ours and the call's: someone still uses it
            continue
        for part in (index._source.items, index._added):
            while part:
                del part[-RELEASE_SLICE:]
        while index._where:
            index._where.popitem()
