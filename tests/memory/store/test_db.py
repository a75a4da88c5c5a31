from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest

from memory.errors import MigrationError, StoreError
from memory.store import Store, Tx, open_store
from memory.store.migrations import LATEST, MIGRATIONS

NOW = 1_700_000_000.0
HASH = "0" * 64


async def _insert_memory(tx: Tx, user_id: int = 1, text: str = "Aime le jazz") -> int:
    return await tx.execute(
        "INSERT INTO memories (user_id, scope, origin, kind, text, confidence, created_at,"
        " updated_at, content_hash) VALUES (?, 'global', '42', 'fact', ?, 0.9, ?, ?, ?)",
        (user_id, text, NOW, NOW, HASH),
    )


@pytest.mark.sqlite_only("reads SQLite's PRAGMAs")
async def test_every_connection_sets_the_pragmas(store: Store) -> None:
    for pragma, expected in [
        ("journal_mode", "wal"),
        ("foreign_keys", 1),
        ("secure_delete", 1),
        ("busy_timeout", 5000),
    ]:
        row = await store.fetchone(f"PRAGMA {pragma}")
        assert row is not None and row[0] == expected


async def test_old_database_is_migrated_forward_and_keeps_its_data(database: Path | str) -> None:
    path = database
    async with await open_store(path, migrate_to=1) as old:
        assert await old.schema_version() == 1
        memory_id = await old.transact(_insert_memory)
        await old.transact(
            lambda tx: tx.execute("INSERT INTO counters (name, value) VALUES ('degraded_turns', 7)")
        )
    async with await open_store(path) as new:
        assert await new.schema_version() == LATEST
        row = await new.fetchone("SELECT text FROM memories WHERE id = ?", (memory_id,))
        assert row is not None and row["text"] == "Aime le jazz"
        counter = await new.fetchone("SELECT value FROM counters WHERE name = 'degraded_turns'")
        assert counter is not None and counter[0] == 7
        versions = await new.fetchall("SELECT version FROM schema_migrations ORDER BY version")
        # Every migration once, in order (numbers agreed between branches may leave a gap).
        assert [v[0] for v in versions] == [version for version, _ in MIGRATIONS]


async def test_a_new_database_logs_its_migrations_in_one_line(
    database: Path | str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="memory.store"):
        async with await open_store(database, migrate_to=3):
            pass
        async with await open_store(database):
            pass
        async with await open_store(database):  # at the latest schema: nothing to say
            pass
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert said == [
        "database migrated from schema 0 to 3",
        f"database migrated from schema 3 to {LATEST}",
    ]


async def test_a_newer_database_is_refused_with_a_clear_error(database: Path | str) -> None:
    path = database
    async with await open_store(path) as store:
        await store.transact(
            lambda tx: tx.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)", (LATEST + 1,)
            )
        )
    with pytest.raises(MigrationError, match="newer"):
        await open_store(path)


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("kind", "'opinion'"),
        ("scope", "'everywhere'"),
        ("confidence", "1.5"),
        ("confidence", "-0.1"),
        ("pinned", "2"),
        ("origin", "'guild-name'"),
        ("text", "''"),
    ],
)
async def test_check_constraints_refuse_invalid_rows(store: Store, column: str, value: str) -> None:
    row = {
        "user_id": "1", "scope": "'global'", "origin": "'42'", "kind": "'fact'", "text": "'t'",
        "confidence": "0.9", "pinned": "0", "created_at": "0", "updated_at": "0",
        "content_hash": f"'{HASH}'",
    }  # fmt: skip
    row[column] = value
    sql = f"INSERT INTO memories ({', '.join(row)}) VALUES ({', '.join(row.values())})"
    with pytest.raises(StoreError, match="CHECK"):
        await store.transact(lambda tx: tx.execute(sql))
    assert await store.fetchall("SELECT * FROM memories") == []


async def test_story_scope_requires_a_story(store: Store) -> None:
    sql = (
        "INSERT INTO memories (user_id, scope, story_id, origin, kind, text, confidence,"
        " created_at, updated_at, content_hash) VALUES (1, 'story', NULL, 'dm', 'fact', 't', 1,"
        f" 0, 0, '{HASH}')"
    )
    with pytest.raises(StoreError):
        await store.transact(lambda tx: tx.execute(sql))


async def test_a_failed_transaction_leaves_nothing_behind(store: Store) -> None:
    async def half(tx: Tx) -> None:
        await _insert_memory(tx)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await store.transact(half)
    assert await store.fetchall("SELECT * FROM memories") == []
    # The writer is usable again: no transaction was left open.
    await store.transact(_insert_memory)
    assert len(await store.fetchall("SELECT * FROM memories")) == 1


async def test_cancelling_the_caller_does_not_cut_a_write_half_way(store: Store) -> None:
    started = asyncio.Event()

    async def slow(tx: Tx) -> None:
        await _insert_memory(tx, text="first")
        started.set()
        await asyncio.sleep(0.05)
        await _insert_memory(tx, text="second")

    caller = asyncio.ensure_future(store.transact(slow))
    await started.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await store.transact(lambda tx: tx.execute("SELECT 1"))  # waits for the shielded write
    rows = await store.fetchall("SELECT text FROM memories ORDER BY id")
    assert [r["text"] for r in rows] == ["first", "second"]


async def test_writes_are_serialised(store: Store) -> None:
    async def bump(tx: Tx) -> None:
        row = await tx.fetchone("SELECT coalesce(max(value), 0) FROM counters")
        await asyncio.sleep(0)
        await tx.execute(
            "INSERT INTO counters (name, value) VALUES ('n', ?)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            ((row[0] if row else 0) + 1,),
        )

    await asyncio.gather(*(store.transact(bump) for _ in range(20)))
    row = await store.fetchone("SELECT value FROM counters WHERE name = 'n'")
    assert row is not None and row[0] == 20


async def test_each_backend_implements_the_seam_on_its_own(store: Store) -> None:
    """The one store sits over a backend that answers to the seam's Protocol, and its
    transactions answer to `Tx`; no backend class inherits another: a method one backend lacks
    fails the type check instead of running the other backend's code."""
    from memory.store.db import Backend
    from memory.store.postgres.store import PgBackend, PgTx
    from memory.store.sqlite.store import SqliteBackend, SqliteTx

    async def is_a_tx(tx: Tx) -> bool:
        return isinstance(tx, Tx) and not isinstance(tx, Store | Backend)

    assert [cls.__bases__ for cls in (SqliteBackend, SqliteTx, PgBackend, PgTx)] == [(object,)] * 4
    assert type(store) is Store and not isinstance(store, Tx)
    assert isinstance(store.backend, Backend) and not isinstance(store.backend, Tx)
    assert await store.transact(is_a_tx)


async def test_another_process_holding_the_write_lock_gives_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "busy.sqlite3"
    async with await open_store(path, busy_timeout_ms=100) as store:
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            with pytest.raises(StoreError, match="locked"):
                await store.transact(_insert_memory)
        finally:
            other.execute("ROLLBACK")
            other.close()
        await store.transact(_insert_memory)  # and it recovers once the lock is gone


async def test_deleting_a_memory_cascades_to_its_vector(store: Store) -> None:
    memory_id = await store.transact(_insert_memory)
    await store.transact(
        lambda tx: tx.execute(
            "INSERT INTO embeddings (memory_id, model, content_hash, dim, vector)"
            " VALUES (?, 'm', ?, 2, ?)",
            (memory_id, HASH, bytes(8)),
        )
    )
    await store.transact(lambda tx: tx.execute("DELETE FROM memories WHERE id = ?", (memory_id,)))
    assert await store.fetchall("SELECT * FROM embeddings") == []


async def test_a_forgotten_memory_id_is_never_given_to_another_memory(store: Store) -> None:
    first = await store.transact(_insert_memory)
    await store.transact(lambda tx: tx.execute("DELETE FROM memories WHERE id = ?", (first,)))
    assert await store.transact(_insert_memory) != first


async def test_a_forgotten_memory_leaves_no_trace_in_the_file(tmp_path: Path) -> None:
    from memory import manage
    from memory.model import Kind, Scope

    path = tmp_path / "erase.sqlite3"
    secret = "Rendez-vous secret chez le notaire Quintavalle"
    async with await open_store(path) as store:
        outcome = await manage.remember(
            store, user_id=1, story_id=5, origin="dm", text=secret, kind=Kind.FACT,
            scope=Scope.GLOBAL, now=1.0,
        )  # fmt: skip
        assert outcome.memory_id is not None
        await manage.forget(store, 1, outcome.memory_id)
        # Read while the database is still open: closing would checkpoint anyway.
        for file in tmp_path.glob("erase.sqlite3*"):
            content = file.read_bytes().lower()
            assert b"quintavalle" not in content and b"notaire" not in content, file.name


async def test_the_store_remembers_which_memories_each_commit_changed(store: Store) -> None:
    from memory.store.generations import CHANGE_LOG

    async def touch(tx: Tx, ids: list[int] | None, vectors_only: bool = False) -> None:
        tx.touch(7, ids, vectors_only=vectors_only)

    start = await store.sync_generation(7)  # a person never seen has no generation here yet
    await store.transact(lambda tx: touch(tx, [1, 2]))
    await store.transact(lambda tx: touch(tx, None, vectors_only=True))
    await store.transact(lambda tx: touch(tx, [3]))
    assert store.changed_since(7, start) == {1, 2, 3}
    assert store.changed_since(7, start + 1) == {3}
    assert store.changed_since(7, start + 2) == {3}
    assert store.changed_since(7, store.generation(7)) == frozenset()
    middle = store.generation(7)
    await store.transact(lambda tx: touch(tx, None))  # a change without ids: unknown
    assert store.changed_since(7, middle) is None
    late = store.generation(7)
    for i in range(CHANGE_LOG + 1):
        await store.transact(lambda tx, i=i: touch(tx, [i]))  # type: ignore[misc]
    assert store.changed_since(7, late) is None  # older than the log: rebuild
    assert store.changed_since(7, store.generation(7) - 1) == {CHANGE_LOG}
