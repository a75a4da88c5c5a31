"""Applying the numbered migrations to an SQLite database: each in its own write transaction,
statement by statement, recorded in `schema_migrations`; a schema newer than this program is
refused.

Apart from memory.store.sqlite.store because the transaction API does not depend on how a script is
split and applied, and from memory.store.migrations, which holds only the scripts (never edited
once published, while this code may change). PostgreSQL applies its own scripts, whole, under
an advisory lock (memory.store.postgres.store).
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import time
from typing import TYPE_CHECKING

from memory.errors import MigrationError
from memory.store.migrations import LATEST, MIGRATIONS

if TYPE_CHECKING:
    from memory.store.db import Store, Tx

log = logging.getLogger(__name__)


async def migrate(store: Store, target: int) -> None:
    """Apply the migrations between the database's schema and `target`, in order."""
    current = await store.schema_version()
    if current > LATEST:
        raise MigrationError(
            f"database schema {current} is newer than this program's {LATEST}: upgrade Écho"
        )
    applied = []
    for version, sql in MIGRATIONS:
        if not current < version <= target:
            continue
        # Several processes may open a new file at once: each migration checks the version
        # again under the write lock, so one of them applies it.
        if await store.transact(functools.partial(_apply_once, version=version, sql=sql)):
            log.debug("database migrated to schema %d", version)
            applied.append(version)
    if applied:
        # One line for the operator, however many steps: a new database takes them all.
        log.info("database migrated from schema %d to %d", current, applied[-1])


async def _apply_once(tx: Tx, *, version: int, sql: str) -> bool:
    """Apply migration `version` unless another process did since this one read the version
    (read again here, inside the write transaction); return whether it was applied here."""
    row = await tx.fetchone("SELECT max(version) FROM schema_migrations")
    if row is not None and int(row[0] or 0) >= version:
        return False
    await _apply(tx, version=version, sql=sql)
    return True


async def _apply(tx: Tx, *, version: int, sql: str) -> None:
    for statement in _statements(sql):
        await tx.execute(statement)
    await tx.execute(
        "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", (version, time.time())
    )


def _statements(sql: str) -> list[str]:
    """Split a migration script into statements (sqlite3.complete_statement aware)."""
    out: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            out.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        out.append(buffer.strip())
    return out
