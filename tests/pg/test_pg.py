"""What only PostgreSQL has: several processes on one database, VACUUM after an erasure, the
refusal of a newer schema through the advisory-locked migration. Run by `make test-pg`."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import asyncpg
import httpx
import pytest

from memory.backends.embedders import OllamaEmbedder
from memory.errors import MigrationError
from memory.manage import forgetting
from memory.model import Kind, Memory, Reason, Scope, Selected
from memory.store import Store, Tx, open_store
from memory.store.migrations import LATEST
from memory.store.postgres.store import _MIGRATION_LOCK
from memory.store.tables import history, memories, turns
from memory.vectors.indexer import Indexer
from tests.fakes import canary
from tests.fakes.ollama import FakeOllama

USER, STORY, GUILD = 1, 10, "111"
CANARY = "ZQXCANARY4242"


async def _add(store: Store, text: str) -> int:
    async def run(tx: Tx) -> int:
        memory = await memories.insert(
            tx, user_id=USER, text=text, kind=Kind.FACT, scope=Scope.GLOBAL, story_id=STORY,
            origin=GUILD, confidence=0.9, now=1.0,
        )  # fmt: skip
        return memory.id

    return await store.transact(run)


async def test_one_process_at_a_time_runs_the_indexer(
    store: Store, url: str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    await _add(store, "I keep bees on the roof")
    async with await open_store(url) as other:
        embedder = OllamaEmbedder(http, ollama.url, "nomic-embed-text")
        async with store.exclusive("indexer") as ours:
            assert ours
            assert await Indexer(other, embedder).run_once() == 0
            async with other.exclusive("indexer") as theirs:
                assert not theirs
        assert await Indexer(other, embedder).run_once() == 1
        assert await Indexer(store, embedder).run_once() == 0


async def test_a_schema_newer_than_the_code_is_refused(store: Store, url: str) -> None:
    await store.transact(
        lambda tx: tx.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", (LATEST + 1, 0.0)
        )
    )
    with pytest.raises(MigrationError, match="newer than this program"):
        await open_store(url)


async def test_a_forgotten_memory_leaves_no_word_in_any_live_row(
    store: Store, url: str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    memory_id = await _add(store, f"my locker code is {CANARY}")
    await Indexer(store, OllamaEmbedder(http, ollama.url, "nomic-embed-text")).run_once()
    assert CANARY.lower() in await canary.rows_text(store)
    before = await _vacuums(url, "memories", "embeddings")

    forgotten = await forgetting.forget_memory(store, USER, memory_id)

    assert forgotten.complete
    assert CANARY.lower() not in await canary.rows_text(store)
    # The dead row versions of the memory and of its vector (and its text's hash) are gone.
    after = await _vacuums(url, "memories", "embeddings")
    assert all(after[t] > before[t] for t in before), (before, after)
    # Vacuumed: no transaction that began before the erasure holds the dead row's version.
    assert await store.checkpoint()


async def _vacuums(url: str, *tables: str) -> dict[str, int]:
    """How many times each table was vacuumed (the statistics' count)."""
    conn = await asyncpg.connect(url)
    try:
        query = "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = $1"
        return {t: int(await conn.fetchval(query, t)) for t in tables}
    finally:
        await conn.close()


async def test_a_forgotten_message_leaves_no_dead_row_of_the_words_that_recalled_a_memory(
    store: Store, url: str
) -> None:
    """A turn recorded the words of the message that recalled a memory by keyword (for /why);
    forgetting the message blanks them (the memory, learned before, stays), and the vacuum that
    completes the erasure removes the row version that held them, as it does the message's."""

    async def said(tx: Tx) -> int | None:
        return await history.add_user_message(
            tx, source_id="discord:7", story_id=STORY, user_id=USER, author_name="Alice",
            content=f"is {CANARY} still my locker code?", now=1.0,
        )  # fmt: skip

    async def kept(tx: Tx) -> Memory:
        return await memories.insert(
            tx, user_id=USER, text=f"Alice's locker code is {CANARY}", kind=Kind.FACT,
            scope=Scope.GLOBAL, story_id=STORY, origin=GUILD, confidence=0.9, now=1.0,
        )  # fmt: skip

    await store.transact(said)
    memory = await store.transact(kept)
    where = turns.TurnRecord(USER, STORY, GUILD)
    recalled = Selected(memory, Reason.SEMANTIC, 0.5, (CANARY.lower(),))
    await turns.record(store, where, [recalled], degraded=False, now=2.0)
    before = await _vacuums(url, "turns", "turn_selections")
    message = await history.by_source(store, "discord:7")
    report = await forgetting.forget_message(store, message, actor_id=USER, engine=None)
    after = await _vacuums(url, "turns", "turn_selections")
    matched = await store.fetchall("SELECT matched FROM turn_selections")
    assert report.complete
    assert [r["matched"] for r in matched] == [""]  # the memory stays: another message said it
    assert all(after[t] > before[t] for t in before), (before, after)


async def test_an_erasure_stays_pending_while_an_older_snapshot_could_read_it(
    store: Store, url: str
) -> None:
    async with await open_store(url) as other:
        pool = other.backend._pool  # type: ignore[attr-defined]
        async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            await conn.fetch("SELECT count(*) FROM memories")
            time.sleep(0.01)
            assert not await store.checkpoint()
    assert await store.checkpoint()


async def test_a_process_opening_while_another_migrates_waits_past_its_lock_timeout(
    database: Path | str,
) -> None:
    """A shard starting while another migrates a large database waits for the migration,
    however long it takes, not only its lock timeout (here 0.1 s), then finds it done."""
    if not str(database).startswith("postgresql"):
        pytest.skip("PostgreSQL only (ECHO_TEST_BACKEND=postgres)")
    holder = await asyncpg.connect(str(database))
    try:
        await holder.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
        opening = asyncio.create_task(open_store(database, busy_timeout_ms=100))
        await asyncio.sleep(0.5)
        assert not opening.done()
        await holder.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)
        async with await asyncio.wait_for(opening, 60) as opened:
            assert await opened.schema_version() == LATEST
    finally:
        await holder.close()
