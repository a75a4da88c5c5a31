"""The SQLite store (the default backend): one reader connection, one writer connection behind
the write lock; the `Store` and `Tx` of memory.store.db.

Every connection runs in WAL mode with a busy timeout, foreign keys and secure_delete, so a
forgotten memory's bytes are overwritten (memory.store.sqlite.connect opens them);
`SqliteStore.open` migrates the file (memory.store.sqlite.migrate). Reads use their own connection;
every write goes through `transact`, one transaction at a time (memory.store.writes), opened
with BEGIN IMMEDIATE so a read-then-write transaction takes the write lock first instead of
failing with SQLITE_BUSY on upgrade.

Several processes may open one file: SQLite lets one of them write at a time. Each person has a
generation in the database, raised in the same transaction as any change to their memories, so
a process's caches see another's commits (`sync_generation`; memory.store.generations).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import TypeVar

import aiosqlite

from memory.cache import CacheBudget
from memory.errors import StoreError
from memory.store.db import BUSY_TIMEOUT_MS, CHECKPOINT_PATIENCE_MS, Params, Row, Store, Touched, Tx
from memory.store.generations import GENERATIONS_SCHEMA
from memory.store.migrations import LATEST
from memory.store.sqlite import fts5_words
from memory.store.sqlite.connect import connect, reason
from memory.store.sqlite.migrate import migrate
from memory.store.writes import Writes

log = logging.getLogger(__name__)

T = TypeVar("T")

# The schema that records the keyword index's word rules (memory.store.sqlite.fts5_words).
KEYWORD_RULES_SCHEMA = 22


class SqliteTx:
    """One write transaction on the store's writer connection."""

    dialect = "sqlite"

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn
        self.touched = Touched()

    def touch(
        self, user_id: int, memory_ids: Iterable[int] | None = None, *, vectors_only: bool = False
    ) -> None:
        self.touched.touch(user_id, memory_ids, vectors_only=vectors_only)

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return the last inserted rowid. One trip to the connection's
        thread (the statement and the rowid's read together): each trip costs a thread switch
        each way, and a turn runs dozens of statements."""
        row = await self._conn.execute_insert(sql, params)
        return int(row[0] or 0) if row is not None else 0

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        await self._conn.executemany(sql, rows)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a query and read its rows in one trip to the connection's thread."""
        return list(await self._conn.execute_fetchall(sql, params))

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def serialize(self, job: str, *, shared: bool = False) -> None:
        """Nothing to hold: SQLite's write transactions are one at a time already (BEGIN
        IMMEDIATE), across processes too."""

    def for_update(self) -> str:
        """None: one writer at a time."""
        return ""

    async def changes(self) -> int:
        row = await self.fetchone("SELECT changes()")
        return int(row[0]) if row else 0


class SqliteStore:
    """An SQLite file: one reader connection, one writer connection behind the write lock."""

    dialect = "sqlite"

    def __init__(
        self,
        path: str,
        reader: aiosqlite.Connection,
        writer: aiosqlite.Connection,
        *,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ):
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._reader = reader
        self._writer = writer
        self._writes = Writes()

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        migrate_to: int = LATEST,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        max_pages: int | None = None,
    ) -> SqliteStore:
        """Open (creating if needed) the database file at `path` and migrate it to
        `migrate_to`. `max_pages` caps the file's size (SQLITE_FULL beyond it)."""
        path = str(path)
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
            store._writes.generations.shared = version >= GENERATIONS_SCHEMA
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
            await self._writes.finish()
            await self._reader.close()
        finally:
            await self._writer.close()

    async def __aenter__(self) -> SqliteStore:
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

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a read-only query on the reader connection."""
        try:
            return list(await self._reader.execute_fetchall(sql, params))
        except sqlite3.Error as exc:
            raise StoreError(str(exc)) from exc

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def transact(self, fn: Callable[[SqliteTx], Awaitable[T]]) -> T:
        """Run `fn` in one write transaction, alone; commit, or roll back on any error."""
        return await self._writes.transact(self._transaction, fn)

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[SqliteTx]:
        """BEGIN IMMEDIATE; COMMIT when the block ends, ROLLBACK on any error."""
        try:
            await self._writer.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot start a write: {exc}") from exc
        try:
            yield SqliteTx(self._writer)
            await self._writer.execute("COMMIT")
        except BaseException as exc:
            await self._rollback()
            if isinstance(exc, sqlite3.Error):
                raise StoreError(str(exc)) from exc
            raise

    async def _rollback(self) -> None:
        try:
            await self._writer.execute("ROLLBACK")
        except sqlite3.Error:
            # SQLite may already have rolled back (SQLITE_FULL, some IO errors).
            log.debug("rollback after a failed write found no transaction")

    async def sync_generation(self, user_id: int) -> int:
        try:
            return await self._writes.generations.read(self, user_id)
        except sqlite3.Error as exc:
            raise StoreError(str(exc)) from exc

    async def generation_in(self, tx: Tx, user_id: int) -> int:
        return await self._writes.generations.read_in(tx, user_id)

    def generation(self, user_id: int) -> int:
        return self._writes.generations.current(user_id)

    def bound_generations(self, budget: CacheBudget) -> None:
        self._writes.generations.bound(budget)

    def changed_since(self, user_id: int, generation: int) -> frozenset[int] | None:
        return self._writes.generations.since(user_id, generation, vectors=False)

    def embedded_since(self, user_id: int, generation: int) -> frozenset[int] | None:
        return self._writes.generations.since(user_id, generation, vectors=True)

    @contextlib.asynccontextmanager
    async def exclusive(self, job: str) -> AsyncIterator[bool]:
        """Always this process: one process writes an SQLite file at a time, and a job's work
        is its writes."""
        yield True

    async def check_writable(self) -> None:
        await self.transact(lambda tx: tx.execute("SELECT 1"))

    async def checkpoint(self, *, patience_ms: int = CHECKPOINT_PATIENCE_MS) -> bool:
        """Fold the WAL into the main file and truncate it (after an erasure); False when a
        reader on an older snapshot kept some of it for longer than `patience_ms`."""
        async with self._writes.lock:
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


async def _keep_keyword_rules(tx: SqliteTx) -> None:
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


# This backend checked against the seam's Protocols (mypy --strict): a method missing here or
# typed apart from memory.store.db fails the type check, not a test on this backend.
_SEAM: tuple[type[Store], type[Tx]] = (SqliteStore, SqliteTx)
