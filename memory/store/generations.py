"""Per-person generations: what tells a cache (a candidate pool, a vector matrix, a dedup index)
that the person's data changed since it was built, in this process or another one.

Every write transaction that touches a person raises their generation in `person_generations`
by one, in the same transaction (migration 17), and records which generation last changed
their memory rows (not only vectors: `rows_generation`). A process learns the generations of
its own commits at once and another process's when it reads them (`Store.sync_generation`,
one indexed read). It also remembers, for its own last commits, the ids they changed, so a
cache built a few commits ago is patched instead of rebuilt; a generation it did not commit
itself has no ids here, and the cache falls back to a full rebuild or a comparison of hashes.
On a schema older than 17 the generations are counted in this process only.

What a process knows of a person is kept in a cache bounded in bytes (`bound`: the engine's
`[limits] cache_mb`, memory.cache), least recently used out first: the database holds every
generation, so a person forgotten here is read again at their next `sync_generation`, and their
caches are rebuilt in full (their log went with them). Until then their generation is UNKNOWN,
which no cache entry is ever built at: a cache cannot take a forgotten person's old generation
for their current one. On a schema older than 17 nothing is forgotten (this process's counts
are the only ones).

A write that relies on a cache (the dedup index) reads the generation inside its transaction
(`read_in`) and the commit verifies it (`bump`): on SQLite nothing can commit in between (one
writer at a time); on PostgreSQL another process can, so `bump` locks the person's row and
refuses the commit (`GenerationMoved`) when their memory rows changed since the read. The row is
locked at the end of the transaction, not at the read: every writer raises the generation last,
after its own row locks, so the generation rows are always locked last and in the order of the
user ids; a lock taken at the read, before the rows a concurrent forget had locked, deadlocked.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from memory.cache import CacheBudget, SizedCache
from memory.errors import StoreError

# Commits remembered per user with the memory ids they changed, so a cache built a few commits
# ago can be patched instead of rebuilt; older than this, it is rebuilt.
CHANGE_LOG = 64
# The schema that keeps each person's generation in the database (person_generations).
GENERATIONS_SCHEMA = 17

_BUMP = (
    "INSERT INTO person_generations (user_id, generation, rows_generation) VALUES (?1, 1, ?2)"
    " ON CONFLICT (user_id) DO UPDATE SET generation = person_generations.generation + 1,"
    " rows_generation = CASE WHEN ?2 = 0 THEN person_generations.rows_generation"
    " ELSE person_generations.generation + 1 END"
    " RETURNING generation, rows_generation"
)
# The generation of a person this process does not know (never read, or forgotten): below every
# generation the database holds, and never one a cache entry is built at.
UNKNOWN = -1
# Bytes a known person weighs here: their entry with its slots in the cache and the budget and
# the log's first block; each commit remembered (its tuple and two sets); each id the sets hold.
# Measured with tracemalloc over 2,000 people: 1,615 B for one commit of no id, 35 KB for 64
# commits of one id, 87 KB for 64 commits of ten ids.
PERSON_BYTES = 1_100
COMMIT_BYTES = 550
ID_BYTES = 90

_READ = "SELECT generation, rows_generation FROM person_generations WHERE user_id = ?"


class GenerationMoved(StoreError):
    """Another process changed the person's memories between the read of their generation in
    a write transaction and its commit: what the transaction wrote against a cache built before
    that change is rolled back, to be done again."""


class Touched:
    """What one write transaction changed, per person: what their caches need to know at the
    commit (`Generations.bump` raises their generations from it; each backend's `Tx` holds one)."""

    def __init__(self) -> None:
        # Per touched user: the memory ids changed (None: unknown, any of them), empty when only
        # vectors changed.
        self.changed: dict[int, set[int] | None] = {}
        # Per user: the memory ids whose vector alone changed (None: unknown), for the caches
        # of vectors, which a memory change makes stale too.
        self.embedded: dict[int, set[int] | None] = {}
        # Per user: the rows generation a read inside this transaction relied on (the commit
        # verifies it: `Generations.bump`).
        self.vouched: dict[int, int] = {}

    @property
    def users(self) -> set[int]:
        return set(self.changed)

    def touch(
        self, user_id: int, memory_ids: Iterable[int] | None = None, *, vectors_only: bool = False
    ) -> None:
        """Note that this user's memories (these ids; None: any) or only their vectors change."""
        known = self.changed.setdefault(user_id, set())
        if vectors_only:
            vectors = self.embedded.setdefault(user_id, set())
            if memory_ids is None:
                self.embedded[user_id] = None
            elif vectors is not None:
                vectors.update(memory_ids)
            return
        if known is None:
            return
        if memory_ids is None:
            self.changed[user_id] = None
        else:
            known.update(memory_ids)


class _Reads(Protocol):
    async def fetchone(self, sql: str, params: Any = ()) -> Any: ...


class _Tx(_Reads, Protocol):
    """What the generations use of a write transaction (memory.store.db.Tx)."""

    @property
    def dialect(self) -> str: ...

    @property
    def touched(self) -> Touched: ...

    def for_update(self) -> str: ...


Commit = tuple[int, frozenset[int] | None, frozenset[int] | None]


@dataclass(slots=True)
class _Person:
    # The highest generation known here, and the highest that changed rows.
    known: int = 0
    rows_at: int = 0
    # (generation, memory ids changed, ids whose vector alone changed) of this process's own
    # commits; None: any.
    log: deque[Commit] = field(default_factory=lambda: deque(maxlen=CHANGE_LOG))
    # What the sets of `log` hold, for the size.
    ids: int = 0


def _person_bytes(person: _Person) -> int:
    return PERSON_BYTES + COMMIT_BYTES * len(person.log) + ID_BYTES * person.ids


class Generations:
    """One process's knowledge of every person's generation (owned by its store)."""

    def __init__(self) -> None:
        # Whether the schema has person_generations; set once the store is migrated.
        self.shared = False
        # Unbounded until `bound` gives a budget (a process with no engine lives briefly).
        self._people: SizedCache[int, _Person] = SizedCache(CacheBudget(sys.maxsize), _person_bytes)

    def bound(self, budget: CacheBudget) -> None:
        """Keep what is known of people within `budget`, with the caches built on it; on a
        schema older than 17 nothing can be forgotten, and nothing is."""
        if not self.shared or self._people.budget is budget:
            return
        people, self._people = self._people, SizedCache(budget, _person_bytes)
        for user_id in people:
            person = people.pop(user_id)
            assert person is not None
            self._people.put(user_id, person)

    def known(self) -> int:
        """How many people this process knows the generation of."""
        return len(self._people)

    async def bump(self, tx: _Tx) -> dict[int, tuple[int, int]]:
        """Raise the generation of every user `tx` touched, inside it (before its commit);
        return each one's (generation, rows_generation) for `committed`."""
        bumped: dict[int, tuple[int, int]] = {}
        touched = tx.touched
        for user_id in sorted(touched.changed):
            first = False
            if self.shared and user_id in touched.vouched and tx.dialect != "sqlite":
                first = await self._verify(tx, user_id)
            ids = touched.changed[user_id]
            rows = ids is None or bool(ids)  # else only vectors changed
            if not self.shared:
                person = self._people.peek(user_id)
                generation = self.current(user_id) + 1
                rows_at = generation if rows else (person.rows_at if person else 0)
                bumped[user_id] = (generation, rows_at)
                continue
            row = await tx.fetchone(_BUMP, (user_id, int(rows)))
            assert row is not None
            if first and int(row[0]) != 1:  # another process's first commit came in between
                raise GenerationMoved(f"the memories of user {user_id} changed in another process")
            bumped[user_id] = (int(row[0]), int(row[1]))
        return bumped

    async def _verify(self, tx: _Tx, user_id: int) -> bool:
        """Lock the user's row to the commit and check no other commit changed their memory
        rows since `read_in` (one that changed only vectors leaves a dedup index current).
        Return whether the row is still absent: the bump that creates it must find it so."""
        row = await tx.fetchone(_READ + tx.for_update(), (user_id,))
        if row is None:
            return True
        if int(row[1]) != tx.touched.vouched[user_id]:
            raise GenerationMoved(f"the memories of user {user_id} changed in another process")
        return False

    def committed(self, touched: Touched, bumped: dict[int, tuple[int, int]]) -> None:
        """Remember what a committed transaction changed, at the generations it took."""
        for user_id, ids in touched.changed.items():
            generation, rows_at = bumped[user_id]
            vectors = touched.embedded.get(user_id, set())
            commit = (
                generation,
                None if ids is None else frozenset(ids),
                None if vectors is None else frozenset(vectors),
            )
            person = self._learned(user_id, generation, rows_at)
            if len(person.log) == CHANGE_LOG:
                person.ids -= _ids(person.log[0])
            person.log.append(commit)
            person.ids += _ids(commit)
            self._people.put(user_id, person)  # its new size

    async def read(self, db: _Reads, user_id: int) -> int:
        """Read the user's generation through `db` and return the highest known."""
        if not self.shared:
            return self.current(user_id)
        row = await db.fetchone(_READ, (user_id,))
        return self._learn(user_id, *((int(row[0]), int(row[1])) if row else (0, 0)))

    async def read_in(self, tx: _Tx, user_id: int) -> int:
        """Read the user's generation inside a write transaction and return the highest known;
        the commit verifies that no other process changed their memory rows since (`bump`)."""
        if not self.shared:
            return self.current(user_id)
        row = await tx.fetchone(_READ, (user_id,))
        generation, rows_at = (int(row[0]), int(row[1])) if row else (0, 0)
        tx.touched.vouched.setdefault(user_id, rows_at)
        return self._learn(user_id, generation, rows_at)

    def _learn(self, user_id: int, generation: int, rows_at: int) -> int:
        return self._learned(user_id, generation, rows_at).known

    def _learned(self, user_id: int, generation: int, rows_at: int) -> _Person:
        person = self._people.get(user_id)
        if person is None:
            person = _Person()
            self._people.put(user_id, person)
        person.known = max(generation, person.known)
        person.rows_at = max(rows_at, person.rows_at)
        return person

    def current(self, user_id: int) -> int:
        """The highest generation of the user known here; UNKNOWN when none is (shared
        schema: the database has it)."""
        person = self._people.peek(user_id)
        if person is not None:
            return person.known
        return UNKNOWN if self.shared else 0

    def since(self, user_id: int, generation: int, *, vectors: bool) -> frozenset[int] | None:
        """The ids changed after `generation` (with `vectors`, those whose vector alone
        changed too), or None when not known here."""
        person = self._people.peek(user_id)
        if person is None:
            return None if self.shared else frozenset()
        current = person.known
        if generation == current:
            return frozenset()
        if not vectors and person.rows_at <= generation:
            return frozenset()  # only vectors changed since, in whichever process
        log = person.log
        # Every generation between must be one of this process's commits: a gap is another
        # process's, whose ids are not known here.
        between = [at for at, _, _ in log if at > generation]
        if between != list(range(generation + 1, current + 1)):
            return None
        changed: set[int] = set()
        for at, ids, embedded in log:
            if at <= generation:
                continue
            if ids is None or (vectors and embedded is None):
                return None
            changed |= ids
            if vectors and embedded is not None:
                changed |= embedded
        return frozenset(changed)


def _ids(commit: Commit) -> int:
    return sum(len(part) for part in commit[1:] if part is not None)
