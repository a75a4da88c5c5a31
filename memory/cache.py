"""Per-person caches bounded together by their approximate size in bytes, least recently used first.

The engine keeps, per person, a rank-ordered pool of their memories (per story and place), a
matrix of their vectors, and (the reflection worker) a dedup index; the store, what it knows of
their generation and last commits (memory.store.generations). What one of them weighs
grows with the person's memories, from a few kilobytes to hundreds of megabytes (a 100k-memory
person's 768-d matrix is 300 MB), so a bound in entries bounds nothing: they share one bound in
bytes, `[limits] cache_mb`. Putting an entry evicts the least recently used entries of any of
the caches until the total is back under the bound; the entry just put always stays, even alone
over the bound (evicting it would rebuild it at every turn). An evicted entry is built again,
from the database, the next time its person speaks: eviction costs time, never an answer.

The sizes are estimates made without walking the entries (no work on the event loop): numpy
arrays by their own byte counts, Python structures by a per-memory figure measured with
tracemalloc (the constants below, checked within a factor of two by a test, for a person of
no memories or of thousands).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

MIB = 1024 * 1024
# The default bound of every per-person cache together: about 850 people of 500 memories with
# their 384-d vectors (1.2 MB each), or a 100k-memory person's 768-d matrix (300 MB), pools
# and dedup index at once.
CACHE_MB = 1024

# Bytes per memory in a rank-ordered pool: the Memory itself (its text, hash and fields) and
# the pool's tuples and position map: 560-760 B for texts of 27-228 characters (tracemalloc,
# 500 and 5,000 memories).
POOL_BYTES_PER_MEMORY = 650
# Bytes per memory in a dedup index (numpy columns of word ids, lengths and character
# histograms, and the word and group tables): 640-860 B for texts of 20-230 characters
# (tracemalloc, 2,000 memories).
DEDUP_BYTES_PER_MEMORY = 750
# Bytes per vector hash a matrix remembers (a dict entry, an int, a 64-character str): 165-175.
HASH_BYTES = 175
# Bytes every entry costs besides what it holds: its slots in its cache and in the budget's
# order, its key and the tuple holding it (200-325 B, tracemalloc, 10,000 entries).
ENTRY_BYTES = 325
# Bytes of an empty pool, dedup index and vector matrix: what a person with few memories holds
# (tracemalloc, 200 of each: 335 B, 2,480 B and 334 B plus the hash map). Without them a person
# of no memories counted nothing, and 10,000 such people held 300 MB under a bound of 1 GB.
POOL_BYTES = 350
DEDUP_BYTES = 2_500
MATRIX_BYTES = 400

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class CacheBudget:
    """One bound in bytes over several caches, and the order their entries were last used in."""

    def __init__(self, limit_bytes: int = CACHE_MB * MIB) -> None:
        self.limit = limit_bytes
        self.total = 0
        # Entries across every cache, least recently used first, with their sizes.
        self._order: OrderedDict[tuple[SizedCache[Any, Any], Hashable], int] = OrderedDict()
        self.evictions = 0

    @property
    def entries(self) -> int:
        return len(self._order)

    def _use(self, cache: SizedCache[Any, Any], key: Hashable) -> None:
        self._order.move_to_end((cache, key))

    def _add(self, cache: SizedCache[Any, Any], key: Hashable, size: int) -> None:
        self._drop(cache, key)
        self._order[(cache, key)] = size
        self.total += size
        # The entry just put is the most recent: it is evicted last, never by its own put.
        while self.total > self.limit and len(self._order) > 1:
            (owner, victim), _ = next(iter(self._order.items()))
            owner._evict(victim)
            self.evictions += 1

    def _drop(self, cache: SizedCache[Any, Any], key: Hashable) -> None:
        size = self._order.pop((cache, key), None)
        if size is not None:
            self.total -= size


class SizedCache(Generic[K, V]):
    """A map whose entries count against a CacheBudget by `size_of(value)` bytes; `evicted`
    receives what the budget takes out (a dedup index freed off the event loop)."""

    def __init__(
        self,
        budget: CacheBudget,
        size_of: Callable[[V], int],
        evicted: Callable[[V], None] | None = None,
    ) -> None:
        self.budget = budget
        self.size_of = size_of
        self.evicted = evicted
        self._entries: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        """The entry, marked as just used; None when absent."""
        value = self._entries.get(key)
        if value is not None:
            self.budget._use(self, key)
        return value

    def peek(self, key: K) -> V | None:
        """The entry, without marking it used."""
        return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        """Keep `value` as the most recently used entry; others may be evicted for it."""
        self._entries[key] = value
        self.budget._add(self, key, max(0, self.size_of(value)))

    def pop(self, key: K) -> V | None:
        """Take the entry out (it no longer counts against the budget)."""
        self.budget._drop(self, key)
        return self._entries.pop(key, None)

    def clear(self) -> None:
        """Take every entry out."""
        for key in list(self._entries):
            self.pop(key)

    def _evict(self, key: K) -> None:
        self.budget._drop(self, key)
        value = self._entries.pop(key)
        if self.evicted is not None:
            self.evicted(value)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._entries))
