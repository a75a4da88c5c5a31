"""What the process keeps per person stays under the caches' bound however many people it has
seen: the idle ones leave every per-person structure, and what they are served next, rebuilt
from the database, is what an unbounded process serves."""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from memory import Engine, Incoming, MemoryConfig, manage
from memory.backends.chat import ChatResult, Message
from memory.store import Store
from memory.vectors.indexer import Indexer
from memory.write.worker import ReflectionWorker

GUILD = "111"
SHARED_STORY = 10
# Room for a few people's pools, matrices, dedup indexes and generations at once.
TINY = 40_000
_MARK = re.compile(r"graines (\d+)-(\d+)")


class Chat:
    """A chat backend answering at once or after a random pause; a reflection keeps one memory
    of the person's message, named by the message's mark."""

    model = "fake-chat"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng

    async def chat(
        self, messages: Sequence[Message], *, schema: Mapping[str, Any] | None = None,
        deadline: float, max_tokens: int | None = None,
    ) -> ChatResult:  # fmt: skip
        if self.rng is not None:
            await asyncio.sleep(self.rng.random() / 200)
        if schema is None:
            return ChatResult("Je vois.")
        person, n = _MARK.findall(messages[-1]["content"])[-1]
        memory = {"text": f"Garde les graines numéro {n} de la variété {person} au grenier",
                  "kind": "fact", "scope": "global", "confidence": 0.95}  # fmt: skip
        return ChatResult(f'{{"memories": [{_json(memory)}], "summary": ""}}')


def _json(value: dict[str, Any]) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


class Embedder:
    """Bag-of-words vectors: texts sharing words are near."""

    model = "fake-embed"

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        out = []
        for text in texts:
            vector = [0.0] * 32
            for word in re.findall(r"\w+", text.casefold()):
                vector[hashlib.sha256(word.encode()).digest()[0] % 32] += 1.0
            out.append(vector)
        return out


def _say(person: int, story: int, n: int, key: int) -> Incoming:
    return Incoming(
        f"t:{person}:{story}:{n}", person, f"p{key}", story, GUILD,
        f"J'ai rangé les graines {key}-{n} au grenier ce matin.",
    )  # fmt: skip


def _holders(engine: Engine, worker: ReflectionWorker) -> dict[str, set[int]]:
    """The people each per-person structure of the engine, the worker and the store holds."""
    return {
        "pools": {key[0] for key in engine.recaller._pools},
        "matrices": set(engine.vectors._matrices),
        "matrix updates": {key[0] for key in engine.vectors._updating},
        "dedup indexes": {key[0] for key in worker.indexes._entries},
        "generations": set(engine.store.generations._people),
        "admission lines": {key[0] for key in engine.admission._lines},
        "admission people": set(engine.admission._people),
        "greetings due": {key[1] for key in engine.greetings._due},
    }


async def _drain(worker: ReflectionWorker, indexer: Indexer) -> None:
    while await worker.run_due(limit=50):
        pass
    await indexer.run_once()


@pytest.mark.slow
async def test_idle_people_leave_every_per_person_structure(store: Store) -> None:
    engine = Engine(store, embedder=Embedder(), chat=Chat(), config=MemoryConfig(threshold=0.3))
    engine.caches.limit = TINY
    worker = ReflectionWorker(store, Chat(), character_name="Écho", caches=engine.caches)
    indexer = Indexer(store, engine.embedder)  # type: ignore[arg-type]
    people = range(1, 161)
    for group in range(0, len(people), 40):
        batch = people[group : group + 40]
        # Half in a story they share, half in their own (a DM's worth of pool and index).
        await asyncio.gather(*(engine.turn(_say(p, SHARED_STORY if p % 2 else 1000 + p, 1, p))
                               for p in batch))  # fmt: skip
        await _drain(worker, indexer)
    held = _holders(engine, worker)
    everyone = set().union(*held.values())
    # Only the last few people are held anywhere: the first 120 left every structure.
    assert everyone <= set(people[-40:]), {k: sorted(v)[:5] for k, v in held.items()}
    assert len(held["generations"]) < 40 and engine.caches.total <= TINY
    # One of the first, speaking again, is served what the database holds.
    recall = await engine.recall(user_id=2, story_id=1002, origin=GUILD, text="graines 2-1")
    assert [s.memory.text for s in recall.selected] == [
        m.text for m in await manage.list_memories(store, 2)
    ]
    assert len(recall.selected) == 1


async def _scenario(store: Store, *, first: int, bound: int | None, seed: int) -> dict[int, Any]:
    """Twenty people talk at once in a shared story and their own (random latencies), the
    worker reflects meanwhile; then each forgets their oldest memory and asks again. Return,
    per person (numbered from 0), their memories' texts and what each recall served."""
    rng = random.Random(seed)
    engine = Engine(store, embedder=Embedder(), chat=Chat(rng), config=MemoryConfig(threshold=0.3))
    if bound is not None:
        engine.caches.limit = bound
    worker = ReflectionWorker(store, Chat(rng), character_name="Écho", caches=engine.caches)
    indexer = Indexer(store, engine.embedder)  # type: ignore[arg-type]
    shared = SHARED_STORY + first
    people = range(first, first + 20)
    talking = True

    async def reflect() -> None:
        while talking:
            await worker.run_due(limit=3)
            await indexer.run_once()
            await asyncio.sleep(rng.random() / 100)

    async def recall(person: int, story: int, text: str) -> list[str]:
        await asyncio.sleep(rng.random() / 200)
        found = await engine.recall(user_id=person, story_id=story, origin=GUILD, text=text)
        return sorted(s.memory.text for s in found.selected)

    async def talk(person: int) -> None:
        key = person - first
        for n in range(4):
            await asyncio.sleep(rng.random() / 100)
            story = shared if n % 2 else 1000 + person
            await engine.turn(_say(person, story, n, key))

    background = asyncio.create_task(reflect())
    await asyncio.gather(*(talk(p) for p in people))
    talking = False
    await background
    await _drain(worker, indexer)
    seen: dict[int, Any] = {}

    async def after(person: int) -> None:
        key = person - first
        before = await recall(person, 1000 + person, f"graines {key}")
        oldest = min(await manage.list_memories(store, person), key=lambda m: m.id)
        await manage.forget(store, person, oldest.id)
        later = [await recall(person, s, f"graines {key}-3") for s in (shared, 1000 + person)]
        texts = sorted(m.text for m in await manage.list_memories(store, person))
        seen[key] = (texts, before, later)

    await asyncio.gather(*(after(p) for p in people))
    if bound is not None:
        assert engine.caches.evictions > 0  # the bound was felt
        assert len(store.generations._people) < len(people)
    return seen


@pytest.mark.slow
async def test_people_talking_at_once_under_a_tiny_bound_are_served_as_without_one(
    store: Store,
) -> None:
    unbounded = await _scenario(store, first=1, bound=None, seed=5)
    bounded = await _scenario(store, first=101, bound=TINY, seed=6)
    assert all(len(texts) == 3 for texts, _, _ in unbounded.values())
    assert bounded == unbounded
