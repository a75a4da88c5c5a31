"""The SQLite backend (the default): one reader connection, one writer connection behind the
store's write lock; the `Backend` and `Tx` of memory.store.db, under its one `Store`.

Every connection runs in WAL mode with a busy timeout, foreign keys and secure_delete, so a
forgotten memory's bytes are overwritten (memory.store.sqlite.connect opens them);
`open_sqlite` connects and migrates the file (memory.store.sqlite.migrate). Reads use their own
connection; every write goes through `Store.transact`, one transaction at a time, opened with
BEGIN IMMEDIATE so a read-then-write transaction takes the write lock first instead of failing
with SQLITE_BUSY on upgrade.

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
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import aiosqlite

from memory.errors import StoreError
from memory.store.db import BUSY_TIMEOUT_MS, Backend, Params, Row, Store, Tx
from memory.store.generations import Touched
from memory.store.migrations import LATEST
from memory.store.sqlite import fts5_words
from memory.store.sqlite.connect import connect, reason
from memory.store.sqlite.migrate import migrate as apply_migrations

log = logging.getLogger(__name__)

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


class SqliteBackend:
    """An SQLite file: one reader connection, one writer connection (the store's write lock
    runs its transactions one at a time)."""

    dialect = "sqlite"

    def __init__(
        self,
        path: str,
        reader: aiosqlite.Connection,
        writer: aiosqlite.Connection,
        *,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        max_pages: int | None = None,
    ):
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self.max_pages = max_pages
        self._reader = reader
        self._writer = writer

    @classmethod
    async def connect(
        cls,
        path: str | Path,
        *,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        max_pages: int | None = None,
    ) -> SqliteBackend:
        """Open (creating if needed) the database file at `path`, not migrated yet (`migrate`).
        `max_pages` caps the file's size once migrated (SQLITE_FULL beyond it)."""
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
        return cls(path, reader, writer, busy_timeout_ms=busy_timeout_ms, max_pages=max_pages)

    async def migrate(self, store: Store, target: int) -> int:
        """Migrate the file to `target` (memory.store.sqlite.migrate), rebuild the keyword
        index if its word rules are not this process's, cap the file's size; return the
        schema."""
        try:
            await self._writer.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
            )
            await apply_migrations(store, target)
            version = await store.schema_version()
            if version >= KEYWORD_RULES_SCHEMA:
                await store.transact(_keep_keyword_rules)
            if self.max_pages is not None:
                await self._writer.execute_fetchall(
                    f"PRAGMA max_page_count = {int(self.max_pages)}"
                )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the database at {self.path}: {exc}") from exc
        return version

    async def close(self) -> None:
        """Close both connections (both, even if one fails)."""
        try:
            await self._reader.close()
        finally:
            await self._writer.close()

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a read-only query on the reader connection."""
        try:
            return list(await self._reader.execute_fetchall(sql, params))
        except sqlite3.Error as exc:
            raise StoreError(str(exc)) from exc

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[SqliteTx]:
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

    @contextlib.asynccontextmanager
    async def exclusive(self, job: str) -> AsyncIterator[bool]:
        """Always this process: one process writes an SQLite file at a time, and a job's work
        is its writes."""
        yield True

    def size_bytes(self) -> int | None:
        """The file and its WAL: pages not checkpointed yet live only in the WAL (a new
        database's may all be there), and a rewrite copies them too."""
        if self.path == ":memory:":
            return None
        try:
            size = Path(self.path).stat().st_size
        except OSError:
            return None
        with contextlib.suppress(OSError):
            size += Path(f"{self.path}-wal").stat().st_size
        return size

    async def vacuum(self, writes: asyncio.Lock) -> str | None:
        """Rewrite the file whole (VACUUM), under the write lock: the copies page balancing
        left in unused space go (memory.store.db.Rewrite); its pages pass through the WAL,
        which the checkpoint after it truncates. On the writer connection (another's VACUUM
        left the writer's next statement failing with "no such table" once), whose statements
        are therefore read to their end: SQLite refuses to VACUUM on a connection with one in
        progress (a PRAGMA's row left unread was one). None when rewritten, else why not."""
        async with writes:
            try:
                await self._writer.execute_fetchall("VACUUM")
            except sqlite3.Error as exc:
                return reason(exc)
        return None

    async def checkpoint(self, writes: asyncio.Lock, *, patience_ms: int) -> bool:
        """Fold the WAL into the main file and truncate it (after an erasure), on the writer
        connection under the write lock; False when a reader on an older snapshot kept some of
        it for longer than `patience_ms`."""
        async with writes:
            try:
                await self._writer.execute_fetchall(f"PRAGMA busy_timeout = {int(patience_ms)}")
                rows = list(await self._writer.execute_fetchall("PRAGMA wal_checkpoint(TRUNCATE)"))
                row = rows[0] if rows else None
            except sqlite3.Error as exc:
                log.warning("checkpoint failed: %s", exc)
                return False
            finally:
                await self._writer.execute_fetchall(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
        return row is not None and row[0] == 0


async def open_sqlite(
    path: str | Path,
    *,
    migrate_to: int = LATEST,
    busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    max_pages: int | None = None,
) -> Store:
    """The store over the SQLite file at `path` (created if needed), migrated to `migrate_to`.
    `max_pages` caps the file's size (SQLITE_FULL beyond it)."""
    backend = await SqliteBackend.connect(
        path, busy_timeout_ms=busy_timeout_ms, max_pages=max_pages
    )
    return await Store.over(backend, migrate_to=migrate_to)


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


# This backend checked against the seam's Protocols (mypy --strict): a method missing here or
# typed apart from memory.store.db fails the type check, not a test on this backend.
_SEAM: tuple[type[Backend], type[Tx]] = (SqliteBackend, SqliteTx)
