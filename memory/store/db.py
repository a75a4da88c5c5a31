"""The store's seam, like an HTTP client over its transport: one concrete `Store` that every
caller holds, over a small `Backend` that holds only what differs per database.

`Store` owns what is the same whatever the database: the lock that runs this process's writes
one at a time, the tasks they run in (a cancelled caller does not cut a write half way), the
generations those writes raise (memory.store.generations), `fetchone` over `fetchall`, the
schema's version, and the generation reads. A `Backend` opens a write transaction (begin,
commit, rollback as one block that yields its `Tx`), reads rows, runs a job in one process at a
time, migrates, checkpoints after an erasure and closes: SQLite (memory.store.sqlite.store, the
default) and PostgreSQL (memory.store.postgres.store) each implement it in one class, neither
inheriting the other; memory.store.opening opens one from a file's path or a URL. `Tx`, one
write transaction, stays a Protocol each backend implements: nearly all of it is the
database's.

Rows are `Row` on both backends: read by position and by column name (sqlite3.Row on SQLite,
asyncpg's Record on PostgreSQL). The store modules write their SQL once, for SQLite;
PostgreSQL translates it (memory.store.postgres.sql), and `dialect` picks a variant where the
meaning differs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypeVar, runtime_checkable

from memory.cache import CacheBudget
from memory.store.generations import GENERATIONS_SCHEMA, Generations, Touched

log = logging.getLogger(__name__)

T = TypeVar("T")

Params = Sequence[Any] | dict[str, Any]

# Long enough to outlast another process's checkpoint or a slow disk, short enough that a stuck
# writer surfaces as an error within a turn's patience.
BUSY_TIMEOUT_MS = 5_000

# How long the checkpoint after an erasure waits for a reader on an older snapshot: a query
# lasts milliseconds; one held longer (another process, a backup) would keep the person who
# asked waiting, so the erasure is left pending and the scheduler completes it later.
CHECKPOINT_PATIENCE_MS = 500


# A file up to this size is rewritten for every erasure (a few tens of milliseconds); a larger
# one not again within REWRITE_SPACING times the last rewrite's length (Store._rewrite_now).
REWRITE_FELT_MB = 32.0
REWRITE_SPACING = 30.0
# After a rewrite failed, the next try waits this long, doubled after each failure in a row,
# up to REWRITE_RETRY_MAX: each try writes a copy of the file, which a full disk refuses.
REWRITE_RETRY = 60.0
REWRITE_RETRY_MAX = 3600.0


@dataclass(frozen=True, slots=True)
class Rewrite:
    """When an erasure rewrites an SQLite file whole (VACUUM). secure_delete zeroes a deleted
    row where it lies, but SQLite's page balancing copies rows between pages while they live
    and leaves the old copy in the unused space of the page it left: deleted later, the row is
    zeroed and the copy stays (9 of 1,500 rows deleted from a bare table whose rows had been
    updated; tests/memory/store/test_rewrite.py finds forgotten memories' words so). Only a
    rewrite of the file clears such copies.

    A file of at most `inline_mb` megabytes is rewritten as the erasure settles (this process's
    writes wait meanwhile, another process's up to the 5 s busy timeout: 220 MB took 1.9 s on
    2 cores, 277 MB 5.4 s on a loaded machine, so the default stays well under those); a larger
    one by the erasures job, at most once every `every_hours` (0: never), its
    erasures pending until then. A file over REWRITE_FELT_MB is not rewritten again within
    REWRITE_SPACING times the last rewrite's length (Discord edits are erasures, and a busy server's
    must not hold the writes most of the time): the erasures in between are pending until the
    erasures job's next run past that gap (30 s apart). PostgreSQL is vacuumed instead (its own
    backend)."""

    inline_mb: float = 64.0
    every_hours: float = 6.0


class Row(Protocol):
    """One row a query returned: read by position (`row[0]`) or by column name (`row["text"]`),
    its length and its values in order. sqlite3.Row on SQLite, asyncpg's Record on PostgreSQL."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Any]: ...


@runtime_checkable
class Tx(Protocol):
    """One write transaction: the only place SQL that changes data runs."""

    @property
    def dialect(self) -> str:
        """Which SQL this transaction speaks: "sqlite" or "postgres"."""
        ...

    @property
    def touched(self) -> Touched: ...

    def touch(
        self, user_id: int, memory_ids: Iterable[int] | None = None, *, vectors_only: bool = False
    ) -> None:
        """Note that this user's memories (these ids; None: any) or only their vectors change:
        their caches go stale on commit."""
        ...

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return the id of the row an INSERT added (0: none)."""
        ...

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None: ...

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a query; its rows read by position and by name."""
        ...

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None: ...

    async def serialize(self, job: str, *, shared: bool = False) -> None:
        """Hold `job`'s lock until this transaction ends, across processes (`shared`: with the
        other shared holders, never with an exclusive one)."""
        ...

    def for_update(self) -> str:
        """The clause that locks the rows a read inside this transaction returns until it
        ends ("" where writers go one at a time)."""
        ...

    async def changes(self) -> int:
        """How many rows the last statement changed."""
        ...


@runtime_checkable
class Backend(Protocol):
    """What differs per database, under the one `Store`: its connections and their SQL."""

    @property
    def dialect(self) -> str:
        """Which SQL this database speaks: "sqlite" or "postgres"."""
        ...

    @property
    def path(self) -> str:
        """Where the database is: a file's path, or a URL without its password."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Tx]:
        """One write transaction: begun on entry, committed when the block ends, rolled back on
        any error (a database's error raised as StoreError). The store runs one at a time."""
        ...

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a read-only query outside any write transaction (an error: StoreError)."""
        ...

    def exclusive(self, job: str) -> AbstractAsyncContextManager[bool]:
        """Run `job` (e.g. "indexer") in one process at a time: yield whether this process may."""
        ...

    async def migrate(self, store: Store, target: int) -> int:
        """Bring the database to schema `target` (its writes through `store.transact`) and
        ready it for this process; return the schema it has now."""
        ...

    async def checkpoint(self, writes: asyncio.Lock, *, patience_ms: int) -> bool:
        """Make what an erasure removed unreadable from the database's files (Store.checkpoint);
        `writes` is this process's write lock, for a backend whose checkpoint runs on the
        connection that writes (SQLite)."""
        ...

    async def vacuum(self, writes: asyncio.Lock) -> str | None:
        """Rewrite the database file whole (SQLite's VACUUM, under `writes`): None when it was,
        else why not in one line (no row's text)."""
        ...

    def size_bytes(self) -> int | None:
        """The database file's size (None: not one file, or not known)."""
        ...

    async def close(self) -> None:
        """Close every connection (all of them, even if one fails)."""
        ...


class Store:
    """The database: reads, and write transactions run one at a time in this process, over the
    backend that speaks to it."""

    def __init__(self, backend: Backend) -> None:
        # Public for the tests and benchmarks that look at the connections; writes go through
        # `transact`, never through the backend's transactions directly.
        self.backend = backend
        # This process's knowledge of each person's generation (memory.store.generations).
        self.generations = Generations()
        self._lock = asyncio.Lock()
        # The writes running, kept until they end: a cancelled caller's too (see transact).
        self._running: set[asyncio.Task[Any]] = set()
        # When an erasure rewrites the file (Rewrite), and the clock its interval is read on.
        self.rewrite = Rewrite()
        self.monotonic: Callable[[], float] = time.monotonic
        self._rewritten_at: float | None = None
        self._rewrite_took = 0.0
        # Rewrites failed in a row (a full disk, a lock held), the last one's reason (warned
        # once), and when to try again.
        self._failed_rewrites = 0
        self._rewrite_failing: str | None = None
        self._retry_rewrite_at = 0.0
        # Checkpoints run one at a time; one that begins after an erasure asked covers it: the
        # asks are numbered, and the last run's answer holds for every ask before it began.
        self._checkpoints = asyncio.Lock()
        self._asked = 1  # erasures an earlier run left pending may need a rewrite: one is due
        self._covered = 0
        self._covered_ok = False
        self._rewritten_upto = 0
        # The erasures this process asked for since the last run began, and the pending ones a
        # rewrite began after: an erasure nobody here asked for (another process's, or one
        # whose caller was cancelled) is rewritten before the job calls it complete.
        self._asking: set[int] = set()
        self._rewritten_for: set[int] = set()
        self.rewrites = 0  # files rewritten by this process (the tests count them)

    @classmethod
    async def over(cls, backend: Backend, *, migrate_to: int) -> Store:
        """The store over `backend`, its database migrated to `migrate_to`; closed again if
        that fails."""
        store = cls(backend)
        try:
            version = await backend.migrate(store, migrate_to)
            store.generations.shared = version >= GENERATIONS_SCHEMA
        except BaseException:
            await store.close()
            raise
        return store

    @property
    def path(self) -> str:
        """Where the database is: a file's path, or a URL without its password."""
        return self.backend.path

    @property
    def dialect(self) -> str:
        return self.backend.dialect

    async def close(self) -> None:
        """Finish pending writes and close every connection."""
        try:
            if self._running:
                await asyncio.gather(*self._running, return_exceptions=True)
        finally:
            await self.backend.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def schema_version(self) -> int:
        row = await self.fetchone("SELECT max(version) FROM schema_migrations")
        return int(row[0] or 0) if row else 0

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a read-only query outside any write transaction."""
        return await self.backend.fetchall(sql, params)

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def transact(self, fn: Callable[[Tx], Awaitable[T]]) -> T:
        """Run `fn` in one write transaction, alone in this process; commit, or roll back on any
        error. The generations of the people it touched are raised inside it, and learned once
        it committed.

        The transaction runs in its own task: cancelling the caller does not cut it half way.
        """
        task = asyncio.ensure_future(self._run(fn))
        self._running.add(task)
        task.add_done_callback(self._forget)
        return await asyncio.shield(task)

    async def _run(self, fn: Callable[[Tx], Awaitable[T]]) -> T:
        async with self._lock:
            async with self.backend.transaction() as tx:
                result = await fn(tx)
                bumped = await self.generations.bump(tx)
            self.generations.committed(tx.touched, bumped)
            return result

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # Retrieved here so a caller that was cancelled still leaves a trace.
            log.debug("write transaction failed: %s", type(task.exception()).__name__)

    async def sync_generation(self, user_id: int) -> int:
        """Read this user's generation from the database (what other processes committed
        counts too) and return it: one indexed read. A cache checked against `generation`
        right after it serves nothing older than the last commit before this call."""
        return await self.generations.read(self, user_id)

    async def generation_in(self, tx: Tx, user_id: int) -> int:
        """This user's generation inside a write transaction. If the transaction writes their
        memories, its commit fails with GenerationMoved when another process changed their
        memory rows after this read (never on SQLite: one writer at a time)."""
        return await self.generations.read_in(tx, user_id)

    def generation(self, user_id: int) -> int:
        """The highest generation of this user this process knows: raised by every commit
        that changes their memories, vectors or privacy choice (its own at once, another
        process's at the next `sync_generation`); UNKNOWN (below every generation) for a person
        never read here or forgotten since (memory.store.generations)."""
        return self.generations.current(user_id)

    def bound_generations(self, budget: CacheBudget) -> None:
        """Keep what this process knows of each person's generation within `budget` (the
        engine's caches'), least recently used out first: the database has it again."""
        self.generations.bound(budget)

    def changed_since(self, user_id: int, generation: int) -> frozenset[int] | None:
        """The ids of this user's memories changed after `generation` (empty: only vectors
        changed), or None when that is not known here (too old, a change without ids, or
        another process's)."""
        return self.generations.since(user_id, generation, vectors=False)

    def embedded_since(self, user_id: int, generation: int) -> frozenset[int] | None:
        """The ids of this user's memories whose text or vector changed after `generation`, or
        None when that is not known here."""
        return self.generations.since(user_id, generation, vectors=True)

    def exclusive(self, job: str) -> AbstractAsyncContextManager[bool]:
        """Run `job` (e.g. "indexer") in one process at a time: yield whether this process may."""
        return self.backend.exclusive(job)

    async def check_writable(self) -> None:
        """Take and release the write lock once: raise StoreError if the database refuses."""
        await self.transact(lambda tx: tx.execute("SELECT 1"))

    async def checkpoint(
        self,
        erasures: Iterable[int] = (),
        *,
        patience_ms: int = CHECKPOINT_PATIENCE_MS,
        scheduled: bool = False,
    ) -> bool:
        """Make what the committed `erasures` removed unreadable from the database's files;
        False when a reader on an older snapshot kept some of it for longer than `patience_ms`,
        or when an SQLite file too large to rewrite now waits for its rewrite (Rewrite): the
        scheduler (`scheduled`, the erasures job, with every erasure pending) completes the
        erasures later.

        Erasures at once share a checkpoint: one asked while another runs waits for the next,
        which covers every erasure committed before it began (100 edits followed at once cost
        two rewrites of the file, not 100). A rewrite is not made again for erasures one
        already covered: a reader holding an old snapshot delays the truncation only."""
        named = set(erasures)
        if not scheduled:
            self._asked += 1
            self._asking |= named
        ticket = self._asked
        async with self._checkpoints:
            if not scheduled and self._covered >= ticket:
                return self._covered_ok
            upto, covering = self._asked, self._asking | named
            self._asking = set()
            if scheduled:  # the others are complete (or asked since: one rewrite too many)
                self._rewritten_for &= covering
            rewritten = self.dialect != "sqlite" or (
                self._rewritten_upto >= upto and covering <= self._rewritten_for
            )
            if not rewritten and self._rewrite_now(scheduled=scheduled):
                began = self.monotonic()
                failed = await self.backend.vacuum(self._lock)
                rewritten = failed is None
                if failed is not None:
                    self._rewrite_failed(failed)
                else:
                    self.rewrites += 1
                    self._rewritten_at = self.monotonic()
                    self._rewrite_took = self._rewritten_at - began
                    self._rewritten_upto = upto
                    self._rewritten_for |= covering
                    if self._failed_rewrites:
                        log.info(
                            "rewrite after an erasure works again (%d tries failed)",
                            self._failed_rewrites,
                        )
                    self._failed_rewrites, self._rewrite_failing = 0, None
            ok = await self.backend.checkpoint(self._lock, patience_ms=patience_ms) and rewritten
            if ok:  # complete now: only the pending ones are remembered
                self._rewritten_for -= covering
            self._covered, self._covered_ok = upto, ok
            return ok

    def _rewrite_failed(self, why: str) -> None:
        """Count a failed rewrite, warn once per reason (the erasures job retries, a full disk
        for hours), and wait longer before each next try: each writes a copy of the file."""
        self._failed_rewrites += 1
        if why == self._rewrite_failing:
            log.debug(
                "rewrite after an erasure failed again (%d times): %s", self._failed_rewrites, why
            )
        else:
            self._rewrite_failing = why
            log.warning(
                "rewrite after an erasure failed: %s (the erasures job retries; said again only"
                " if the reason changes)",
                why,
            )
        wait = REWRITE_RETRY * 2 ** min(self._failed_rewrites - 1, 6)
        self._retry_rewrite_at = self.monotonic() + min(wait, REWRITE_RETRY_MAX)

    def _rewrite_now(self, *, scheduled: bool) -> bool:
        """Whether this checkpoint rewrites the SQLite file (Rewrite)."""
        if self._failed_rewrites and self.monotonic() < self._retry_rewrite_at:
            return False
        size = self.backend.size_bytes()
        last = self._rewritten_at
        if size is None or size <= self.rewrite.inline_mb * 1024 * 1024:
            # A file whose rewrite is felt (over REWRITE_FELT_MB) is not rewritten again within
            # REWRITE_SPACING times the last rewrite's length: the writes it holds up wait a
            # thirtieth of the time at most, and the erasures meanwhile are pending until the
            # job's next run past that gap.
            if last is None or size is None or size <= REWRITE_FELT_MB * 1024 * 1024:
                return True
            return self.monotonic() - last >= REWRITE_SPACING * self._rewrite_took
        if not scheduled or self.rewrite.every_hours <= 0:
            return False
        return last is None or self.monotonic() - last >= self.rewrite.every_hours * 3600
