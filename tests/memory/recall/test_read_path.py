"""The read path against a real SQLite file and a loopback server speaking the Ollama API."""

from __future__ import annotations

import asyncio
import time

import httpx

from memory import Engine, MemoryConfig, jobs
from memory.backends.embedders import OllamaEmbedder
from memory.model import Kind, Reason, Scope
from memory.store import Store, Tx
from memory.store.tables import counters, memories, turns
from memory.vectors.indexer import Indexer
from tests.fakes.ollama import FakeOllama

USER, STORY, GUILD = 1, 10, "111"

TEXTS = [
    "Has a ginger cat called Felix",
    "Works as a night nurse in Leeds",
    "Plays the cello in an amateur orchestra",
    "Is afraid of flying since a rough flight",
    "Her brother Paul studies medicine in Toulouse",
]


async def _add(store: Store, text: str, *, user_id: int = USER, now: float = 1.0) -> int:
    async def run(tx: Tx) -> int:
        memory = await memories.insert(
            tx, user_id=user_id, text=text, kind=Kind.FACT, scope=Scope.GLOBAL, story_id=STORY,
            origin=GUILD, confidence=0.9, now=now,
        )  # fmt: skip
        return memory.id

    return await store.transact(run)


def _engine(store: Store, embedder: OllamaEmbedder, timeout: float = 1.0) -> Engine:
    # The threshold is for the fake embedder (random word vectors), not for a real model.
    config = MemoryConfig(threshold=0.5, turn_embedding_timeout=timeout)
    return Engine(store, embedder=embedder, config=config)


async def test_healthy_embeddings_give_semantic_reasons(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ids = [await _add(store, t) for t in TEXTS]
    embedder = OllamaEmbedder(http, ollama.url, "nomic-embed-text")
    assert await Indexer(store, embedder).run_once() == len(TEXTS)
    engine = _engine(store, embedder)
    recall = await engine.recall(
        user_id=USER, story_id=STORY, origin=GUILD, text="my cat Felix is ginger"
    )
    assert not recall.degraded
    semantic = [s for s in recall.selected if s.reason is Reason.SEMANTIC]
    globals_ = [s for s in recall.selected if s.reason is Reason.GLOBAL]
    # Five globals fit in the global quarter: the cat memory, which the message calls for,
    # holds the first place as recalled (with its cosine); the four others come as recalled
    # when the model ranks them among the recall places above the floor (0.10), with their
    # own cosine, else by rank.
    assert len(globals_) + len(semantic) == 5 and semantic[0].memory.id == ids[0]
    cat = semantic[0]
    assert cat.score is not None and cat.score > 0.5
    assert all(s.score is not None and 0.10 <= s.score < cat.score for s in semantic[1:])
    # The query embedded is the message alone: no prefix, no scene.
    assert ollama.embedded_texts()[-1] == "my cat Felix is ginger"


async def test_semantic_pass_beyond_the_global_quarter(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    for i in range(12):
        await _add(store, f"Unrelated fact number {i} about gardening", now=100.0 + i)
    cat = await _add(store, "Has a ginger cat called Felix", now=1.0)
    embedder = OllamaEmbedder(http, ollama.url, "nomic-embed-text")
    await Indexer(store, embedder).run_once()
    recall = await _engine(store, embedder).recall(
        user_id=USER, story_id=STORY, origin=GUILD, text="ginger cat Felix"
    )
    why = {s.memory.id: s for s in recall.selected}
    assert why[cat].reason is Reason.SEMANTIC and why[cat].score is not None

    last = await turns.last(store, USER, STORY)
    assert last is not None and not last.degraded
    assert {s.memory.id: s.reason for s in last.selected} == {
        s.memory.id: s.reason for s in recall.selected
    }


async def test_hanging_embeddings_degrade_the_turn_within_its_timeout(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    memory_id = await _add(store, TEXTS[0])
    ollama.set("/api/embed", "hang")
    engine = _engine(store, OllamaEmbedder(http, ollama.url, "nomic-embed-text"), timeout=1.0)
    started = time.monotonic()
    recall = await engine.recall(user_id=USER, story_id=STORY, origin=GUILD, text="hello")
    elapsed = time.monotonic() - started
    assert recall.degraded and elapsed < 1.0 + 0.5
    assert [s.memory.id for s in recall.selected] == [memory_id]  # served all the same
    assert (await counters.read_all(store))["degraded_turns"] == 1
    memory = await memories.get(store, USER, memory_id)
    # A sleeping server must not look like an ignored memory: nothing was counted.
    assert memory is not None and (memory.candidate_count, memory.served_count) == (0, 0)


async def test_the_timeout_covers_the_wait_for_the_indexer(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    await _add(store, TEXTS[0])
    embedder = OllamaEmbedder(http, ollama.url, "nomic-embed-text")
    ollama.set("/api/embed", "hang")
    indexing = asyncio.ensure_future(Indexer(store, embedder).run_once())
    await asyncio.sleep(0.1)  # the indexer now holds the embedder's lock
    ollama.set("/api/embed", "ok")
    # The indexer's request hangs for good: a turn that waited for it would never end.
    recall = await asyncio.wait_for(
        _engine(store, embedder, timeout=1.0).recall(
            user_id=USER, story_id=STORY, origin=GUILD, text="hello"
        ),
        timeout=30,
    )
    assert recall.degraded
    indexing.cancel()


async def test_500_and_bad_json_degrade_too(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    engine = _engine(store, OllamaEmbedder(http, ollama.url, "nomic-embed-text"))
    for mode in ("500", "badjson", "error"):
        ollama.set("/api/embed", mode)
        recall = await engine.recall(user_id=USER, story_id=STORY, origin=GUILD, text="hi")
        assert recall.degraded, mode
    assert (await counters.read_all(store))["degraded_turns"] == 3


async def test_healthy_turns_count_candidates_and_served(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    memory_id = await _add(store, TEXTS[0])
    engine = _engine(store, OllamaEmbedder(http, ollama.url, "nomic-embed-text"))
    for _ in range(3):
        await engine.recall(user_id=USER, story_id=STORY, origin=GUILD, text="hello")
    memory = await memories.get(store, USER, memory_id)
    assert memory is not None and (memory.candidate_count, memory.served_count) == (3, 3)


async def test_indexer_catches_up_with_only_what_changed(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ids = [await _add(store, t) for t in TEXTS]
    embedder = OllamaEmbedder(http, ollama.url, "nomic-embed-text")
    indexer = Indexer(store, embedder, batch_size=2)

    ollama.set("/api/embed", "500")
    assert await indexer.run_once() == 0
    assert indexer.status().last_error is not None and indexer.status().pending == 5

    ollama.set("/api/embed", "ok")
    ollama.calls.clear()
    assert await indexer.run_once() == 5
    assert ollama.count("/api/embed") == 3  # batches of 2, 2, 1
    assert indexer.status().pending == 0 and indexer.status().last_error is None

    # One memory reworded, one new: exactly those two are embedded again.
    async def reword(tx: Tx) -> None:
        [memory] = [m for m in await memories.merge_pool(tx, USER, STORY, GUILD) if m.id == ids[1]]
        await memories.rewrite(
            tx, memory, text="Works as a night nurse in York", scope=Scope.GLOBAL,
            confidence=0.9, now=5.0,
        )  # fmt: skip

    await store.transact(reword)
    await _add(store, "Collects vinyl records")
    ollama.calls.clear()
    assert await indexer.run_once() == 2
    assert sorted(ollama.embedded_texts()) == [
        "Collects vinyl records",
        "Works as a night nurse in York",
    ]
    ollama.calls.clear()
    assert await indexer.run_once() == 0 and ollama.count("/api/embed") == 0


async def test_changing_the_model_re_embeds_everything(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    for text in TEXTS:
        await _add(store, text)
    await Indexer(store, OllamaEmbedder(http, ollama.url, "model-a")).run_once()
    assert await Indexer(store, OllamaEmbedder(http, ollama.url, "model-b")).run_once() == 5
    rows = await store.fetchall("SELECT DISTINCT model FROM embeddings")
    assert [r[0] for r in rows] == ["model-b"]


async def test_a_memory_forgotten_during_its_batch_is_not_resurrected(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ids = [await _add(store, t) for t in TEXTS[:2]]
    ollama.set("/api/embed", "slow", delay=0.3)
    indexing = asyncio.ensure_future(
        Indexer(store, OllamaEmbedder(http, ollama.url, "nomic-embed-text")).run_once()
    )
    await asyncio.sleep(0.1)
    await store.transact(lambda tx: memories.delete(tx, USER, [ids[0]]))
    assert await indexing == 1
    rows = await store.fetchall("SELECT memory_id FROM embeddings")
    assert [r[0] for r in rows] == [ids[1]]
    assert await memories.get(store, USER, ids[0]) is None


async def test_the_scheduler_runs_the_job_inside_the_loop(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    await _add(store, TEXTS[0])
    indexer = Indexer(store, OllamaEmbedder(http, ollama.url, "nomic-embed-text"))
    background = jobs.start([jobs.Job("reindex", 3600, indexer.run_once)])
    try:
        for _ in range(100):
            if indexer.status().last_run is not None:
                break
            await asyncio.sleep(0.05)
        assert indexer.status().embedded_total == 1
    finally:
        await background.stop()


async def test_a_memory_created_this_turn_is_served_before_it_has_a_vector(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    embedder = OllamaEmbedder(http, ollama.url, "nomic-embed-text")
    for text in TEXTS:
        await _add(store, text)
    await Indexer(store, embedder).run_once()
    fresh = await _add(store, "Just adopted a puppy named Biscuit", now=50.0)
    recall = await _engine(store, embedder).recall(
        user_id=USER, story_id=STORY, origin=GUILD, text="Biscuit the puppy"
    )
    assert fresh in {s.memory.id for s in recall.selected}


async def test_the_pool_is_patched_with_what_changed_and_equals_a_rebuild(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    from memory import manage
    from memory.recall.selection import RankedPool

    ids = [await _add(store, t) for t in TEXTS]
    embedder = OllamaEmbedder(http, ollama.url, "nomic-embed-text")
    engine = _engine(store, embedder)

    async def pool_matches_a_rebuild() -> RankedPool:
        pool, _ = await engine.recaller.pool(USER, STORY, GUILD)
        fresh = await memories.visible(store, USER, STORY, GUILD, counters=False)
        assert pool == RankedPool.build(fresh)
        return pool

    first = await pool_matches_a_rebuild()
    await Indexer(store, embedder).run_once()  # vectors only: the same pool object is kept
    assert await pool_matches_a_rebuild() is first
    await manage.set_pinned(store, USER, ids[3], True)
    assert (await pool_matches_a_rebuild()).ordered[0].id == ids[3]
    await manage.forget(store, USER, ids[0])
    await manage.remember(store, user_id=USER, story_id=STORY, origin=GUILD,
                          text="Keeps bees on the roof", now=5.0)  # fmt: skip
    await _add(store, "Another person's fact", user_id=2)
    pool = await pool_matches_a_rebuild()
    assert ids[0] not in pool.position and len(pool.ordered) == len(TEXTS)
    recall = await engine.recall(user_id=USER, story_id=STORY, origin=GUILD, text="cat Felix")
    assert ids[0] not in {s.memory.id for s in recall.selected}
