"""One person's heavy memory work never holds the event loop: their pool build, matrix load and
dedup index build run in worker threads (or another process: test_dedup_pool.py) while
everyone else's turns complete; a first turn whose matrix is too large to wait for is served
without it, counted, and the next one has it.

Each heavy function is held on a gate for one person's data only (in whatever thread runs it):
if it ran on the loop, nobody else's turn could complete until the gate's timeout.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from memory import Engine, MemoryConfig, manage
from memory.manage import privacy
from memory.model import Candidate, Exchange, Kind, Scope
from memory.recall import selection, semantic
from memory.store import Store, Tx
from memory.store.tables import memories
from memory.text import words
from memory.vectors import cosines
from memory.vectors.indexer import Indexer
from memory.write import apply
from memory.write.reflection import Reflection

HEAVY, STORY, GUILD = 1, 10, "111"
CROWD = range(100, 120)
# Word for word one of the heavy person's memories: its cosine clears any threshold.
CLOSE = "Plays tango on day 6"
TOPICS = ("cello", "kayak", "garden", "chess", "bakery", "lighthouse", "tango", "comets")


class Embedder:
    """Bag-of-words vectors, each call after a random latency (the crowd's turns interleave)."""

    model = "words"

    def __init__(self, seed: int = 0, latency: float = 0.0) -> None:
        self.rng = random.Random(seed)
        self.latency = latency

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        await asyncio.sleep(self.rng.uniform(0, self.latency))
        return [_vector(t) for t in texts]


def _vector(text: str) -> list[float]:
    vector = [0.01] * 64
    for word in words(text):
        vector[hashlib.sha256(word.encode()).digest()[0] % 64] += 1.0
    return vector


class Gate:
    """Holds a function for one person's data until opened; notes the threads it ran in."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.threads: list[int] = []

    def wrap(self, fn: Callable[..., Any], concerns: Callable[..., bool]) -> Callable[..., Any]:
        def gated(*args: Any) -> Any:
            if concerns(*args):
                self.threads.append(threading.get_ident())
                self.entered.set()
                self.opened.wait(10)  # on the loop, this would freeze everyone for 10 s
            return fn(*args)

        return gated

    async def held(self) -> None:
        for _ in range(1_000):
            if self.entered.is_set():
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the gated function never ran")


async def _fill(store: Store, user_id: int, n: int) -> list[int]:
    async def run(tx: Tx) -> list[int]:
        ids = []
        for i in range(n):
            memory = await memories.insert(
                tx, user_id=user_id, text=f"Plays {TOPICS[i % len(TOPICS)]} on day {i}",
                kind=Kind.FACT, scope=Scope.GLOBAL, story_id=STORY, origin=GUILD,
                confidence=0.9, now=float(i),
            )  # fmt: skip
            ids.append(memory.id)
        return ids

    return await store.transact(run)


async def _engine(store: Store, latency: float = 0.05) -> Engine:
    for person in (HEAVY, *CROWD):
        await _fill(store, person, 40 if person == HEAVY else 6)
    embedder = Embedder(seed=21, latency=latency)
    await Indexer(store, embedder).run_once()
    return Engine(store, embedder=embedder, config=MemoryConfig(threshold=0.5, relative_sd=None))


async def _crowd_served(engine: Engine, heavy: asyncio.Future[Any]) -> None:
    """Everyone else's turns, at once, complete while the heavy person's work is held."""
    recalls = await asyncio.gather(
        *(engine.recall(user_id=p, story_id=STORY, origin=GUILD, text="tango comets")
          for p in CROWD)
    )  # fmt: skip
    assert not heavy.done()
    for person, recall in zip(CROWD, recalls, strict=True):
        assert recall.selected and {s.memory.user_id for s in recall.selected} == {person}


def _heavy_recall(engine: Engine) -> asyncio.Task[Any]:
    return asyncio.ensure_future(
        engine.recall(user_id=HEAVY, story_id=STORY, origin=GUILD, text=CLOSE)
    )


async def test_a_pool_build_runs_off_the_loop(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = await _engine(store)
    gate = Gate()
    build = gate.wrap(selection.RankedPool.build, lambda ms: any(m.user_id == HEAVY for m in ms))
    monkeypatch.setattr(selection.RankedPool, "build", build)
    heavy = _heavy_recall(engine)
    await gate.held()
    await _crowd_served(engine, heavy)
    gate.opened.set()
    recall = await heavy
    assert {s.memory.user_id for s in recall.selected} == {HEAVY}
    assert threading.get_ident() not in gate.threads


async def test_a_matrix_load_runs_off_the_loop(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = await _engine(store)
    heavy_ids = {m.id for m in await memories.list_for_user(store, HEAVY)}
    gate = Gate()
    build = gate.wrap(semantic._build, lambda g, m, rows, h: any(r[0] in heavy_ids for r in rows))
    monkeypatch.setattr(semantic, "_build", build)
    heavy = _heavy_recall(engine)
    await gate.held()
    await _crowd_served(engine, heavy)
    gate.opened.set()
    recall = await heavy  # a small matrix: the turn waited for it and used it
    assert any(s.score is not None for s in recall.selected)
    assert threading.get_ident() not in gate.threads


async def test_a_turns_pass_over_the_matrix_runs_off_the_loop(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = await _engine(store)
    heavy_ids = {m.id for m in await memories.list_for_user(store, HEAVY)}
    await engine.vectors.matrix(HEAVY, "words")  # loaded: only the scoring pass is held
    gate = Gate()
    scoring = gate.wrap(cosines.eligible, lambda ids, *_: bool(heavy_ids & set(ids.tolist())))
    monkeypatch.setattr(cosines, "eligible", scoring)
    heavy = asyncio.ensure_future(engine.recall(
        user_id=HEAVY, story_id=STORY, origin=GUILD, text=CLOSE,
        earlier=["What do I do on weekends?"],  # two queries: the message and the conversation
    ))  # fmt: skip
    await gate.held()
    await _crowd_served(engine, heavy)
    gate.opened.set()
    recall = await heavy
    assert any(s.score is not None for s in recall.selected)
    assert threading.get_ident() not in gate.threads


async def test_a_large_first_load_serves_the_turn_without_it_and_counts_it(store: Store) -> None:
    engine = await _engine(store, latency=0.0)
    engine.vectors.wait_rows = 10  # the heavy person's 40 vectors are "too many to wait for"
    first = await engine.recall(user_id=HEAVY, story_id=STORY, origin=GUILD, text="tango comets")
    assert not first.degraded and first.selected  # keywords and the deterministic passes
    assert all(s.score is None for s in first.selected)  # no cosine: no matrix
    assert engine.status().turns_before_vectors == 1
    await engine.vectors.matrix(HEAVY, "words")  # what the background load was doing
    second = await engine.recall(user_id=HEAVY, story_id=STORY, origin=GUILD, text=CLOSE)
    assert any(s.score is not None for s in second.selected)
    assert engine.status().turns_before_vectors == 1
    # A memory embedded since is a small patch: the very next turn waits for it and scores it.
    [fresh] = await _fill(store, HEAVY, 1)
    await Indexer(store, engine.embedder).run_once()  # type: ignore[arg-type]
    third = await engine.recall(user_id=HEAVY, story_id=STORY, origin=GUILD, text="Plays cello")
    assert any(s.memory.id == fresh and s.score is not None for s in third.selected)
    assert engine.status().turns_before_vectors == 1


async def test_start_up_warms_the_caches_of_recently_active_people(store: Store) -> None:
    engine = await _engine(store, latency=0.0)
    await engine.recall(user_id=HEAVY, story_id=STORY, origin=GUILD, text="hello")  # a turn
    restarted = Engine(store, embedder=engine.embedder, config=engine.config)
    restarted.vectors.wait_rows = 0  # no load is small enough to wait for
    assert await restarted.warm_up() == 1
    assert await restarted.warm_up() == 0  # the background started again (a login retried)
    recall = await restarted.recall(user_id=HEAVY, story_id=STORY, origin=GUILD, text=CLOSE)
    assert any(s.score is not None for s in recall.selected)
    assert restarted.status().turns_before_vectors == 0


def _reflection(text: str) -> tuple[Exchange, Reflection]:
    exchange = Exchange("x:1", HEAVY, STORY, GUILD, "Sam", f"I told you: {text}", "Nice.")
    candidate = Candidate(text, Kind.FACT, Scope.GLOBAL, confidence=0.9)
    return exchange, Reflection(candidates=(candidate,))


@pytest.mark.parametrize("meanwhile", ["forget", "privacy"])
async def test_a_dedup_index_is_built_off_the_loop_and_outside_the_write(
    store: Store, monkeypatch: pytest.MonkeyPatch, meanwhile: str
) -> None:
    engine = await _engine(store)
    target = (await memories.list_for_user(store, HEAVY))[-1]
    gate = Gate()
    # Without the worker's builder (another process: tests/memory/test_dedup_pool.py), the
    # index is built in a worker thread.
    build = gate.wrap(apply.build_in_thread, lambda s: len(s) and s.memory(0).user_id == HEAVY)
    monkeypatch.setattr(apply, "build_in_thread", build)
    exchange, reflection = _reflection(target.text + " every week")  # a variant: would merge
    heavy = asyncio.ensure_future(
        apply.apply_reflection(store, exchange, reflection, character_name="Echo", now=99.0)
    )
    await gate.held()
    await _crowd_served(engine, heavy)
    # The write lock is free while the index builds: the person's own changes go through.
    await manage.forget(store, HEAVY, target.id)
    if meanwhile == "privacy":  # a change that names no memory: the index is built again
        await privacy.choose(store, HEAVY, "everywhere", default="where_learned")
    assert not heavy.done()
    gate.opened.set()
    report = await heavy
    [outcome] = report.outcomes
    # The forgotten memory is not merged into (and so not brought back): a new one is created.
    assert outcome.action == "created" and outcome.memory_id != target.id
    assert await memories.get(store, HEAVY, target.id) is None
    assert len(gate.threads) == (2 if meanwhile == "privacy" else 1)
    assert threading.get_ident() not in gate.threads
