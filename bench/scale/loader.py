"""The scale bench's database written in bulk: the rows `data.build` writes through the product,
in a fraction of its time.

`data.build` writes each memory with its own statements and its keyword index entry by a
trigger, then embeds through the indexer: 200,000 memories took 874 s on 2 cores, so 1M was
never built. Here, on a file the product has migrated (open_store: the schema, the keyword rules)
and given the small rows through its own functions (the characters' ids, the model the vectors
were checked against), one plain sqlite3 connection writes the rest:

- the memories, their counters and their vectors with explicit ids, CHUNK memories a
  transaction, each table's rows in one prepared statement run over the whole chunk;
- the vectors computed as the bench's embedder computes them (data.vector), stored as the
  indexer stores them (float32 bytes, the content hash of the model and the text);
- the triggers on `memories` dropped meanwhile (a row of the keyword index and a mark for the
  indexer per memory) and put back as they were; the keyword index then built once, in one
  statement over every memory, with the product's own `echo_owned_words`;
- each person's generation as one write of rows then one of vectors leaves it: the product's
  numbers count its transactions, which a bulk load folds into a few (only their order means
  anything: rows_generation below generation says the vectors came after the rows).

PostgreSQL gets the same rows from this file by COPY (bench/scale/pg.py `fill`).
tests/bench/test_scale_loader.py compares a loaded sample with one the product wrote: the same
rows in every table, the same keyword and vector recall.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Iterator
from itertools import islice
from typing import Any

from bench.scale.data import MODEL, ORIGIN, Planned, derived_ids, planned, vector

# Memories a transaction: about 350 MB of 768-d vectors held before they are written.
CHUNK = 100_000


async def load(target: str, people: int, per_person: int, dim: int, characters: int = 1) -> None:
    """Write at SQLite path `target` what data.build would, in bulk."""
    from memory.store import open_store
    from memory.store.tables import characters as cast_store
    from memory.store.tables import embeddings

    began = time.perf_counter()
    ids = derived_ids(people, characters)
    async with await open_store(target) as store:

        async def small(tx: Any) -> None:
            if ids:
                await cast_store.record_ids(tx, ids)
            await embeddings.set_checked(tx, MODEL, "", now=time.time())

        await store.transact(small)
    total = people * per_person
    conn = _connect(target)
    try:
        triggers = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'memories'"
        ).fetchall()
        with conn:
            for name, _ in triggers:
                conn.execute(f"DROP TRIGGER {name}")
        written = 0
        for part in _chunks(planned(people, per_person, characters), CHUNK):
            with conn:
                _write(conn, part, written + 1, dim)
            written += len(part)
            print(f"  loaded {written:,} / {total:,} ({time.perf_counter() - began:,.0f} s)",
                  file=sys.stderr)  # fmt: skip
        with conn:
            conn.execute("INSERT INTO memories_fts (rowid, words) SELECT id,"
                         " echo_owned_words(user_id, text) FROM memories ORDER BY id")  # fmt: skip
            conn.execute("INSERT INTO person_generations (user_id, generation, rows_generation)"
                         " SELECT DISTINCT user_id, 2, 1 FROM memories")  # fmt: skip
            for _, sql in triggers:
                conn.execute(sql)
    finally:
        conn.close()
    print(f"  keyword index built; loaded in {time.perf_counter() - began:,.0f} s "
          f"({time.process_time():,.0f} s of CPU)", file=sys.stderr)  # fmt: skip


def _connect(path: str) -> sqlite3.Connection:
    from memory.store.sqlite.connect import owned_words

    conn = sqlite3.connect(path, isolation_level=None)
    # A bench file: a crash means building it again. WAL (the product's mode, back at its next
    # open) would write every page twice.
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.create_function("echo_owned_words", 2, owned_words, deterministic=True)
    return conn


def _chunks(rows: Iterator[Planned], size: int) -> Iterator[list[Planned]]:
    while part := list(islice(rows, size)):
        yield part


def _write(conn: sqlite3.Connection, part: list[Planned], first_id: int, dim: int) -> None:
    """One chunk of memories, ids from `first_id`, with their counters and vectors."""
    from memory.store.tables.memories import bucket_of, text_hash
    from memory.vectors.indexer import vector_hash

    ids = range(first_id, first_id + len(part))
    conn.executemany(
        "INSERT INTO memories (id, user_id, text, kind, scope, story_id, origin, confidence,"
        " pinned, created_at, updated_at, content_hash)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
        [(i, m.user_id, m.text, m.kind.value, m.scope.value, _story(m), ORIGIN, 0.9, float(m.i),
          float(m.i), text_hash(m.text)) for i, m in zip(ids, part, strict=True)],
    )  # fmt: skip
    # candidate_base: the turns already held in the memory's bucket, none in a new database.
    conn.executemany(
        "INSERT INTO memory_counters (memory_id, bucket, candidate_base) VALUES (?, ?, 0)",
        [(i, bucket_of(m.scope, _story(m), ORIGIN)) for i, m in zip(ids, part, strict=True)],
    )
    conn.executemany(
        "INSERT INTO embeddings (memory_id, model, content_hash, dim, vector)"
        " VALUES (?, ?, ?, ?, ?)",
        [(i, MODEL, vector_hash(MODEL, m.text), dim, vector(m.text, dim).tobytes())
         for i, m in zip(ids, part, strict=True)],
    )  # fmt: skip


def _story(m: Planned) -> int | None:
    from memory.model import Scope

    return m.story_id if m.scope is Scope.STORY else None
