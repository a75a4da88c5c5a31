"""The scale bench's bulk loader writes what the product writes (bench/scale/loader.py).

A sample (300 memories over 5 people, 768-d vectors) written both ways: through the product
(data.build: memories.insert, the real indexer) and by the loader (on PostgreSQL, `make
test-pg`: the loaded SQLite file copied in by bench/scale/pg.py's `fill`). Every table the product
fills holds the same rows, the schema is the same (the triggers the loader drops are back), and
the indexes answer the same: each person's keyword recall and vector recall find the same
memories with the same scores. Left out of the rows: the two timestamps of when the file was
written, and the generations' numbers, which count the product's transactions (only their
order means something: the vectors after the rows).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bench.scale import data, loader, pg
from memory.recall.lexical import keyword_hits
from memory.recall.semantic import VectorCache
from memory.store import open_store

PEOPLE, PER_PERSON, DIM = 5, 60, 768
# Columns that hold the moment the file was written, not what it holds.
_STAMPS = {
    ("vectors_checked", "checked_at"),
    ("keyword_rules", "built_at"),
    ("schema_migrations", "applied_at"),
}
QUERIES = ("cello", "note 17", "ferry violin Lyon", "tea garden", data.ATTACK)


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, sorted; the keyword index's own tables aside (asked, not read)."""
    conn = sqlite3.connect(path)
    try:
        tables = [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memories_fts%'"
        )]  # fmt: skip
        out = {}
        for table in tables:
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            if table == "person_generations":
                rows = [(user, generation > rows_at > 0) for user, generation, rows_at in rows]
            else:
                kept = [(table, c) not in _STAMPS for c in columns]
                rows = [tuple(v if k else None for v, k in zip(row, kept, strict=True))
                        for row in rows]  # fmt: skip
            out[table] = sorted(rows, key=repr)
        return out
    finally:
        conn.close()


def _schema(path: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    finally:
        conn.close()


async def _answers(path: Path | str, characters: int) -> dict[tuple[int, str], Any]:
    """Each person's keyword hits and vector scores for QUERIES, under each character's ids."""
    out: dict[tuple[int, str], Any] = {}
    played = data.cast(characters)
    async with await open_store(path) as store:
        vectors = VectorCache(store)
        for person in range(1, PEOPLE + 1):
            for key in (c.key for c in played):
                user, story = played.person_id(key, person), played.story_id(key, data.STORY)
                for query in QUERIES:
                    hits = await keyword_hits(
                        store,
                        user_id=user,
                        story_id=story,
                        origin=data.ORIGIN,
                        text=query,
                        everywhere=True,
                    )
                    scores, _ = await vectors.scores(
                        user, data.MODEL, data.vector(query, DIM).tolist()
                    )
                    out[user, query] = (hits, scores)
    return out


@pytest.mark.parametrize("characters", [1, 2])
async def test_a_loaded_sample_equals_the_one_the_product_wrote(
    tmp_path: Path, characters: int
) -> None:
    written, loaded = tmp_path / "written.sqlite3", tmp_path / "loaded.sqlite3"
    await data.build(str(written), PEOPLE, PER_PERSON, DIM, characters)
    await loader.load(str(loaded), PEOPLE, PER_PERSON, DIM, characters)

    assert _schema(loaded) == _schema(written)
    rows = _rows(written)
    assert len(rows["memories"]) == len(rows["embeddings"]) == PEOPLE * PER_PERSON
    assert bool(rows["character_ids"]) == (characters > 1)
    assert _rows(loaded) == rows

    answers = await _answers(written, characters)
    # Nothing vacuous: every vector recall scores something, every query recalls by keyword.
    assert all(scores for _, scores in answers.values())
    assert all(any(answers[k][0] for k in answers if k[1] == query) for query in QUERIES)
    assert await _answers(loaded, characters) == answers


async def _pg_rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows on PostgreSQL, sorted, as _rows reads them on SQLite."""
    conn = await asyncpg.connect(url)
    try:
        tables = [r["tablename"] for r in await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]  # fmt: skip
        out = {}
        for table in tables:
            rows = [tuple(r.items()) for r in await conn.fetch(f"SELECT * FROM {table}")]
            if table == "person_generations":
                rows = [(r[0], r[1][1] > r[2][1] > 0) for r in rows]
            else:
                rows = [tuple((c, None if (table, c) in _STAMPS else v) for c, v in row)
                        for row in rows]  # fmt: skip
            out[table] = sorted(rows, key=repr)
        return out
    finally:
        await conn.close()


@pytest.mark.slow  # 13 s on two loaded cores: two builds and a server's databases
async def test_a_sample_loaded_into_postgresql_equals_the_one_the_product_wrote(
    postgres: Any, tmp_path: Path
) -> None:
    written, filled = await postgres.create(empty=True), await postgres.create(empty=True)
    try:
        await data.build(written, PEOPLE, PER_PERSON, DIM, 2)
        await loader.load(str(tmp_path / "loaded.sqlite3"), PEOPLE, PER_PERSON, DIM, 2)
        await pg.fill(filled, tmp_path / "loaded.sqlite3")

        rows = await _pg_rows(written)
        assert len(rows["memories"]) == len(rows["embeddings"]) == PEOPLE * PER_PERSON
        assert await _pg_rows(filled) == rows
        answers = await _answers(written, 2)
        assert all(scores for _, scores in answers.values())
        assert await _answers(filled, 2) == answers
    finally:
        await postgres.drop(written)
        await postgres.drop(filled)
