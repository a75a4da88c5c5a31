"""Each process's caches see what another process wrote: a memory forgotten through one is never
served by the other after the forget returned; one remembered or pinned there is served here.

Two engines on two `Store`s opened on one database stand for two processes (one SQLite file, or
one PostgreSQL database under `make test-pg`): their candidate pools, vector matrices and dedup
indexes are their own, only the database is shared.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from memory import Engine, Incoming, MemoryConfig, manage
from memory.backends.chat import OllamaChat
from memory.backends.embedders import OllamaEmbedder
from memory.manage import privacy
from memory.model import Exchange, Reason
from memory.recall.recaller import UNFIT_TTL
from memory.recall.selection import RankedPool
from memory.store import Store, open_store
from memory.store.tables import embeddings, memories, outbox
from memory.store.tables import story_context as context_store
from memory.vectors.indexer import Indexer
from memory.write.worker import ReflectionWorker
from tests.fakes.ollama import FakeOllama

STORY, GUILD = 10, "111"
MODEL = "nomic-embed-text"
TEXTS = [
    "Has a ginger cat called Felix",
    "Works as a night nurse in Leeds",
    "Plays the cello in an amateur orchestra",
    "Is afraid of flying since a rough flight",
]


@pytest.fixture
async def stores(shared_database: Path | str) -> AsyncIterator[tuple[Store, Store]]:
    target = shared_database
    async with await open_store(target) as a, await open_store(target) as b:
        yield a, b


def engine(store: Store, ollama: FakeOllama, http: httpx.AsyncClient) -> Engine:
    # Fixed threshold for the fake embedder's bag-of-words vectors; room for every memory.
    return Engine(
        store, embedder=OllamaEmbedder(http, ollama.url, MODEL),
        chat=OllamaChat(http, ollama.url, "m"),
        config=MemoryConfig(threshold=0.5, relative_sd=None, limit=20),
    )  # fmt: skip


async def remember(store: Store, text: str, user_id: int = 1) -> int:
    outcome = await manage.remember(
        store, user_id=user_id, story_id=STORY, origin=GUILD, text=text, now=1.0
    )
    assert outcome.memory_id is not None
    return outcome.memory_id


async def served(e: Engine, text: str, user_id: int = 1) -> dict[int, Reason]:
    recall = await e.recall(user_id=user_id, story_id=STORY, origin=GUILD, text=text)
    return {s.memory.id: s.reason for s in recall.selected}


async def test_forget_remember_and_pin_through_one_process_reach_the_other(
    stores: tuple[Store, Store], ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    a, b = stores
    ids = [await remember(b, t) for t in TEXTS]
    await Indexer(b, OllamaEmbedder(http, ollama.url, MODEL)).run_once()
    here = engine(a, ollama, http)
    cat = ids[0]

    async def context() -> str:
        preview = await here.preview(user_id=1, user_name="Sam", story_id=STORY, origin=GUILD,
                                     text="ginger cat Felix")  # fmt: skip
        return json.dumps(preview.messages, ensure_ascii=False)

    assert cat in await served(here, "ginger cat Felix")  # A's pool and matrix now hold it
    assert TEXTS[0] in await context()

    await manage.forget(b, 1, cat)  # through the other process
    assert cat not in await served(here, "ginger cat Felix")
    why = await manage.why(a, 1, STORY)
    assert why is not None and cat not in {s.memory.id for s in why.selected}
    assert TEXTS[0] not in await context()
    matrix = await here.vectors.matrix(1, MODEL)
    assert cat not in set(matrix.ids.tolist()) and cat not in matrix.hashes

    kayak = await remember(b, "Paddles a red kayak on the lake")
    assert kayak in await served(here, "red kayak on the lake")
    await manage.set_pinned(b, 1, ids[1], True)
    assert (await served(here, "anything at all"))[ids[1]] is Reason.PINNED


async def test_a_memory_forgotten_elsewhere_is_not_merged_into_by_a_stale_dedup_index(
    stores: tuple[Store, Store], ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """A's worker has the person's dedup index cached; B forgets the memory; A's next
    reflection of the same fact creates it again instead of merging into a deleted row."""
    a, b = stores
    ollama.chat_reply = lambda payload: json.dumps({
        "memories": [{"text": "Plays the cello", "kind": "fact", "scope": "global",
                      "confidence": 0.9}], "summary": "", "state": {},
    })  # fmt: skip
    worker = ReflectionWorker(a, OllamaChat(http, ollama.url, "m"), character_name="Ash")
    for n in (1, 2):
        e = Exchange(f"x{n}", 1, STORY, GUILD, "Sam", "I play the cello", "Nice")
        await a.transact(lambda tx, e=e: outbox.enqueue(tx, e, now=0.0))
        assert await worker.run_due() == 1
        [memory] = await memories.list_for_user(a, 1)
        if n == 1:
            await manage.forget(b, 1, memory.id)
            first = memory.id
    assert memory.id != first and memory.text == "Plays the cello"


async def test_a_message_answered_by_one_process_is_a_replay_for_the_other(
    stores: tuple[Store, Store], ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    a, b = stores
    message = Incoming("m1", 1, "Sam", STORY, GUILD, "Hello there")
    assert await engine(a, ollama, http).turn(message) is not None
    assert await engine(b, ollama, http).turn(message) is None
    assert ollama.count("/api/chat") == 1


async def _truth(store: Store, user_id: int, everywhere: bool) -> RankedPool:
    """What the person's recall here may serve, read from the database now."""
    fresh = await memories.visible(store, user_id, STORY, GUILD, counters=False,
                                   everywhere=everywhere)  # fmt: skip
    return RankedPool.build(fresh)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_random_writes_from_both_processes_each_recall_serves_the_truth(
    stores: tuple[Store, Store], ollama: FakeOllama, http: httpx.AsyncClient, seed: int
) -> None:
    """Remember, forget, pin, change where memories are served and index, from either process
    in a random order; after each, a recall through either process serves only what the
    database holds for that person here, and its pool and matrix equal a fresh build."""
    rng = random.Random(seed)
    engines = [engine(a, ollama, http) for a in stores]
    indexer = Indexer(stores[1], OllamaEmbedder(http, ollama.url, MODEL), batch_size=3)
    everywhere = {1: False, 2: False}
    for step in range(50):
        store = rng.choice(stores)
        user = rng.choice([1, 2])
        mine = await memories.list_for_user(store, user)
        roll = rng.random()
        if roll < 0.35 or not mine:
            origin = rng.choice([GUILD, "222"])
            await manage.remember(store, user_id=user, story_id=STORY, origin=origin,
                                  text=f"Keeps a {rng.choice(TEXTS)} note {step}")  # fmt: skip
        elif roll < 0.6:
            await manage.forget(store, user, rng.choice(mine).id)
        elif roll < 0.75:
            await manage.set_pinned(store, user, rng.choice(mine).id, rng.random() < 0.5)
        elif roll < 0.85:
            everywhere[user] = rng.random() < 0.5
            choice = privacy.EVERYWHERE if everywhere[user] else privacy.WHERE_LEARNED
            await privacy.choose(store, user, choice, default=privacy.WHERE_LEARNED)
        else:
            await indexer.run_once()
        e = rng.choice(engines)
        got = await served(e, f"note {step} cat nurse", user)
        truth = await _truth(store, user, everywhere[user])
        assert set(got) <= set(truth.position), step
        pool, _ = await e.recaller.pool(user, STORY, GUILD)
        assert pool == truth, step
        matrix = await e.vectors.matrix(user, MODEL)
        stored = {int(r[0]): str(r[1]) for r in await embeddings.hashes_of(store, user, MODEL)}
        assert dict(matrix.hashes) == stored, step


async def test_turns_in_one_process_never_serve_what_the_other_forgot_before_they_began(
    stores: tuple[Store, Store], ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """Ten people talk to A while B forgets their memories one by one, at random moments: no
    turn serves a memory whose forget had returned when the turn began."""
    rng = random.Random(7)
    a, b = stores
    people = range(1, 11)
    owned = {p: [await remember(b, t, p) for t in TEXTS] for p in people}
    await Indexer(b, OllamaEmbedder(http, ollama.url, MODEL)).run_once()
    here = engine(a, ollama, http)
    forgotten: set[int] = set()

    async def talk(person: int) -> None:
        await asyncio.sleep(rng.uniform(0, 0.05))
        gone = set(forgotten)  # returned before this turn began
        got = await served(here, "ginger cat nurse cello flying", person)
        assert not gone & set(got)

    async def forget(person: int, memory_id: int) -> None:
        await asyncio.sleep(rng.uniform(0, 0.05))
        await manage.forget(b, person, memory_id)
        forgotten.add(memory_id)

    work = [talk(p) for p in people for _ in range(4)]
    work += [forget(p, m) for p in people for m in rng.sample(owned[p], 2)]
    await asyncio.gather(*work)
    for person in people:
        assert not forgotten & set(await served(here, "ginger cat nurse cello flying", person))


async def test_both_processes_learn_the_token_count_from_every_reply(
    stores: tuple[Store, Store], ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """The token estimator's calibration is shared: five replies, alternately through A and
    B, are five samples in the stored calibration (neither overwrites the other's)."""
    engines = [engine(s, ollama, http) for s in stores]
    for n in range(5):
        message = Incoming(f"m{n}", 1, "Sam", STORY, GUILD, f"Tell me about harbour {n}")
        assert await engines[n % 2].turn(message) is not None
    saved = await context_store.calibration(stores[0], "m")
    assert saved is not None and saved[2] == 5


async def test_the_indexer_in_the_other_process_leaves_the_pools_here_as_they_are(
    stores: tuple[Store, Store], ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """The indexer's commits change vectors only: this process's pool is kept (no rebuild,
    seconds at 100k memories) while its matrix takes the new vectors at once."""
    a, b = stores
    ids = [await remember(b, t) for t in TEXTS]
    here = engine(a, ollama, http)
    assert await served(here, "ginger cat Felix")
    pool, _ = await here.recaller.pool(1, STORY, GUILD)
    await Indexer(b, OllamaEmbedder(http, ollama.url, MODEL)).run_once()
    recall = await here.recall(user_id=1, story_id=STORY, origin=GUILD, text="ginger cat Felix")
    assert (await here.recaller.pool(1, STORY, GUILD))[0] is pool
    assert next(s.score for s in recall.selected if s.memory.id == ids[0]) is not None


async def test_a_calibration_saved_by_another_process_reaches_the_turns_within_a_minute(
    stores: tuple[Store, Store], ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """`echo calibrate` beside a running bot: once it found the model unfit for French, the
    bot's French turns are recalled by keywords only, from the first turn a minute later."""
    from memory.vectors.calibrate import LanguageReport, save_calibration

    a, b = stores
    cat = await remember(b, "A un chat roux nommé Félix")
    embedder = OllamaEmbedder(http, ollama.url, MODEL)
    await Indexer(b, embedder).run_once()
    clock = [1000.0]
    here = Engine(a, embedder=embedder, clock=lambda: clock[0],
                  config=MemoryConfig(threshold=-1.0, relative_sd=None))  # fmt: skip

    async def score() -> float | None:
        recall = await here.recall(user_id=1, story_id=STORY, origin=GUILD,
                                   text="Comment va le chat roux ?")  # fmt: skip
        return next(s.score for s in recall.selected if s.memory.id == cat)

    assert await score() is not None
    unfit = LanguageReport("fr", separation=0.6, paraphrase_mean=0.5, unrelated_mean=0.4,
                           threshold=None, cutoff=0.6)  # fmt: skip
    await save_calibration(b, MODEL, [unfit], now=1.0)
    clock[0] += UNFIT_TTL
    assert await score() is None


async def test_replies_through_both_processes_at_once_are_each_one_sample(
    stores: tuple[Store, Store], ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """Twelve people talk through A and B at the same moment, before any calibration is
    stored: every reply is one sample (two first samples at once, neither overwrites the
    other's; on PostgreSQL the two processes' transactions truly overlap)."""
    rng = random.Random(3)
    engines = [engine(s, ollama, http) for s in stores]

    async def talk(n: int) -> None:
        await asyncio.sleep(rng.uniform(0, 0.02))
        message = Incoming(f"m{n}", n, "Sam", STORY + n, GUILD, f"Tell me about harbour {n}")
        assert await engines[n % 2].turn(message) is not None

    await asyncio.gather(*(talk(n) for n in range(1, 13)))
    saved = await context_store.calibration(stores[0], "m")
    assert saved is not None and saved[2] == 12
