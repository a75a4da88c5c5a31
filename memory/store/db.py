"""The SQLite store and its single writer: the transaction API every store module writes through.

SQLite is the only truth. Every connection runs in WAL mode with a busy timeout, foreign keys and
secure_delete, so a forgotten memory's bytes are overwritten (memory.store.sqlite_connect opens
them); `Store.open` migrates the file (memory.store.migrate). Reads use their own connection;
every write goes through `Store.transact`, one transaction at a time, opened with BEGIN
IMMEDIATE so a read-then-write transaction takes the write lock first instead of failing with
SQLITE_BUSY on upgrade. A started write is never cancelled half way: it runs shielded in its
own task.

Several processes may open one file: SQLite lets one of them write at a time. Each person has a
generation in the database, raised in the same transaction as any change to their memories, so
a process's caches see another's commits (`sync_generation`; memory.store.generations).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from memory.errors import StoreError
from memory.recall.cache import CacheBudget
from memory.store import fts5_words
from memory.store.generations import GENERATIONS_SCHEMA, Generations
from memory.store.migrate import migrate
from memory.store.migrations import LATEST
from memory.store.sqlite_connect import connect, reason

log = logging.getLogger(__name__)

T = TypeVar("T")

# Long enough to outlast another process's checkpoint or a slow disk, short enough that a stuck
# writer surfaces as an error within a turn's patience.
BUSY_TIMEOUT_MS = 5_000

Params = Sequence[Any] | dict[str, Any]

# How long the checkpoint after an erasure waits for a reader on an older snapshot: a query
# lasts milliseconds; one held longer (another process, a backup) would keep the person who
# asked waiting, so the erasure is left pending and the scheduler completes it later.
CHECKPOINT_PATIENCE_MS = 500

# A target that starts with one of these is a PostgreSQL URL, anything else an SQLite file.
PG_SCHEMES = ("postgresql://", "postgres://")

# The schema that records the keyword index's word rules (memory.store.fts5_words).
KEYWORD_RULES_SCHEMA = 22


class Tx:
    """One write transaction: the only place SQL that changes data runs."""

    # Which SQL this transaction speaks: "sqlite" here, "postgres" in memory.store.pg.
    dialect = "sqlite"

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn
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
    def touched_users(self) -> set[int]:
        return set(self.changed)

    def touch(
        self, user_id: int, memory_ids: Iterable[int] | None = None, *, vectors_only: bool = False
    ) -> None:
        """Note that this user's memories (these ids; None: any) or only their vectors change:
        their caches go stale on commit."""
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

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return the last inserted rowid."""
        cursor = await self._conn.execute(sql, params)
        rowid = cursor.lastrowid or 0
        await cursor.close()
        return rowid

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        await self._conn.executemany(sql, rows)

    async def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        cursor = await self._conn.execute(sql, params)
        rows = await cursor.fetchall()
        await cursor.close()
        return list(rows)

    async def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def serialize(self, job: str, *, shared: bool = False) -> None:
        """Hold `job`'s lock until this transaction ends, across processes (`shared`: with the
        other shared holders, never with an exclusive one). SQLite's write transactions are
        one at a time already (BEGIN IMMEDIATE); PostgreSQL's are not."""

    def for_update(self) -> str:
        """The clause that locks the rows a read inside this transaction returns until it
        ends: none on SQLite (one writer at a time), FOR UPDATE on PostgreSQL."""
        return ""

    async def changes(self) -> int:
        row = await self.fetchone("SELECT changes()")
        return int(row[0]) if row else 0


class Store:
    """The database: one reader connection, one writer connection behind a lock."""

    dialect = "sqlite"

    def __init__(
        self,
        path: str,
        reader: aiosqlite.Connection,
        writer: aiosqlite.Connection,
        *,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ):
        self._begin(path, busy_timeout_ms)
        self._reader = reader
        self._writer = writer

    def _begin(self, path: str, busy_timeout_ms: int) -> None:
        """The state every backend's store keeps, whatever its connections: one place, so a
        backend cannot miss a field added here (memory.store.pg calls it too)."""
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._write_lock = asyncio.Lock()
        self._orphans: set[asyncio.Task[Any]] = set()
        self._generations = Generations()

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        migrate_to: int = LATEST,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        max_pages: int | None = None,
        password: str | None = None,
    ) -> Store:
        """Open (creating if needed) the database at `path` and migrate it to `migrate_to`.

        `max_pages` caps the file's size (SQLITE_FULL beyond it). A `postgresql://` URL opens
        PostgreSQL instead (memory.store.pg), with `password` if the URL has none.
        """
        path = str(path)
        if path.startswith(PG_SCHEMES):
            from memory.store.pg import PgStore

            return await PgStore.open(
                path, migrate_to=migrate_to, busy_timeout_ms=busy_timeout_ms, password=password
            )
        try:
            if path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            writer = await connect(path, busy_timeout_ms)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the database at {path}: {reason(exc)}") from exc
        try:
            reader = await connect(path, busy_timeout_ms)
        except BaseException as exc:
            await writer.close()
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"cannot open the database at {path}: {exc}") from exc
            raise
        store = cls(path, reader, writer, busy_timeout_ms=busy_timeout_ms)
        try:
            await store._migrate(migrate_to)
            version = await store.schema_version()
            store._generations.shared = version >= GENERATIONS_SCHEMA
            if version >= KEYWORD_RULES_SCHEMA:
                await store.transact(_keep_keyword_rules)
            if max_pages is not None:
                await writer.execute(f"PRAGMA max_page_count = {int(max_pages)}")
        except BaseException as exc:
            await store.close()
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"cannot open the database at {path}: {exc}") from exc
            raise
        return store

    async def close(self) -> None:
        """Finish pending writes and close both connections (both, even if one fails)."""
        try:
            if self._orphans:
                await asyncio.gather(*self._orphans, return_exceptions=True)
            await self._reader.close()
        finally:
            await self._writer.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def schema_version(self) -> int:
        row = await self.fetchone("SELECT max(version) FROM schema_migrations")
        return int(row[0] or 0) if row else 0

    async def _migrate(self, target: int) -> None:
        await self._writer.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        await migrate(self, target)

    async def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """Run a read-only query on the reader connection."""
        try:
            cursor = await self._reader.execute(sql, params)
            rows = await cursor.fetchall()
            await cursor.close()
        except sqlite3.Error as exc:
            raise StoreError(str(exc)) from exc
        return list(rows)

    async def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def transact(self, fn: Callable[[Tx], Awaitable[T]]) -> T:
        """Run `fn` in one write transaction, alone; commit, or roll back on any error.

        The transaction runs in its own task: cancelling the caller does not cut it half way.
        """
        task = asyncio.ensure_future(self._run(fn))
        self._orphans.add(task)
        task.add_done_callback(self._forget_task)
        return await asyncio.shield(task)

    def _forget_task(self, task: asyncio.Task[Any]) -> None:
        self._orphans.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # Retrieved here so a caller that was cancelled still leaves a trace.
            log.debug("write transaction failed: %s", type(task.exception()).__name__)

    async def _run(self, fn: Callable[[Tx], Awaitable[T]]) -> T:
        async with self._write_lock:
            try:
                await self._writer.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot start a write: {exc}") from exc
            tx = Tx(self._writer)
            try:
                result = await fn(tx)
                bumped = await self._generations.bump(tx)
                await self._writer.execute("COMMIT")
            except BaseException as exc:
                await self._rollback()
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(str(exc)) from exc
                raise
            self._generations.committed(tx, bumped)
            return result

    async def sync_generation(self, user_id: int) -> int:
        """Read this user's generation from the database (what other processes committed
        counts too) and return it: one indexed read. A cache checked against `generation`
        right after it serves nothing older than the last commit before this call."""
        try:
            return await self._generations.read(self, user_id)
        except sqlite3.Error as exc:
            raise StoreError(str(exc)) from exc

    async def generation_in(self, tx: Tx, user_id: int) -> int:
        """This user's generation inside a write transaction. If the transaction writes their
        memories, its commit fails with GenerationMoved when another process changed their
        memory rows after this read (never on SQLite: one writer at a time)."""
        return await self._generations.read_in(tx, user_id)

    def generation(self, user_id: int) -> int:
        """The highest generation of this user this process knows: raised by every commit
        that changes their memories, vectors or privacy choice (its own at once, another
        process's at the next `sync_generation`); UNKNOWN (below every generation) for a person
        never read here or forgotten since (memory.store.generations)."""
        return self._generations.current(user_id)

    def bound_generations(self, budget: CacheBudget) -> None:
        """Keep what this process knows of each person's generation within `budget` (the
        engine's caches'), least recently used out first: the database has it again."""
        self._generations.bound(budget)

    def changed_since(self, user_id: int, generation: int) -> frozenset[int] | None:
        """The ids of this user's memories changed after `generation` (empty: only vectors
        changed), or None when that is not known here (too old, a change without ids, or
        another process's)."""
        return self._generations.since(user_id, generation, vectors=False)

    def embedded_since(self, user_id: int, generation: int) -> frozenset[int] | None:
        """The ids of this user's memories whose text or vector changed after `generation`, or
        None when that is not known here."""
        return self._generations.since(user_id, generation, vectors=True)

    async def _rollback(self) -> None:
        try:
            await self._writer.execute("ROLLBACK")
        except sqlite3.Error:
            # SQLite may already have rolled back (SQLITE_FULL, some IO errors).
            log.debug("rollback after a failed write found no transaction")

    @contextlib.asynccontextmanager
    async def exclusive(self, job: str) -> AsyncIterator[bool]:
        """Run `job` (e.g. "indexer") in one process at a time: yield whether this process may.
        One process owns an SQLite file, so always; PostgreSQL takes an advisory lock."""
        yield True

    async def check_writable(self) -> None:
        """Take and release the write lock once: raise StoreError if the database refuses."""
        await self.transact(lambda tx: tx.execute("SELECT 1"))

    async def checkpoint(self, *, patience_ms: int = CHECKPOINT_PATIENCE_MS) -> bool:
        """Fold the WAL into the main file and truncate it (after an erasure); False when a
        reader on an older snapshot kept some of it for longer than `patience_ms`."""
        async with self._write_lock:
            try:
                await self._writer.execute(f"PRAGMA busy_timeout = {int(patience_ms)}")
                cursor = await self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                row = await cursor.fetchone()
                await cursor.close()
            except sqlite3.Error as exc:
                log.warning("checkpoint failed: %s", exc)
                return False
            finally:
                await self._writer.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
        return row is not None and row[0] == 0


async def _keep_keyword_rules(tx: Tx) -> None:
    """Rebuild the keyword index if it was built with other word rules than this process's
    (a database before schema 22, or a SQLite whose tokenizer ends words elsewhere): its
    entries are derived from the memories, so nothing is lost, and a word split otherwise would
    no longer match the words kept before."""
    signature = fts5_words.signature()
    row = await tx.fetchone("SELECT signature FROM keyword_rules")
    if row is not None and row[0] == signature:
        return
    started = time.monotonic()
    await tx.execute("INSERT INTO memories_fts (memories_fts) VALUES ('delete-all')")
    await tx.execute(
        "INSERT INTO memories_fts (rowid, words)"
        " SELECT id, echo_owned_words(user_id, text) FROM memories"
    )
    count = await tx.fetchone("SELECT count(*) FROM memories")
    await tx.execute("DELETE FROM keyword_rules")
    await tx.execute(
        "INSERT INTO keyword_rules (signature, built_at) VALUES (?, ?)", (signature, time.time())
    )
    memories = int(count[0]) if count else 0
    log.log(
        logging.INFO if memories else logging.DEBUG,
        "keyword index built for these word rules: %d memories in %.1f s",
        memories,
        time.monotonic() - started,
    )
