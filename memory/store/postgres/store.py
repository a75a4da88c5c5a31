"""The PostgreSQL backend: the `Backend` and `Tx` of memory.store.db over an asyncpg pool,
under the one `Store`, beside the SQLite backend (memory.store.sqlite.store).

The store modules keep one SQL text per statement, written for SQLite; `pg_sql.translate`
rewrites the few spellings PostgreSQL does not share, and the statements whose meaning differs
(full-text search, JSON, replacing upserts) have a PostgreSQL variant chosen by `dialect`. One
translator and a handful of variants instead of a second copy of every query: a query changed
for one backend cannot silently drift from the other.

Values are typed as SQLite types them, loosely: each parameter is converted to the type
PostgreSQL inferred for it (learned once per statement), numeric results come back as int or
float (memory.store.postgres.conversion). Writes in one process still go one transaction at a
time, as on SQLite, so a read-then-write transaction keeps the meaning it has there; reads share the
pool. Across processes, PostgreSQL's row locks and the advisory locks below do the ordering.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Iterable
from typing import cast
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from memory.errors import MigrationError, StoreError
from memory.store.db import BUSY_TIMEOUT_MS, Backend, Params, Row, Store, Tx
from memory.store.generations import GenerationMoved, Touched
from memory.store.migrations import LATEST
from memory.store.postgres.conversion import Statements, changed_rows, prepare_connection
from memory.store.postgres.migrations import ID_TABLES, PG_MIGRATIONS
from memory.store.postgres.sql import translate

log = logging.getLogger(__name__)

# Connections per process: reads run concurrently on them, writes take one at a time. Eight kept
# a turn's reads from queueing behind the indexer's and the operator page's.
POOL_SIZE = 8

# Keys of the advisory locks (one namespace for Écho): the migrations, and named jobs.
_MIGRATION_LOCK = 0x45_63_68_6F_00_01
LOCKS = {
    "indexer": 0x45_63_68_6F_00_02,
    "outbox": 0x45_63_68_6F_00_03,
    "calibration": 0x45_63_68_6F_00_04,
    # An erasure (and the retention's prune) holds it alone; the writes of what may copy erased
    # words (a reflection, the condensed history) share it: see erasure.erase.
    "erasure": 0x45_63_68_6F_00_05,
    # The follow-ups' claims (memory.store.tables.followups.claim), as the outbox's.
    "followups": 0x45_63_68_6F_00_06,
}

# The tables that hold a person's words, vacuumed after an erasure (see checkpoint): with
# embeddings (a memory's vector, and the hash of its text, which confirms a guess of it) and
# turn_selections (the words of a message that recalled a memory by keyword), whose rows go with
# their memory and their turn, and memory_versions (a memory's earlier wordings).
TEXT_TABLES = (
    "memories",
    "messages",
    "outbox",
    "summary_revisions",
    "story_summaries",
    "story_context",
    "anchors",
    "positions",
    "lore_entries",
    "applied_exchanges",
    "embeddings",
    "turns",
    "turn_selections",
    "memory_versions",
)

_PG_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError)


def redacted(url: str) -> str:
    """The URL without its password, for errors and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit((parts.scheme, user + host, parts.path, parts.query, parts.fragment))


def describe(exc: BaseException) -> str:
    """A PostgreSQL error in one line, without its DETAIL: PostgreSQL quotes the failing row
    there, and a row holds a person's words. A broken CHECK says so as SQLite does."""
    if isinstance(exc, asyncpg.CheckViolationError):
        return f"CHECK constraint failed: {exc.constraint_name}"
    if isinstance(exc, asyncpg.NotNullViolationError):
        return f"NOT NULL constraint failed: {exc.table_name}.{exc.column_name}"
    if isinstance(exc, asyncpg.UniqueViolationError):
        return f"UNIQUE constraint failed: {exc.constraint_name}"
    if isinstance(exc, asyncpg.ForeignKeyViolationError):
        return f"FOREIGN KEY constraint failed: {exc.constraint_name}"
    if isinstance(exc, asyncpg.PostgresError):
        return str(exc.args[0]) if exc.args else type(exc).__name__
    return str(exc)


class PgTx:
    """One write transaction on a pooled PostgreSQL connection.

    Its BEGIN goes with the first request, not on its own: when that is an advisory lock, both
    in one simple query (one round trip instead of two); a transaction that ran nothing sends
    neither BEGIN nor COMMIT."""

    dialect = "postgres"

    def __init__(self, conn: asyncpg.Connection, statements: Statements) -> None:
        self._pg = conn
        self._statements = statements
        self._changed_rows = 0
        self.touched = Touched()
        self.begun = False
        # The advisory locks this transaction holds: (job, shared).
        self._locks: set[tuple[str, bool]] = set()

    async def _begin(self, then: str = "") -> None:
        """Send BEGIN if not sent yet, with `then` (a statement without parameters) after it."""
        if not self.begun:
            self.begun = True
            await self._pg.execute(f"BEGIN; {then}" if then else "BEGIN")
        elif then:
            await self._pg.execute(then)

    def touch(
        self, user_id: int, memory_ids: Iterable[int] | None = None, *, vectors_only: bool = False
    ) -> None:
        self.touched.touch(user_id, memory_ids, vectors_only=vectors_only)

    async def serialize(self, job: str, *, shared: bool = False) -> None:
        """An advisory lock held to the transaction's end (LOCKS names the jobs); once: a lock
        held already (or its exclusive form) is not asked for again."""
        if (job, False) in self._locks or (job, shared) in self._locks:
            return
        self._locks.add((job, shared))
        how = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        # The key is one of LOCKS' integers: written in the text, it needs no parameter.
        await self._begin(f"SELECT {how}({int(LOCKS[job])})")

    def for_update(self) -> str:
        return " FOR UPDATE"

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return the id of the row an INSERT added (0: none)."""
        await self._begin()
        translated = translate(sql)
        query = translated.sql
        args = await self._statements.args(self._pg, query, params)
        if translated.inserts_into in ID_TABLES and " RETURNING " not in query.upper():
            rows = await self._pg.fetch(query + " RETURNING id", *args)
            self._changed_rows = len(rows)
            return int(rows[0][0]) if rows else 0
        status = await self._pg.execute(query, *args)
        changed = changed_rows(status)
        if changed is not None:
            self._changed_rows = changed
        return 0

    async def script(self, sql: str) -> None:
        """Run a script of PostgreSQL statements as written (a migration), no parameters."""
        await self._begin()
        await self._pg.execute(sql)

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        query = translate(sql).sql
        converted = [await self._statements.args(self._pg, query, row) for row in rows]
        if converted:
            await self._begin()
            await self._pg.executemany(query, converted)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        await self._begin()
        query = translate(sql).sql
        args = await self._statements.args(self._pg, query, params)
        rows = await self._pg.fetch(query, *args)
        if " RETURNING " in query.upper():
            self._changed_rows = len(rows)
        # asyncpg's Record is a Row: read by position and by name.
        return cast("list[Row]", rows)

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def changes(self) -> int:
        return self._changed_rows


class Sessions:
    """The pooled connections whose session holds more than their transactions did: a session
    advisory lock (`exclusive`, the migrations) or a setting (the vacuum's lock timeout). Only
    those get asyncpg's reset (one round trip) when the pool takes them back; a connection that
    ran reads and transactions only, all ended, has nothing to reset (asyncpg rolls back a
    transaction left open itself), and a turn releases one several times."""

    def __init__(self) -> None:
        self._marked: set[int] = set()

    def mark(self, conn: asyncpg.Connection | PoolConnectionProxy) -> None:
        """Note that `conn`'s session is about to hold a lock or a setting."""
        self._marked.add(conn.get_server_pid())

    async def reset(self, conn: asyncpg.Connection) -> None:
        """The pool's reset: asyncpg's own query, for a marked connection only."""
        pid = conn.get_server_pid()
        if pid in self._marked:
            self._marked.discard(pid)
            query = conn.get_reset_query()
            if query:
                await conn.execute(query)


class PgBackend:
    """PostgreSQL: a pool of connections (the store runs this process's writes one at a time)."""

    dialect = "postgres"

    def __init__(self, url: str, pool: asyncpg.Pool, sessions: Sessions | None = None):
        self.path = redacted(url)
        self._pool = pool
        self._sessions = sessions or Sessions()
        self._statements = Statements()

    @classmethod
    async def connect(
        cls, url: str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS, password: str | None = None
    ) -> PgBackend:
        """Connect to the PostgreSQL database at `url` (with `password` if the URL has none),
        not migrated yet (`migrate`); `busy_timeout_ms` bounds lock waits."""
        sessions = Sessions()
        try:
            pool = await asyncpg.create_pool(
                url,
                password=password,
                min_size=1,
                max_size=POOL_SIZE,
                init=prepare_connection,
                reset=sessions.reset,
                server_settings={"lock_timeout": str(int(busy_timeout_ms))},
            )
        except (*_PG_ERRORS, OSError, ValueError) as exc:
            raise StoreError(
                f"cannot open the database at {redacted(url)}: {describe(exc)}"
            ) from exc
        return cls(url, pool, sessions)

    async def close(self) -> None:
        """Close the pool."""
        await self._pool.close()

    async def migrate(self, store: Store, target: int) -> int:
        """Apply the PostgreSQL migrations up to `target`, one process at a time (the others
        wait, then find the work done); return the schema."""
        try:
            await self._migrate(store, target)
            return await store.schema_version()
        except _PG_ERRORS as exc:
            raise StoreError(f"cannot open the database at {self.path}: {describe(exc)}") from exc

    async def _migrate(self, store: Store, target: int) -> None:
        async with self._pool.acquire() as conn:
            self._sessions.mark(conn)
            # As long as the migrating process takes (at millions of rows, longer than the
            # lock timeout that bounds a turn's waits): shards started together all open.
            await conn.execute("SET lock_timeout = 0")
            await conn.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
            await conn.execute("RESET lock_timeout")
            try:
                await conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations ("
                    " version BIGINT PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
                )
                current = await store.schema_version()
                if current > LATEST:
                    raise MigrationError(
                        f"database schema {current} is newer than this program's {LATEST}:"
                        " upgrade Écho"
                    )
                applied = []
                for version, sql in PG_MIGRATIONS:
                    if current < version <= target:
                        await store.transact(functools.partial(_apply, version=version, sql=sql))
                        log.debug("database migrated to schema %d", version)
                        applied.append(version)
                if applied:
                    log.info("database migrated from schema %d to %d", current, applied[-1])
            finally:
                await conn.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a read-only query on a pooled connection."""
        query = translate(sql).sql
        try:
            async with self._pool.acquire() as conn:
                args = await self._statements.args(conn, query, params)
                rows = await conn.fetch(query, *args)
        except _PG_ERRORS as exc:
            raise StoreError(describe(exc)) from exc
        return cast("list[Row]", rows)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[PgTx]:
        """A pooled connection's transaction: committed when the block ends, rolled back on
        any error (a conflict with another process's commit raised as GenerationMoved)."""
        try:
            conn = await self._pool.acquire()
        except (*_PG_ERRORS, OSError) as exc:
            raise StoreError(f"cannot start a write: {describe(exc)}") from exc
        try:
            tx = PgTx(conn, self._statements)
            try:
                yield tx
                if tx.begun:
                    await conn.execute("COMMIT")
            except BaseException as exc:
                if tx.begun:
                    with contextlib.suppress(*_PG_ERRORS):
                        await conn.execute("ROLLBACK")
                if isinstance(exc, _PG_ERRORS):
                    if await _moved(conn, tx):
                        raise GenerationMoved(describe(exc)) from exc
                    raise StoreError(describe(exc)) from exc
                raise
        finally:
            await self._pool.release(conn)

    @contextlib.asynccontextmanager
    async def exclusive(self, job: str) -> AsyncIterator[bool]:
        """Hold the advisory lock of `job` while the block runs; yield False (and hold
        nothing) when another process holds it."""
        async with self._pool.acquire() as conn:
            self._sessions.mark(conn)
            held = bool(await conn.fetchval("SELECT pg_try_advisory_lock($1)", LOCKS[job]))
            try:
                yield held
            finally:
                if held:
                    await conn.execute("SELECT pg_advisory_unlock($1)", LOCKS[job])

    def size_bytes(self) -> int | None:
        return None  # not one file

    async def vacuum(self, writes: asyncio.Lock) -> str | None:
        return None  # vacuumed by `checkpoint` instead (memory.store.db.Rewrite)

    async def checkpoint(self, writes: asyncio.Lock, *, patience_ms: int) -> bool:
        """Vacuum the tables that hold words (after an erasure), so the dead row versions of
        what was erased are removed from their pages and indexes; False when a transaction
        that began before the vacuum still holds a snapshot (those versions stay until it
        ends: the scheduler completes the erasure later). An autovacuum worker's ANALYZE
        that holds one is waited for, within `patience_ms`, and the vacuum run again. This
        process's writes go on meanwhile: `writes` is not taken."""
        started = time.time()
        try:
            async with self._pool.acquire() as conn:
                self._sessions.mark(conn)
                while True:
                    await conn.execute(f"SET lock_timeout = {int(patience_ms)}")
                    try:
                        await conn.execute("VACUUM " + ", ".join(TEXT_TABLES))
                    finally:
                        await conn.execute("RESET lock_timeout")
                    older, not_autovacuum = await conn.fetchrow(_OLDER_SNAPSHOTS, started)
                    if not older:
                        return True
                    if not_autovacuum or time.time() - started >= patience_ms / 1000:
                        return False
                    await asyncio.sleep(_AUTOVACUUM_POLL)
        except _PG_ERRORS as exc:
            log.warning("vacuum after an erasure failed: %s", type(exc).__name__)
            return False


async def open_postgres(
    url: str,
    *,
    migrate_to: int = LATEST,
    busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    password: str | None = None,
) -> Store:
    """The store over the PostgreSQL database at `url` (with `password` if the URL has none),
    migrated to `migrate_to`; `busy_timeout_ms` bounds lock waits."""
    backend = await PgBackend.connect(url, busy_timeout_ms=busy_timeout_ms, password=password)
    return await Store.over(backend, migrate_to=migrate_to)


# The sessions of this database whose snapshot, older than the vacuum, keeps the erased row
# versions; and those of them that are not autovacuum workers. A session running a (lazy)
# VACUUM is not one of them: PostgreSQL leaves its snapshot out when it decides what a vacuum
# may remove, though pg_stat_activity shows it like any other. An autovacuum worker vacuums
# pg_database in every database while databases come and go (a test suite), and it counted.
_OLDER_SNAPSHOTS = (
    "SELECT count(*), count(*) FILTER (WHERE backend_type <> 'autovacuum worker')"
    " FROM pg_stat_activity WHERE datname = current_database()"
    " AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL"
    " AND xact_start < to_timestamp($1)"
    " AND pid NOT IN (SELECT pid FROM pg_stat_progress_vacuum)"
)
# How often an autovacuum worker's ANALYZE (a snapshot held a moment) is checked again.
_AUTOVACUUM_POLL = 0.05


async def _moved(conn: asyncpg.Connection, tx: PgTx) -> bool:
    """Whether a failed transaction relied on a generation another process has moved since:
    its failure (a merge into a memory a concurrent forget deleted: a foreign key) is then a
    conflict, tried again with current data, not a fault."""
    for user_id, rows_at in tx.touched.vouched.items():
        try:
            now = await conn.fetchval(
                "SELECT rows_generation FROM person_generations WHERE user_id = $1", user_id
            )
        except _PG_ERRORS:
            return False
        if (now or 0) != rows_at:
            return True
    return False


async def _apply(tx: Tx, *, version: int, sql: str) -> None:
    assert isinstance(tx, PgTx)  # this backend's transactions, which run a script as written
    await tx.script(sql)
    await tx.execute(
        "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", (version, time.time())
    )


# This backend checked against the seam's Protocols (mypy --strict): a method missing here or
# typed apart from memory.store.db fails the type check, not a test on this backend.
_SEAM: tuple[type[Backend], type[Tx]] = (PgBackend, PgTx)
