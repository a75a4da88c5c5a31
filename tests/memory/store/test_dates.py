"""Schema 23: the days a memory means, kept per memory and gone with it, and 'time' among the
reasons a turn recorded; a database of schema 22 migrates forward with its turns."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from memory.errors import StoreError
from memory.store import Store, Tx, open_store
from memory.store.tables import memory_dates

NOW = 1_700_000_000.0


async def _memory_and_turn(tx: Tx) -> int:
    memory_id = await tx.execute(
        "INSERT INTO memories (user_id, scope, origin, kind, text, confidence, created_at,"
        " updated_at, content_hash) VALUES (1, 'global', '42', 'fact', 'x', 0.9, ?, ?, ?)",
        (NOW, NOW, "0" * 64),
    )
    turn_id = await tx.execute(
        "INSERT INTO turns (user_id, story_id, origin, degraded, created_at)"
        " VALUES (1, 10, '42', 0, ?)",
        (NOW,),
    )
    await tx.execute(
        "INSERT INTO turn_selections (turn_id, memory_id, position, reason, score)"
        " VALUES (?, ?, 0, 'conversation', 0.5)",
        (turn_id, memory_id),
    )
    return memory_id


async def test_a_schema_22_database_keeps_its_turns_and_takes_time_and_dates(
    database: Path | str,
) -> None:
    async with await open_store(database, migrate_to=22) as old:
        memory_id = await old.transact(_memory_and_turn)
    async with await open_store(database) as store:
        row = await store.fetchone("SELECT reason, score FROM turn_selections")
        assert row is not None and (row[0], row[1]) == ("conversation", 0.5)
        await store.transact(
            lambda tx: tx.execute(
                "UPDATE turn_selections SET reason = 'time' WHERE memory_id = ?", (memory_id,)
            )
        )
        spans = [(date(2026, 12, 8), date(2026, 12, 8)), (date(2026, 12, 14), date(2026, 12, 20))]
        await store.transact(lambda tx: memory_dates.record(tx, memory_id, spans))
        assert await memory_dates.of(store, memory_id) == spans
        await store.transact(lambda tx: memory_dates.record(tx, memory_id, spans[1:]))
        assert await memory_dates.of(store, memory_id) == spans[1:]  # its current text's only
        await store.transact(
            lambda tx: tx.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
        )
        assert await store.fetchone("SELECT 1 FROM memory_dates") is None


async def test_a_span_that_ends_before_it_starts_cannot_be_stored(store: Store) -> None:
    memory_id = await store.transact(_memory_and_turn)
    with pytest.raises(StoreError):
        await store.transact(
            lambda tx: memory_dates.record(tx, memory_id, [(date(2026, 12, 9), date(2026, 12, 8))])
        )
