"""The store's seam: what every backend offers, as two typed Protocols — `Store`, the database
(reads, and writes handed to `transact` one at a time), and `Tx`, one write transaction.

Two backends implement them side by side, neither inheriting the other: SQLite
(memory.store.sqlite, the default) and PostgreSQL (memory.store.postgres); memory.store.opening
opens one from a file's path or a URL. What both keep whatever their connections has one home each
holds, so a field added there reaches both: the store's in memory.store.writes (the write lock,
the tasks writes run in, the generations), a transaction's in `Touched` below. mypy checks each
backend against these Protocols (`_SEAM` at the end of each backend's module).

Rows are `Row` on both backends: read by position and by column name (sqlite3.Row on SQLite,
asyncpg's Record on PostgreSQL). The store modules write their SQL once, for SQLite;
PostgreSQL translates it (memory.store.postgres.sql), and `dialect` picks a variant where the
meaning differs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, Self, TypeVar, runtime_checkable

from memory.cache import CacheBudget

T = TypeVar("T")

Params = Sequence[Any] | dict[str, Any]

# Long enough to outlast another process's checkpoint or a slow disk, short enough that a stuck
# writer surfaces as an error within a turn's patience.
BUSY_TIMEOUT_MS = 5_000

# How long the checkpoint after an erasure waits for a reader on an older snapshot: a query
# lasts milliseconds; one held longer (another process, a backup) would keep the person who
# asked waiting, so the erasure is left pending and the scheduler completes it later.
CHECKPOINT_PATIENCE_MS = 500


class Row(Protocol):
    """One row a query returned: read by position (`row[0]`) or by column name (`row["text"]`),
    its length and its values in order. sqlite3.Row on SQLite, asyncpg's Record on PostgreSQL."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Any]: ...


class Touched:
    """What one write transaction changed, per person: what their caches need to know at the
    commit (memory.store.generations raises their generations from it)."""

    def __init__(self) -> None:
        # Per touched user: the memory ids changed (None: unknown, any of them), empty when only
        # vectors changed.
        self.changed: dict[int, set[int] | None] = {}
        # Per user: the memory ids whose vector alone changed (None: unknown), for the caches
        # of vectors, which a memory change makes stale too.
        self.embedded: dict[int, set[int] | None] = {}
        # Per user: the rows generation a read inside this transaction relied on (the commit
        # verifies it; memory.store.generations).
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
class Store(Protocol):
    """The database: reads, and write transactions run one at a time in this process."""

    @property
    def path(self) -> str:
        """Where the database is: a file's path, or a URL without its password."""
        ...

    @property
    def dialect(self) -> str: ...

    async def close(self) -> None:
        """Finish pending writes and close every connection."""
        ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def schema_version(self) -> int: ...

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a read-only query outside any write transaction."""
        ...

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None: ...

    async def transact(self, fn: Callable[[Tx], Awaitable[T]]) -> T:
        """Run `fn` in one write transaction, alone; commit, or roll back on any error.

        The transaction runs in its own task: cancelling the caller does not cut it half way.
        """
        ...

    async def sync_generation(self, user_id: int) -> int:
        """Read this user's generation from the database (what other processes committed
        counts too) and return it: one indexed read. A cache checked against `generation`
        right after it serves nothing older than the last commit before this call."""
        ...

    async def generation_in(self, tx: Tx, user_id: int) -> int:
        """This user's generation inside a write transaction. If the transaction writes their
        memories, its commit fails with GenerationMoved when another process changed their
        memory rows after this read (never on SQLite: one writer at a time)."""
        ...

    def generation(self, user_id: int) -> int:
        """The highest generation of this user this process knows: raised by every commit
        that changes their memories, vectors or privacy choice (its own at once, another
        process's at the next `sync_generation`); UNKNOWN (below every generation) for a person
        never read here or forgotten since (memory.store.generations)."""
        ...

    def bound_generations(self, budget: CacheBudget) -> None:
        """Keep what this process knows of each person's generation within `budget` (the
        engine's caches'), least recently used out first: the database has it again."""
        ...

    def changed_since(self, user_id: int, generation: int) -> frozenset[int] | None:
        """The ids of this user's memories changed after `generation` (empty: only vectors
        changed), or None when that is not known here (too old, a change without ids, or
        another process's)."""
        ...

    def embedded_since(self, user_id: int, generation: int) -> frozenset[int] | None:
        """The ids of this user's memories whose text or vector changed after `generation`, or
        None when that is not known here."""
        ...

    def exclusive(self, job: str) -> AbstractAsyncContextManager[bool]:
        """Run `job` (e.g. "indexer") in one process at a time: yield whether this process may."""
        ...

    async def check_writable(self) -> None:
        """Take and release the write lock once: raise StoreError if the database refuses."""
        ...

    async def checkpoint(self, *, patience_ms: int = CHECKPOINT_PATIENCE_MS) -> bool:
        """Make what an erasure removed unreadable from the database's files; False when a
        reader on an older snapshot kept some of it for longer than `patience_ms` (the
        scheduler completes the erasure later)."""
        ...
