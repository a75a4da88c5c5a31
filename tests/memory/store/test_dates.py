"""Schema 23: the days a memory means, kept per memory and gone with it, and 'time' among the
reasons a turn recorded; a database of schema 22 migrates forward with its turns. Schema 36:
the days kept under their owner, read one window of one person at a time, and 'dated'."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


async def _memory_of(tx: Tx, user_id: int) -> int:
    return await tx.execute(
        "INSERT INTO memories (user_id, scope, origin, kind, text, confidence, created_at,"
        " updated_at, content_hash) VALUES (?, 'global', '42', 'promise', 'x', 0.9, ?, ?, ?)",
        (user_id, NOW, NOW, "0" * 64),
    )


async def test_a_schema_35_database_keeps_its_dates_under_their_owner_and_takes_dated(
    database: Path | str,
) -> None:
    tomorrow = (date(2026, 12, 8), date(2026, 12, 8))

    async def dated(tx: Tx) -> tuple[int, int]:
        mine, theirs = await _memory_of(tx, 1), await _memory_of(tx, 2)
        for memory_id in (mine, theirs):
            await tx.execute(
                "INSERT INTO memory_dates (memory_id, first_day, last_day) VALUES (?, ?, ?)",
                (memory_id, "2026-12-08", "2026-12-08"),
            )
        return mine, theirs

    async with await open_store(database, migrate_to=35) as old:
        mine, theirs = await old.transact(dated)
    async with await open_store(database) as store:
        assert await memory_dates.meeting(store, 1, *tomorrow) == {mine: tomorrow}
        assert await memory_dates.meeting(store, 2, *tomorrow) == {theirs: tomorrow}
        turn_id = await store.transact(
            lambda tx: tx.execute(
                "INSERT INTO turns (user_id, story_id, origin, degraded, created_at)"
                " VALUES (1, 10, '42', 0, ?)",
                (NOW,),
            )
        )
        await store.transact(
            lambda tx: tx.execute(
                "INSERT INTO turn_selections (turn_id, memory_id, position, reason, matched)"
                " VALUES (?, ?, 0, 'dated', '2026-12-08 tomorrow')",
                (turn_id, mine),
            )
        )
        row = await store.fetchone("SELECT reason, matched FROM turn_selections")
        assert row is not None and (row[0], row[1]) == ("dated", "2026-12-08 tomorrow")


_DAY0 = date(2026, 11, 1)
_spans = st.tuples(st.integers(0, 150), st.integers(0, 400)).map(
    lambda s: (_DAY0 + timedelta(days=s[0]), _DAY0 + timedelta(days=s[0] + s[1]))
)
_memories = st.lists(
    st.tuples(st.sampled_from([1, 2, -7]), st.lists(_spans, max_size=3)), max_size=25
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_memories, st.integers(0, 200), st.integers(0, 60))
async def test_the_indexed_window_equals_a_scan_of_every_memory(
    store: Store, drawn: list[tuple[int, list[tuple[date, date]]]], start: int, length: int
) -> None:
    """Oracle: each drawn memory's spans checked one by one against the window; the query on
    the person's index must find exactly those memories, each with its earliest span there,
    and never another person's (a character's derived id is one more person)."""
    first = _DAY0 + timedelta(days=start)
    last = first + timedelta(days=length)

    async def fill(tx: Tx) -> list[int]:
        await tx.execute("DELETE FROM memories")
        ids = []
        for user_id, spans in drawn:
            memory_id = await _memory_of(tx, user_id)
            await memory_dates.record(tx, memory_id, spans)
            ids.append(memory_id)
        return ids

    ids = await store.transact(fill)
    for person in (1, 2, -7):
        expected = {
            memory_id: min(s for s in spans if s[0] <= last and s[1] >= first)
            for memory_id, (user_id, spans) in zip(ids, drawn, strict=True)
            if user_id == person and any(s[0] <= last and s[1] >= first for s in spans)
        }
        assert await memory_dates.meeting(store, person, first, last) == expected


@pytest.mark.sqlite_only("reads SQLite's query plan")
async def test_the_window_reads_one_range_of_the_persons_index(store: Store) -> None:
    plan = await store.fetchall(
        f"EXPLAIN QUERY PLAN {memory_dates.MEETING}", (1, "2026-12-08", "2026-12-08")
    )
    assert any("memory_dates_by_person" in str(tuple(row)) for row in plan), plan
