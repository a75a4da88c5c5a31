"""memory.jobs.Background: one run of a job at a time, and a stop that ends the runs under way
(a reflection's outbox row given back before `stop` returns), with many jobs at once."""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Callable
from typing import Any

import httpx

from memory import jobs
from memory.backends.chat import OllamaChat
from memory.model import Exchange
from memory.store import Store
from memory.store.tables import outbox
from memory.write.worker import ReflectionWorker
from tests.fakes.ollama import FakeOllama

HANG = 30.0


async def _until(check: Callable[[], bool]) -> None:
    async with asyncio.timeout(HANG):
        while not check():
            await asyncio.sleep(0.01)


async def test_stop_gives_back_the_row_of_a_reflection_under_way(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    asked, never = asyncio.Event(), asyncio.Event()

    async def hold(payload: dict[str, Any]) -> None:
        asked.set()
        await never.wait()  # the server never answers: only the stop ends the reflection

    ollama.pause = hold
    worker = ReflectionWorker(store, OllamaChat(http, ollama.url, "m"), character_name="Écho")
    exchange = Exchange("x1", 7, 7, "dm", "Ana", "Je joue du violoncelle", "Beau !")
    await store.transact(lambda tx: outbox.enqueue(tx, exchange, now=0.0))
    background = jobs.start([jobs.Job("reflect", 3600, worker.run_due)])
    async with asyncio.timeout(HANG):
        await asked.wait()
    held = await store.fetchone("SELECT leased_by FROM outbox")
    assert held is not None and held[0] is not None
    await background.stop()
    row = await store.fetchone("SELECT status, leased_by, attempts FROM outbox")
    assert row is not None and tuple(row) == ("pending", None, 0)  # back, no attempt spent
    assert not background.running
    never.set()
    await worker.close()


async def test_a_job_runs_one_at_a_time_and_stops_with_the_others() -> None:
    """Twenty jobs every 10 ms, each run slower than its period by a random wait: no job ever
    runs twice at once, each runs again and again, and after `stop` none is running."""
    rng = random.Random(30)
    running: dict[str, int] = {}
    most: dict[str, int] = {}
    runs: dict[str, int] = {}
    ended: dict[str, int] = {}

    async def work(name: str) -> None:
        running[name] = running.get(name, 0) + 1
        most[name] = max(most.get(name, 0), running[name])
        runs[name] = runs.get(name, 0) + 1
        try:
            await asyncio.sleep(rng.uniform(0.01, 0.03))
        finally:
            running[name] -= 1
            ended[name] = ended.get(name, 0) + 1

    names = [f"job{i}" for i in range(20)]
    background = jobs.start([jobs.Job(n, 0.01, functools.partial(work, n)) for n in names])
    await _until(lambda: len(runs) == len(names) and min(runs.values()) >= 3)
    await background.stop()
    assert set(most.values()) == {1}
    # Every run ended, or was cut short, before `stop` returned.
    assert all(n == 0 for n in running.values())
    assert ended == runs
