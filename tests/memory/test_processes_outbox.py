"""Several processes drain one outbox: every exchange is reflected once, whoever dies.

Two `Store`s opened on one database stand for two processes (each with its own connections,
its own caches and its own chat backend: a loopback fake Ollama each): one SQLite file, or one
PostgreSQL database under `make test-pg` (two pools, their transactions truly concurrent). One
test runs a real second process and SIGKILLs it mid-reflection.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from memory.backends.chat import OllamaChat
from memory.model import Exchange
from memory.store import Store, open_store
from memory.store.tables import counters, outbox
from memory.write.worker import ReflectionWorker
from tests.fakes.ollama import FakeOllama, serve_fake_ollama

ROOT = Path(__file__).resolve().parents[2]
INSTRUMENTS = ["cello", "oboe", "harp", "tuba", "banjo", "viola", "sitar", "flute"]


def exchange(n: int, *, people: int = 8, stories: int = 5) -> Exchange:
    """Exchange n: person n % people in story n % stories; its message carries a marker."""
    user, story = 1 + n % people, 100 + n % stories
    instrument = INSTRUMENTS[n % len(INSTRUMENTS)]
    return Exchange(f"x{n}", user, story, "111", f"P{user}",
                    f"[x{n}] I play the {instrument}", "Lovely!")  # fmt: skip


def reflection_for(payload: dict[str, Any]) -> str:
    """The fake model's reflection: the instrument the message names, as a memory."""
    text = json.dumps(payload["messages"])
    instrument = next(i for i in INSTRUMENTS if f"I play the {i}" in text)
    return json.dumps({
        "memories": [{"text": f"Plays the {instrument}", "kind": "fact", "scope": "global",
                      "confidence": 0.9}],
        "summary": f"Talks about the {instrument}.", "state": {},
    })  # fmt: skip


def marker(payload: dict[str, Any]) -> str:
    text = json.dumps(payload["messages"])
    start = text.index("[x") + 1
    return text[start : text.index("]", start)]


async def queue(store: Store, count: int) -> list[Exchange]:
    exchanges = [exchange(n) for n in range(count)]
    for e in exchanges:
        await store.transact(lambda tx, e=e: outbox.enqueue(tx, e, now=0.0))
    return exchanges


async def events_per_exchange(store: Store) -> Counter[str]:
    """What a double application would show: a second memory event for one exchange."""
    rows = await store.fetchall("SELECT exchange_id FROM memory_events")
    return Counter(str(r[0]) for r in rows)


@pytest.fixture
async def two(shared_database: Path | str) -> AsyncIterator[tuple[Store, Store]]:
    target = shared_database
    async with await open_store(target) as a, await open_store(target) as b:
        yield a, b


@pytest.fixture
async def backends() -> AsyncIterator[tuple[FakeOllama, FakeOllama]]:
    async with serve_fake_ollama() as a, serve_fake_ollama() as b:
        a.chat_reply = b.chat_reply = reflection_for
        yield a, b
        a.released.set()
        b.released.set()


def worker(store: Store, fake: FakeOllama, http: httpx.AsyncClient, **kw: Any) -> ReflectionWorker:
    chat = OllamaChat(http, fake.url, "m")
    return ReflectionWorker(store, chat, character_name="Ash", deadline=10.0, **kw)


@pytest.mark.parametrize("seed", [1, 2])
async def test_two_processes_drain_one_outbox_each_exchange_reflected_once(
    two: tuple[Store, Store], backends: tuple[FakeOllama, FakeOllama],
    http: httpx.AsyncClient, seed: int,
) -> None:  # fmt: skip
    """40 exchanges of 8 people in 5 stories, two workers with random latencies: every
    exchange is sent to a model once and applied once, both workers work, and one person's
    or one story's reflections never run at the same time (each reads what the last wrote)."""
    rng = random.Random(seed)
    (a, b), (fake_a, fake_b) = two, backends
    queued = {e.exchange_id: e for e in await queue(a, 40)}
    in_flight: Counter[str] = Counter()
    overlaps = 0

    async def latency(payload: dict[str, Any]) -> None:
        nonlocal overlaps
        e = queued[marker(payload)]
        keys = [f"user{e.user_id}", f"story{e.story_id}"]
        overlaps += sum(in_flight[k] > 0 for k in keys)
        in_flight.update(keys)
        await asyncio.sleep(rng.uniform(0, 0.02))
        in_flight.subtract(keys)

    fake_a.pause = fake_b.pause = latency
    workers = [worker(a, fake_a, http), worker(b, fake_b, http)]
    applied = [0, 0]

    async def drain(i: int) -> None:
        while await outbox.pending_count(workers[i].store):
            applied[i] += await workers[i].run_due(limit=rng.randint(1, 4))
            await asyncio.sleep(rng.uniform(0, 0.005))

    await asyncio.wait_for(asyncio.gather(drain(0), drain(1)), timeout=60)
    calls = Counter(marker(p) for f in (fake_a, fake_b) for path, p in f.calls
                    if path == "/api/chat")  # fmt: skip
    assert calls == Counter(queued.keys())  # one model call per exchange
    assert await events_per_exchange(a) == Counter(queued.keys())  # one application per exchange
    assert sum(applied) == 40 and min(applied) > 0, applied
    assert overlaps == 0
    assert "reflection_stale_discarded" not in await counters.read_all(b)


@pytest.mark.parametrize("late", ["answer", "failure"])
async def test_a_hung_worker_loses_its_row_after_the_lease_and_its_late_result_is_discarded(
    two: tuple[Store, Store], backends: tuple[FakeOllama, FakeOllama], http: httpx.AsyncClient,
    late: str,
) -> None:  # fmt: skip
    """A's model call hangs past A's lease: B takes the row over and applies it; when A's
    answer (or failure) finally arrives, A writes nothing but a counter, and the exchange was
    applied once."""
    (a, b), (fake_a, fake_b) = two, backends
    await queue(a, 1)
    held, go_on = asyncio.Event(), asyncio.Event()

    async def hang(payload: dict[str, Any]) -> None:
        held.set()
        await go_on.wait()
        if late == "failure":
            raise web.HTTPInternalServerError()

    fake_a.pause = hang
    slow = asyncio.create_task(worker(a, fake_a, http, lease=0.3).run_due())
    await asyncio.wait_for(held.wait(), 10)
    other = worker(b, fake_b, http, lease=0.3)
    assert await other.run_due() == 0  # A's lease still holds the row
    await asyncio.sleep(0.35)
    assert await other.run_due() == 1
    go_on.set()
    assert await slow == 0  # A's late result: discarded
    assert await events_per_exchange(a) == Counter({"x0": 1})
    named = await counters.read_all(a)
    assert named["reflection_stale_discarded"] == 1
    assert named["reflection_failed:LeaseExpired"] == 1
    row = await a.fetchone("SELECT status, attempts, leased_by FROM outbox")
    assert row is not None and tuple(row) == ("done", 1, None)


async def test_a_worker_stopped_mid_reflection_gives_its_row_back_at_once(
    two: tuple[Store, Store], backends: tuple[FakeOllama, FakeOllama], http: httpx.AsyncClient
) -> None:
    """Cancelling A's run (a shutdown) gives the row back: B reflects it without waiting for
    the lease (an hour here), once, and nothing counts it as a failure."""
    (a, b), (fake_a, fake_b) = two, backends
    await queue(a, 1)
    held = asyncio.Event()

    async def hang(payload: dict[str, Any]) -> None:
        held.set()
        await fake_a.released.wait()

    fake_a.pause = hang
    stopped = asyncio.create_task(worker(a, fake_a, http, lease=3600.0).run_due())
    await asyncio.wait_for(held.wait(), 10)
    stopped.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopped
    assert await worker(b, fake_b, http, lease=3600.0).run_due() == 1
    assert await events_per_exchange(b) == Counter({"x0": 1})
    assert not await counters.read_all(b, "reflection_failed")


async def test_a_killed_process_row_is_reflected_by_the_other_after_its_lease(
    shared_database: Path | str, backends: tuple[FakeOllama, FakeOllama], http: httpx.AsyncClient
) -> None:
    """A real second process claims the row and is SIGKILLed while its model call is open:
    this process reflects the row once the lease has ended, not before, and only once."""
    fake_child, fake_here = backends
    target = str(shared_database)
    claimed = asyncio.Event()

    async def hold(payload: dict[str, Any]) -> None:
        claimed.set()
        await fake_child.released.wait()

    fake_child.pause = hold
    async with await open_store(target) as store:
        await queue(store, 1)
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.memory.process_worker", target, fake_child.url,
            "1.5", cwd=ROOT, stdin=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        try:
            await asyncio.wait_for(claimed.wait(), 30)
            killed_at = time.time()
        finally:
            child.send_signal(signal.SIGKILL)
            await child.wait()
        here = worker(store, fake_here, http, lease=1.5)
        assert await here.run_due() == 0  # the dead process's lease still holds the row
        row = await store.fetchone("SELECT lease_until FROM outbox")
        assert row is not None and row[0] > killed_at
        await asyncio.sleep(max(0.0, row[0] - time.time()) + 0.05)
        assert await here.run_due() == 1
        assert await here.run_due() == 0
        assert await events_per_exchange(store) == Counter({"x0": 1})
        assert (await counters.read_all(store))["reflection_failed:LeaseExpired"] == 1
        assert fake_here.count("/api/chat") == 1
