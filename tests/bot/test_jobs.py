"""The background jobs as the front ends start them (memory.jobs): the Discord bot and the
interactive terminal start the same set, and each job does its work when the terminal started
it: a queued exchange reflected, a memory embedded, a pending erasure finished, the retention
rules applied, the caches warmed; at start and again while the chat goes on."""

from __future__ import annotations

import asyncio
import gc
import logging
import random
import time
import weakref
from pathlib import Path
from typing import Any

import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.config import Settings
from bot.discord.app import EchoBot, Sync
from bot.runtime import Runtime, listed_jobs, open_runtime
from memory import Incoming, bulk, jobs
from memory.model import DM_ORIGIN, Exchange, Kind, Scope
from memory.store import Tx
from memory.store.queries import erasure
from memory.store.tables import memories, outbox
from tests.bot import discord_fakes as fakes
from tests.bot.terminal.test_live import Keyboard, _script, _until
from tests.fakes.ollama import Chaos, FakeOllama

DAY = 86_400.0
# Short periods, so that a second run of each job comes within the test.
EVERY = 0.05


def _settings(database: Path | str, tmp_path: Path, ollama: FakeOllama) -> Settings:
    """The `database` fixture's SQLite file, or its PostgreSQL URL (the process's own files
    then in tmp_path)."""
    if isinstance(database, str):
        storage: dict[str, object] = {"path": tmp_path / "echo.sqlite3", "url": database}
    else:
        storage = {"path": database}
    return Settings(
        llm={"base_url": ollama.url},  # type: ignore[arg-type]
        storage=storage,  # type: ignore[arg-type]
        memory={"reindex_interval": EVERY},  # type: ignore[arg-type]
        # Reflected right after each reply, as these tests read the jobs' work.
        conversation={"settle_seconds": 0},  # type: ignore[arg-type]
    )


def _record_jobs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float | None]]:
    """Every job added to a scheduler from now on: its name and period (None: once)."""
    added: list[tuple[str, float | None]] = []
    add_job = AsyncIOScheduler.add_job

    def recording(
        self: AsyncIOScheduler, func: Any, trigger: Any = None, *a: Any, **kw: Any
    ) -> Any:
        added.append((kw.get("id"), kw.get("seconds")))
        return add_job(self, func, trigger, *a, **kw)

    monkeypatch.setattr(AsyncIOScheduler, "add_job", recording)
    return added


async def test_discord_and_the_terminal_start_the_same_jobs(
    tmp_path: Path, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    added = _record_jobs(monkeypatch)
    async with open_runtime(_settings(tmp_path / "echo.sqlite3", tmp_path, ollama)) as runtime:
        echo = EchoBot(runtime, sync=Sync.NEVER, background=True)
        await fakes.install(echo, fakes.Recorder())
        await echo.setup_hook()
        await echo.close()
        on_discord = sorted(added, key=str)
        added.clear()
        marie = Keyboard(runtime, "Marie")
        await marie.sees("> ")  # the prompt: the chat has started its jobs
        await marie.close()
        in_the_terminal = sorted(added, key=str)
    assert on_discord, "the bot started no background job"
    # The same, and on Discord the follow-ups' too: the terminal shows its person's follow-ups
    # itself when the chat opens.
    assert in_the_terminal == [job for job in on_discord if job[0] != "followups"]
    assert ("followups", jobs.FOLLOWUPS_EVERY) in on_discord


async def _before_the_start(runtime: Runtime, n: int) -> str:
    """What a previous process left for the jobs, for person 100 + n: an exchange waiting for
    its reflection, a memory with no vector yet, an erasure a reader kept pending, a
    reflection dropped eight days ago; return the waiting exchange's id."""
    store, person = runtime.store, 100 + n
    exchange = Exchange(
        f"seed:{n}", person, person, DM_ORIGIN, f"P{n}", f"Mon mot est s{n}.", "Ok."
    )
    dropped = Exchange(f"old:{n}", person, person, DM_ORIGIN, f"P{n}", f"Mon code est c{n}.", "Ok.")

    async def seed(tx: Tx) -> None:
        await outbox.enqueue(tx, exchange, now=time.time())
        await memories.insert(
            tx, user_id=person, text=f"Aime le nombre {n}", kind=Kind.FACT, scope=Scope.GLOBAL,
            story_id=person, origin=DM_ORIGIN, confidence=0.9, now=time.time(),
        )  # fmt: skip
        await erasure.record(tx, "memory", now=time.time())
        await outbox.enqueue(tx, dropped, now=time.time() - 8 * DAY)

    await store.transact(seed)
    row = await outbox.get(store, dropped.exchange_id)
    assert row is not None
    await store.transact(lambda tx: outbox.mark_failed(tx, row.id, error="e", next_attempt_at=None))
    return exchange.exchange_id


async def _all_done(runtime: Runtime, people: range) -> bool:
    """Each job's effect for these people: reflected, embedded, erased, tidied."""
    store = runtime.store
    for n in people:
        person = 100 + n
        texts = sorted(m.text for m in await memories.list_for_user(store, person))
        if texts != sorted([f"Aime le nombre {n}", f"Son mot est s{n}"]):
            return False
        embedded = await store.fetchone(
            "SELECT count(*) FROM embeddings e JOIN memories m ON m.id = e.memory_id"
            " WHERE m.user_id = ?", (person,),
        )  # fmt: skip
        if embedded is None or embedded[0] != 2:
            return False
        old = await store.fetchone(
            "SELECT user_message FROM outbox WHERE exchange_id = ?", (f"old:{n}",)
        )
        if old is None or old[0] != "":
            return False
    return not await erasure.pending(store)


async def _held_leases(runtime: Runtime) -> int:
    row = await runtime.store.fetchone("SELECT count(*) FROM outbox WHERE leased_by IS NOT NULL")
    return int(row[0]) if row else -1


def _short_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("REFLECT_EVERY", "ERASURE_EVERY", "RETENTION_EVERY"):
        monkeypatch.setattr(jobs, name, EVERY)


async def test_each_job_runs_when_the_terminal_starts_them(
    database: Path | str,
    tmp_path: Path,
    ollama: FakeOllama,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _script(ollama)
    settings = _settings(database, tmp_path, ollama)
    async with open_runtime(settings) as before:
        # A turn of person 7, so that the next start has a place to warm.
        reply = await before.engine.turn(
            Incoming("dm:7", 7, "Ana", 7, DM_ORIGIN, "Mon mot est phare.")
        )
        assert reply is not None
        await _before_the_start(before, 0)
    caplog.set_level(logging.INFO, logger="memory.recall.recaller")
    _short_periods(monkeypatch)
    async with open_runtime(settings) as runtime:
        marie = Keyboard(runtime, "Marie")
        await _until("the first runs", lambda: _all_done(runtime, range(1)))
        await _until("warmed", lambda: "caches warmed for 1 recent places" in caplog.text)
        assert [m.text for m in await memories.list_for_user(runtime.store, 7)] == [
            "Son mot est phare"
        ]
        # Left while the chat runs, not before: the periodic runs take it.
        await _before_the_start(runtime, 1)
        await _until("the next runs", lambda: _all_done(runtime, range(2)))
        await marie.close()
        assert await _held_leases(runtime) == 0
    assert "Écho:" not in marie.out.getvalue()  # nothing typed: the jobs alone did it
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_many_chats_on_two_processes_share_the_jobs_work(
    database: Path | str,
    tmp_path: Path,
    ollama: FakeOllama,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two processes on one database, three people chatting in each, each chat with its jobs,
    random latencies: every seeded exchange is reflected once, every memory embedded, every
    erasure finished, every old text blanked, and no row is left leased after the stop."""
    _script(ollama)
    ollama.chaos = Chaos(seed=30, max_delay=0.03, failure_rate=0.0)
    rng = random.Random(30)
    settings = _settings(database, tmp_path, ollama)
    seeded = range(6)
    async with open_runtime(settings) as first:
        for n in seeded:
            await _before_the_start(first, n)
    caplog.set_level(logging.WARNING)
    _short_periods(monkeypatch)
    async with open_runtime(settings) as one, open_runtime(settings) as two:
        words = ["phare", "lune", "vent", "sel", "mer", "pin"]
        keyboards = [
            Keyboard(runtime, f"Personne {word}")
            for runtime, word in zip([one, two] * 3, words, strict=True)
        ]

        async def talk(keyboard: Keyboard, word: str) -> None:
            await asyncio.sleep(rng.uniform(0, 0.05))
            keyboard.type(f"Mon mot est {word}.")
            await keyboard.sees(f"Noté : {word}.")
            await _until(word, lambda: keyboard.memories(one.store))

        await asyncio.gather(*(talk(k, w) for k, w in zip(keyboards, words, strict=True)))
        await _until("every job's work", lambda: _all_done(one, seeded))
        await asyncio.gather(*(k.close() for k in keyboards))
        assert await _held_leases(one) == 0
        rows = await one.store.fetchall("SELECT status FROM outbox WHERE exchange_id LIKE 'seed:%'")
        assert [r[0] for r in rows] == ["done"] * len(seeded)
        for n in seeded:  # reflected once: one memory of the word, not two
            said = [m.text for m in await memories.list_for_user(one.store, 100 + n)]
            assert said.count(f"Son mot est s{n}") == 1
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


class _InFlight:
    def __init__(self) -> None:
        self.me = self  # a reference cycle, as a request and its response hold


async def test_the_thaw_job_frees_cycles_a_large_build_froze(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """Cycles in flight when a large build ended are frozen with it; garbage later, they stay
    whatever collects, until the runtime's thaw job, once the frozen objects grew past its
    bound and no turn is in flight (its collection stalls the loop), frees them and keeps
    what lives."""
    async with open_runtime(_settings(tmp_path / "echo.sqlite3", tmp_path, ollama)) as runtime:
        # What earlier tests of this process left is frozen first: the build's freeze then
        # holds only what this test made (gc.freeze takes every tracked object, and a worker
        # that ran many tests holds more than the bounds).
        gc.collect()
        gc.freeze()
        thaw = next(job for job in listed_jobs(runtime) if job.name == "thaw")
        assert thaw.every == jobs.THAW_EVERY
        in_flight = [_InFlight() for _ in range(50)]
        freed = [weakref.ref(o) for o in in_flight]
        with bulk.paused():  # a build that leaves the bound's worth of objects alive
            cache = [[n] for n in range(bulk.THAW_GROWTH + bulk.FREEZE_MIN)]
            bulk.made(len(cache))
        del in_flight
        gc.collect()
        assert all(ref() is not None for ref in freed)
        async with runtime.engine.admission.turn(7, 1):  # someone waits for a reply
            await thaw.run()
            assert all(ref() is not None for ref in freed)
        # A build an earlier test left running in a thread of this process (a first load the
        # turn did not wait for) holds the thaw off, as it must: let it end first.
        for _ in range(3000):
            if not bulk.building():
                break
            await asyncio.sleep(0.01)
        await thaw.run()
        assert all(ref() is None for ref in freed)
        assert cache[-1] == [bulk.THAW_GROWTH + bulk.FREEZE_MIN - 1]
