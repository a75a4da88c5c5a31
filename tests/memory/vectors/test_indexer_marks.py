"""The indexer reads what the write path marked, not every memory: an idle pass embeds nothing;
memories written before the marks existed, or checked against another model, are found once;
a memory reworded while its batch was in flight keeps its mark and gets its new vector."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from memory.backends.embedders import OllamaEmbedder
from memory.model import Kind, Scope
from memory.store import Store, Tx, open_store
from memory.store.tables import memories
from memory.vectors.indexer import Indexer, vector_hash
from tests.fakes.ollama import FakeOllama

USER, STORY, GUILD = 1, 10, "111"
MODEL = "nomic-embed-text"


async def _due(store: Store) -> list[int]:
    return [int(r[0]) for r in await store.fetchall("SELECT memory_id FROM vectors_due")]


async def _add(store: Store, text: str) -> int:
    async def run(tx: Tx) -> int:
        memory = await memories.insert(
            tx, user_id=USER, text=text, kind=Kind.FACT, scope=Scope.GLOBAL, story_id=STORY,
            origin=GUILD, confidence=0.9, now=1.0,
        )  # fmt: skip
        return memory.id

    return await store.transact(run)


async def test_memories_written_before_the_marks_are_checked_once(
    database: Path | str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    path = database
    async with await open_store(path, migrate_to=14) as old:

        async def run(tx: Tx) -> None:
            for i, text in enumerate(("Keeps bees", "Sails on Sundays", "Bakes rye bread"), 1):
                await tx.execute(
                    "INSERT INTO memories (id, user_id, scope, origin, kind, text, confidence,"
                    " created_at, updated_at, content_hash) VALUES (?, 1, 'global', ?, 'fact',"
                    " ?, 1, 0, 0, ?)",
                    (i, GUILD, text, "0" * 64),
                )
            # The first one already has its current vector: it is not embedded again.
            await tx.execute(
                "INSERT INTO embeddings (memory_id, model, content_hash, dim, vector)"
                " VALUES (1, ?, ?, 1, ?)",
                (MODEL, vector_hash(MODEL, "Keeps bees"), bytes(4)),
            )

        await old.transact(run)
    async with await open_store(path) as store:
        assert await _due(store) == []  # the migration marks nothing: the first pass checks
        indexer = Indexer(store, OllamaEmbedder(http, ollama.url, MODEL))
        assert await indexer.run_once() == 2
        assert sorted(ollama.embedded_texts()) == ["Bakes rye bread", "Sails on Sundays"]
        ollama.calls.clear()
        assert await indexer.run_once() == 0 and ollama.count("/api/embed") == 0
        assert await _due(store) == [] and indexer.status().pending == 0


async def test_a_memory_reworded_during_its_batch_keeps_its_mark(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    memory_id = await _add(store, "Works as a night nurse in Leeds")
    indexer = Indexer(store, OllamaEmbedder(http, ollama.url, MODEL))
    ollama.set("/api/embed", "slow", delay=0.3)
    indexing = asyncio.ensure_future(indexer.run_once())
    await asyncio.sleep(0.1)

    async def reword(tx: Tx) -> None:
        memory = await memories.get(store, USER, memory_id)
        assert memory is not None
        await memories.rewrite(
            tx, memory, text="Works as a night nurse in York", scope=Scope.GLOBAL,
            confidence=0.9, now=2.0,
        )  # fmt: skip

    await store.transact(reword)
    assert await indexing == 0  # the vector of the old wording is not written
    assert await _due(store) == [memory_id]
    ollama.set("/api/embed", "ok")
    ollama.calls.clear()
    assert await indexer.run_once() == 1
    assert ollama.embedded_texts() == ["Works as a night nurse in York"]
    assert await _due(store) == []


async def test_forgetting_a_memory_drops_its_mark(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    kept, forgotten = await _add(store, "Keeps bees"), await _add(store, "Sails on Sundays")
    assert await _due(store) == [kept, forgotten]
    await store.transact(lambda tx: memories.delete(tx, USER, [forgotten]))
    assert await _due(store) == [kept]
    assert await Indexer(store, OllamaEmbedder(http, ollama.url, MODEL)).run_once() == 1
