"""The vector matrix follows the indexer: a memory embedded between two turns is scored by the
second, alone or with many turns at once; a patched matrix equals one built from scratch."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import numpy as np
import pytest

from memory import Engine, MemoryConfig, manage
from memory.backends.embedders import OllamaEmbedder
from memory.manage import privacy
from memory.recall.semantic import VectorCache
from memory.store import Store
from memory.store.tables import embeddings
from memory.vectors.indexer import Indexer
from memory.vectors.prefixes import Prefixed, TaskPrefixes
from tests.fakes.ollama import FakeOllama

STORY, GUILD = 10, "111"
MODEL = "nomic-embed-text"

TEXTS = [
    "Has a ginger cat called Felix",
    "Works as a night nurse in Leeds",
    "Plays the cello in an amateur orchestra",
    "Is afraid of flying since a rough flight",
    "Her brother Paul studies medicine in Toulouse",
]


async def _remember(store: Store, user_id: int, text: str) -> int:
    outcome = await manage.remember(
        store, user_id=user_id, story_id=STORY, origin=GUILD, text=text, now=1.0
    )
    assert outcome.memory_id is not None
    return outcome.memory_id


def _engine(store: Store, embedder: OllamaEmbedder) -> Engine:
    # Fixed threshold for the fake embedder's bag-of-words vectors.
    return Engine(store, embedder=embedder, config=MemoryConfig(threshold=0.5, relative_sd=None))


async def _score(engine: Engine, user_id: int, memory_id: int, text: str) -> float | None:
    recall = await engine.recall(user_id=user_id, story_id=STORY, origin=GUILD, text=text)
    assert not recall.degraded
    return next((s.score for s in recall.selected if s.memory.id == memory_id), None)


async def test_the_turn_after_the_indexer_scores_the_new_memory(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    embedder = OllamaEmbedder(http, ollama.url, MODEL)
    indexer = Indexer(store, embedder)
    for text in TEXTS:
        await _remember(store, 1, text)
    await indexer.run_once()
    engine = _engine(store, embedder)
    await _score(engine, 1, 1, "ginger cat Felix")  # the matrix is built and cached

    puppy = await _remember(store, 1, "Just adopted a puppy named Biscuit")
    query = "adopted a puppy named Biscuit"
    assert await _score(engine, 1, puppy, query) is None  # no vector yet
    assert await indexer.run_once() == 1
    score = await _score(engine, 1, puppy, query)
    assert score is not None and score > 0.5


async def test_many_people_at_once_each_next_turn_scores_what_was_just_indexed(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    embedder = OllamaEmbedder(http, ollama.url, MODEL)
    indexer = Indexer(store, embedder, batch_size=3)
    engine = _engine(store, embedder)
    people = range(1, 11)
    for person in people:
        for text in TEXTS:
            await _remember(store, person, text)
    await indexer.run_once()
    await asyncio.gather(*(_score(engine, p, 1, "cat Felix") for p in people))

    for round_ in range(3):
        words = f"kayak{round_} lagoon{round_}"
        new = await asyncio.gather(
            *(_remember(store, p, f"Paddles a {words} with person {p}") for p in people)
        )
        # Turns keep coming while the indexer writes, two per person at a time.
        during = asyncio.gather(*(_score(engine, p, 1, "cat Felix") for p in people for _ in "ab"))
        await asyncio.gather(indexer.run_once(), during)
        pairs = list(zip(people, new, strict=True))
        scores = await asyncio.gather(
            *(_score(engine, p, m, f"paddles {words} with person {p}") for p, m in pairs),
            *(_score(engine, p, m, f"a {words} with person {p}") for p, m in pairs),
        )
        assert all(s is not None and s > 0.5 for s in scores), (round_, scores)


async def test_a_patched_matrix_equals_one_built_from_scratch(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    bare = OllamaEmbedder(http, ollama.url, MODEL)
    prefixed = Prefixed(bare, TaskPrefixes("search_query: ", "search_document: "))
    cache = VectorCache(store)
    rng = random.Random(15)
    alive: dict[int, list[int]] = {1: [], 2: []}
    for step in range(60):
        user = rng.choice([1, 2])
        action = rng.random()
        if action < 0.45 or not alive[user]:
            text = f"fact {step} about {rng.choice(['boats', 'cats', 'tea', 'rain'])}"
            memory_id = await _remember(store, user, text)  # may merge into a similar one
            if memory_id not in alive[user]:
                alive[user].append(memory_id)
        elif action < 0.65:
            victim = alive[user].pop(rng.randrange(len(alive[user])))
            await manage.forget(store, user, victim)
        elif action < 0.9:
            await Indexer(store, bare, batch_size=4).run_once()
        else:  # another document prefix: every vector is rewritten in place
            await Indexer(store, rng.choice([bare, prefixed]), batch_size=7).run_once()
        for person in (1, 2):
            if rng.random() < 0.5:
                continue
            patched = await cache.matrix(person, MODEL)
            fresh = await VectorCache(store).matrix(person, MODEL)
            assert patched.ids.tolist() == fresh.ids.tolist(), step
            assert np.array_equal(patched.rows, fresh.rows), step
            assert patched.generation == fresh.generation


async def test_the_matrix_follows_what_changed_without_reading_every_vector_again(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After a memory written, embedded or forgotten, the next turn reads those memories' vectors
    # only: at 100k memories, listing every hash again made a turn wait on a rebuild for seconds.
    embedder = OllamaEmbedder(http, ollama.url, MODEL)
    indexer = Indexer(store, embedder)
    ids = [await _remember(store, 1, text) for text in TEXTS]
    await indexer.run_once()
    cache = VectorCache(store)
    await cache.matrix(1, MODEL)
    listings = 0
    listed = embeddings.hashes_of

    async def counted(*args: Any) -> Any:
        nonlocal listings
        listings += 1
        return await listed(*args)

    monkeypatch.setattr(embeddings, "hashes_of", counted)
    puppy = await _remember(store, 1, "Just adopted a puppy named Biscuit")
    await indexer.run_once()
    await manage.forget(store, 1, ids[0])
    patched = await cache.matrix(1, MODEL)
    fresh = await VectorCache(store).matrix(1, MODEL)
    assert listings == 1  # the fresh cache's own build, not the patch
    assert puppy in patched.ids.tolist() and ids[0] not in patched.ids.tolist()
    assert patched.ids.tolist() == fresh.ids.tolist()
    assert np.array_equal(patched.rows, fresh.rows)
    # A change that names no memory (where memories may be used) reads every hash again.
    await privacy.choose(store, 1, "everywhere", default="where_learned")
    await cache.matrix(1, MODEL)
    assert listings == 2
