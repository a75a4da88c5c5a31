"""Opening one SQLite connection as the store needs it: WAL, a busy timeout, foreign keys,
secure_delete, synchronous NORMAL, and `echo_owned_words`, the function the keyword index's
triggers call (schema 19: a connection without it cannot write memories).

Apart from memory.store.sqlite.store because how a file is opened is settled once, at the start: the
transaction API above it (`SqliteBackend`, `SqliteTx`) does not depend on these pragmas, and the
waits here (another process turning the same new file to WAL) are not a transaction's.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time

import aiosqlite

from memory.store.sqlite import fts5_words


async def connect(path: str, busy_timeout_ms: int) -> aiosqlite.Connection:
    """Open `path` (autocommit, rows by name) with the store's pragmas; close it on failure."""
    conn = await aiosqlite.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        await conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        await conn.create_function("echo_owned_words", 2, owned_words, deterministic=True)
        await _into_wal(conn, busy_timeout_ms)
        for pragma in (
            "PRAGMA foreign_keys = ON",
            "PRAGMA secure_delete = ON",
            # WAL + NORMAL: a commit survives a killed process (what the crash harness checks);
            # only a power cut can lose the last transactions. FULL added an fsync to every turn
            # (~3 ms, the largest cost of a turn at 3k memories in bench/latency.py).
            "PRAGMA synchronous = NORMAL",
        ):
            await conn.execute(pragma)
    except BaseException:
        # The connection's worker thread is not a daemon: left open, the process never exits
        # (a garbage or truncated file connects, then fails here).
        await conn.close()
        raise
    return conn


def owner_tag(user_id: int) -> str:
    """The letters before each of a person's words in the keyword index ("42x", "n42x" for -42)."""
    return f"{user_id}x".replace("-", "n")


def owned_words(user_id: int, text: str) -> str:
    """A memory's words as the keyword index holds them, each behind its owner's tag ("42xtea"):
    a term of one person is then a term of the index no one else's memory holds, so matching it
    (a prefix too) reads that person's entries only (memory.store.tables.keywords)."""
    tag = owner_tag(user_id)
    # A word of combining marks alone is no word to FTS5 once it removes diacritics; behind
    # the tag it would be one (the tag itself), matched where the plain index matches nothing.
    words = fts5_words.word().findall(text)
    gone = fts5_words.folded_away()
    return " ".join(tag + w for w in words if not all(c in gone for c in w))


async def _into_wal(conn: aiosqlite.Connection, busy_timeout_ms: int) -> None:
    """Turn the file to WAL, waiting up to the busy timeout while another connection holds it:
    a new file being turned to WAL by another process at the same moment answers "database is
    locked" at once, without the busy handler (4 stores opening one new file together: 5 runs
    of 60 failed so, none with this wait)."""
    deadline = time.monotonic() + busy_timeout_ms / 1000
    pause = 0.005
    while True:
        try:
            await conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.2)


def reason(exc: BaseException) -> str:
    """An OS error's reason and file name, without the errno prefix."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return str(exc)
