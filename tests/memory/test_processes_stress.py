"""Several processes at once on one database, with random latencies: workers whose leases expire
under them, and people remembering and forgetting through another process meanwhile. Every
exchange is applied exactly once; the model is asked again only about a row whose lease
expired, or whose reflection was shown something forgotten meanwhile; no write fails. Under
`make test-pg` the processes are pools on one PostgreSQL database, their transactions truly
concurrent (SQLite runs one writer at a time).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory import manage
from memory.backends.chat import OllamaChat
from memory.errors import NotFound, StoreError
from memory.store import Store, open_store
from memory.store.tables import counters, memories, outbox
from memory.write.apply import WriteReport
from memory.write.worker import ReflectionWorker
from tests.fakes.ollama import FakeOllama, serve_fake_ollama
from tests.memory.test_processes_outbox import marker, queue, reflection_for

PROCESSES = 3
EXCHANGES = 48
# The people the meddlers remember and forget for: half of those who talk, so a forget often
# meets a reflection merging into the same memory.
PEOPLE = 4
MEDDLERS = 2
LEASE = 0.6


class CountingWorker(ReflectionWorker):
    """A worker that records the exchanges it applied (its result not discarded as stale)."""

    applied: Counter[str]

    async def _reflect(self, lease: outbox.Lease) -> WriteReport | None:
        report = await super()._reflect(lease)
        if report is not None:
            self.applied[lease.row.exchange.exchange_id] += 1
        return report


@pytest.fixture
async def pools(shared_database: Path | str) -> AsyncIterator[list[Store]]:
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(await open_store(shared_database))
            for _ in range(PROCESSES + MEDDLERS)
        ]


@pytest.fixture
async def fakes() -> AsyncIterator[list[FakeOllama]]:
    async with AsyncExitStack() as stack:
        opened = [await stack.enter_async_context(serve_fake_ollama()) for _ in range(PROCESSES)]
        for fake in opened:
            fake.chat_reply = reflection_for
        yield opened
        for fake in opened:
            fake.released.set()


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_many_exchanges_several_processes_each_applied_exactly_once(
    pools: list[Store],
    fakes: list[FakeOllama],
    http: httpx.AsyncClient,
    seed: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="memory.write.worker")
    rng = random.Random(seed)
    workers_stores, meddlers = pools[:PROCESSES], pools[PROCESSES:]
    other = meddlers[0]
    applied: Counter[str] = Counter()
    workers = []
    for store, fake in zip(workers_stores, fakes, strict=True):
        w = CountingWorker(store, OllamaChat(http, fake.url, "m"), character_name="Ash",
                           deadline=10.0, lease=LEASE)  # fmt: skip
        w.applied = applied
        workers.append(w)

        async def latency(payload: dict[str, Any]) -> None:
            # Now and then longer than the lease: another process takes the row over.
            slow = rng.random() < 0.1
            await asyncio.sleep(LEASE + 0.2 if slow else rng.uniform(0, 0.05))

        fake.pause = latency
    queued = await queue(other, EXCHANGES)
    done = asyncio.Event()
    errors: list[str] = []

    async def drain(w: ReflectionWorker) -> None:
        while await outbox.pending_count(w.store):
            await w.run_due(limit=rng.randint(1, 3))
            await asyncio.sleep(rng.uniform(0, 0.02))

    async def meddle(other: Store) -> None:
        """People remember and forget through other processes meanwhile."""
        step = 0
        while not done.is_set():
            step += 1
            user = rng.randint(1, PEOPLE)
            try:
                mine = await memories.list_for_user(other, user)
                if mine and rng.random() < 0.6:
                    await manage.forget(other, user, rng.choice(mine).id)
                else:
                    text = f"Plays the {rng.choice(['cello', 'oboe'])}"
                    await manage.remember(
                        other, user_id=user, story_id=100, origin="111", text=text
                    )
            except NotFound:  # the other meddler forgot it first
                pass
            except StoreError as exc:  # a deadlock, a lock timeout: a person would see it
                errors.append(str(exc))
            await asyncio.sleep(rng.uniform(0, 0.02))

    meddling = asyncio.gather(*(meddle(m) for m in meddlers))
    try:
        await asyncio.wait_for(asyncio.gather(*(drain(w) for w in workers)), timeout=60)
    finally:
        done.set()
        await meddling
    assert errors == []
    assert applied == Counter(e.exchange_id for e in queued)  # each applied exactly once
    named = await counters.read_all(other)
    taken_over = named.get("reflection_failed:LeaseExpired", 0)
    failed = {k: v for k, v in named.items() if k.startswith("reflection_failed:")}
    assert failed == ({"reflection_failed:LeaseExpired": taken_over} if taken_over else {})
    calls = Counter(marker(p) for f in fakes for path, p in f.calls if path == "/api/chat")
    # A model call per claim: one per exchange, one more each time a lease expired under one,
    # and one more each time a meddler forgot a memory the reflection was shown (asked again).
    asked_again = sum("asking again" in r.getMessage() for r in caplog.records)
    assert set(calls) == set(applied)
    assert sum(calls.values()) == EXCHANGES + taken_over + asked_again
    rows = await other.fetchall("SELECT status, count(*) FROM outbox GROUP BY status")
    assert {str(r[0]): int(r[1]) for r in rows} == {"done": EXCHANGES}
