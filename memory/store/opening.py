"""Opening the database: a `postgresql://` URL opens the one `Store` over PostgreSQL's backend
(memory.store.postgres.store), anything else over an SQLite file's (memory.store.sqlite.store).
The one place that knows both backends.

PostgreSQL's module (and asyncpg) is imported only when a URL is opened: a process on an SQLite
file never loads it.
"""

from __future__ import annotations

from pathlib import Path

from memory.errors import StoreError
from memory.store.db import BUSY_TIMEOUT_MS, Store
from memory.store.migrations import LATEST
from memory.store.sqlite.store import open_sqlite

# A target that starts with one of these is a PostgreSQL URL, anything else an SQLite file.
PG_SCHEMES = ("postgresql://", "postgres://")


async def open_store(
    target: str | Path,
    *,
    migrate_to: int = LATEST,
    busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    max_pages: int | None = None,
    password: str | None = None,
) -> Store:
    """Open (creating if needed) the database at `target` and migrate it to `migrate_to`.

    `max_pages` caps an SQLite file's size (SQLITE_FULL beyond it); a PostgreSQL URL takes
    `password` if it has none."""
    target = str(target)
    if target.startswith(PG_SCHEMES):
        if max_pages is not None:
            raise StoreError("max_pages applies to SQLite only")
        from memory.store.postgres.store import open_postgres

        return await open_postgres(
            target, migrate_to=migrate_to, busy_timeout_ms=busy_timeout_ms, password=password
        )
    return await open_sqlite(
        target, migrate_to=migrate_to, busy_timeout_ms=busy_timeout_ms, max_pages=max_pages
    )
