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

A write that relies on a cache (the dedup index) reads the generation inside its transaction
(`read_in`) and the commit verifies it (`bump`): on SQLite nothing can commit in between (one
writer at a time); on PostgreSQL another process can, so `bump` locks the person's row and
refuses the commit (`GenerationMoved`) when their memory rows changed since the read. The row is
locked at the end of the transaction, not at the read: every writer raises the generation last,
after its own row locks, so the generation rows are always locked last and in the order of the
user ids; a lock taken at the read, before the rows a concurrent forget had locked, deadlocked.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Protocol

from memory.errors import StoreError

if TYPE_CHECKING:
    from memory.store.db import Tx

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
_READ = "SELECT generation, rows_generation FROM person_generations WHERE user_id = ?"


class GenerationMoved(StoreError):
    """Another process changed the person's memories between the read of their generation in
    a write transaction and its commit: what the transaction wrote against a cache built before
    that change is rolled back, to be done again."""


class _Reads(Protocol):
    async def fetchone(self, sql: str, params: Any = ()) -> Any: ...


class Generations:
    """One process's knowledge of every person's generation (owned by its Store)."""

    def __init__(self) -> None:
        # Whether the schema has person_generations; set once the store is migrated.
        self.shared = False
        # Per user: the highest generation known here, and the highest that changed rows.
        self._known: dict[int, int] = {}
        self._rows_at: dict[int, int] = {}
        # Per user: (generation, memory ids changed, ids whose vector alone changed) of this
        # process's own commits; None: any.
        self._log: dict[int, deque[tuple[int, frozenset[int] | None, frozenset[int] | None]]] = {}

    async def bump(self, tx: Tx) -> dict[int, tuple[int, int]]:
        """Raise the generation of every user `tx` touched, inside it (before its commit);
        return each one's (generation, rows_generation) for `committed`."""
        bumped: dict[int, tuple[int, int]] = {}
        for user_id in sorted(tx.changed):
            first = False
            if self.shared and user_id in tx.vouched and tx.dialect != "sqlite":
                first = await self._verify(tx, user_id)
            ids = tx.changed[user_id]
            rows = ids is None or bool(ids)  # else only vectors changed
            if not self.shared:
                generation = self.current(user_id) + 1
                rows_at = generation if rows else self._rows_at.get(user_id, 0)
                bumped[user_id] = (generation, rows_at)
                continue
            row = await tx.fetchone(_BUMP, (user_id, int(rows)))
            assert row is not None
            if first and int(row[0]) != 1:  # another process's first commit came in between
                raise GenerationMoved(f"the memories of user {user_id} changed in another process")
            bumped[user_id] = (int(row[0]), int(row[1]))
        return bumped

    async def _verify(self, tx: Tx, user_id: int) -> bool:
        """Lock the user's row to the commit and check no other commit changed their memory
        rows since `read_in` (one that changed only vectors leaves a dedup index current).
        Return whether the row is still absent: the bump that creates it must find it so."""
        row = await tx.fetchone(_READ + tx.for_update(), (user_id,))
        if row is None:
            return True
        if int(row[1]) != tx.vouched[user_id]:
            raise GenerationMoved(f"the memories of user {user_id} changed in another process")
        return False

    def committed(self, tx: Tx, bumped: dict[int, tuple[int, int]]) -> None:
        """Remember what a committed transaction changed, at the generations it took."""
        for user_id, ids in tx.changed.items():
            generation, rows_at = bumped[user_id]
            self._learn(user_id, generation, rows_at)
            log = self._log.setdefault(user_id, deque(maxlen=CHANGE_LOG))
            vectors = tx.embedded.get(user_id, set())
            log.append((
                generation,
                None if ids is None else frozenset(ids),
                None if vectors is None else frozenset(vectors),
            ))  # fmt: skip

    async def read(self, db: _Reads, user_id: int) -> int:
        """Read the user's generation through `db` and return the highest known."""
        if not self.shared:
            return self.current(user_id)
        row = await db.fetchone(_READ, (user_id,))
        return self._learn(user_id, *((int(row[0]), int(row[1])) if row else (0, 0)))

    async def read_in(self, tx: Tx, user_id: int) -> int:
        """Read the user's generation inside a write transaction and return the highest known;
        the commit verifies that no other process changed their memory rows since (`bump`)."""
        if not self.shared:
            return self.current(user_id)
        row = await tx.fetchone(_READ, (user_id,))
        generation, rows_at = (int(row[0]), int(row[1])) if row else (0, 0)
        tx.vouched.setdefault(user_id, rows_at)
        return self._learn(user_id, generation, rows_at)

    def _learn(self, user_id: int, generation: int, rows_at: int) -> int:
        known = max(generation, self._known.get(user_id, 0))
        self._known[user_id] = known
        self._rows_at[user_id] = max(rows_at, self._rows_at.get(user_id, 0))
        return known

    def current(self, user_id: int) -> int:
        return self._known.get(user_id, 0)

    def since(self, user_id: int, generation: int, *, vectors: bool) -> frozenset[int] | None:
        """The ids changed after `generation` (with `vectors`, those whose vector alone
        changed too), or None when not known here."""
        current = self.current(user_id)
        if generation == current:
            return frozenset()
        if not vectors and self._rows_at.get(user_id, 0) <= generation:
            return frozenset()  # only vectors changed since, in whichever process
        log = self._log.get(user_id)
        # Every generation between must be one of this process's commits: a gap is another
        # process's, whose ids are not known here.
        between = [] if not log else [at for at, _, _ in log if at > generation]
        if between != list(range(generation + 1, current + 1)):
            return None
        changed: set[int] = set()
        for at, ids, embedded in log or ():
            if at <= generation:
                continue
            if ids is None or (vectors and embedded is None):
                return None
            changed |= ids
            if vectors and embedded is not None:
                changed |= embedded
        return frozenset(changed)
