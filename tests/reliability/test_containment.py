"""Every fault stays where it happened: a poison reflection, a bug in a turn, a database that
refuses writes while many people talk, a model that will not stop talking."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.discord.cogs.conversation import UNAVAILABLE
from memory import Engine, Incoming
from memory.backends.chat import ChatResult, Message, OllamaChat
from memory.context.prompt import Character
from memory.model import Exchange
from memory.store import Store, open_store
from memory.store.tables import counters, history, memories, outbox
from memory.turn import exchanges as exchanges_module
from memory.write.worker import MAX_ATTEMPTS, ReflectionWorker
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import CHANNEL, MANAGE_GUILD, _bot_with, _command
from tests.fakes.ollama import FakeOllama

CANARY = "XK7CANARY4921"


class PoisonOnce:
    """A chat backend that raises an unexpected error for every exchange that mentions the
    canary and reflects the others through the real loopback server."""

    def __init__(self, inner: OllamaChat) -> None:
        self.inner = inner
        self.model = inner.model

    async def chat(
        self, messages: Sequence[Message], *, schema: Mapping[str, Any] | None = None,
        deadline: float, max_tokens: int | None = None,
    ) -> ChatResult:  # fmt: skip
        if CANARY in messages[-1]["content"]:
            raise KeyError(f"a bug that quotes the message: {CANARY}")
        return await self.inner.chat(messages, schema=schema, deadline=deadline)


async def test_a_poison_row_never_stops_the_rows_behind_it(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    ollama.chat_reply = lambda payload: json.dumps({"memories": [{
        "text": "Joue du violoncelle", "kind": "fact", "scope": "global", "confidence": 0.95,
    }]})  # fmt: skip
    now = [1000.0]
    worker = ReflectionWorker(
        store, PoisonOnce(OllamaChat(http, ollama.url, "m")), character_name="Écho",
        clock=lambda: now[0],
    )  # fmt: skip
    poison = Exchange("poison", 1, 10, "111", "Ana", f"Mon code est {CANARY}", "Noté.")
    healthy = [
        Exchange(f"ok{u}", u, 10 + u, "111", f"u{u}", "Je joue du violoncelle", "Beau !")
        for u in (2, 3, 4)
    ]
    for e in [poison, *healthy]:
        await store.transact(lambda tx, e=e: outbox.enqueue(tx, e, now=0.0))

    # Concurrent runs: one drains, the others see it busy; the healthy rows all go through.
    applied = await asyncio.gather(*(worker.run_due() for _ in range(5)))
    assert sum(applied) == 3
    for u in (2, 3, 4):
        assert [m.text for m in await memories.list_for_user(store, u)] == ["Joue du violoncelle"]
    for _ in range(MAX_ATTEMPTS - 1):  # the poison row is retried, then dropped
        now[0] += 10**6
        assert await worker.run_due() == 0
    row = await store.fetchone("SELECT status, attempts FROM outbox WHERE exchange_id = 'poison'")
    assert row is not None and tuple(row) == ("dropped", MAX_ATTEMPTS)
    named = await counters.read_all(store)
    assert named["reflection_failed:KeyError"] == MAX_ATTEMPTS
    assert named["reflection_dropped_after_retries:KeyError"] == 1
    assert "KeyError" in caplog.text and CANARY not in caplog.text


async def test_many_turns_while_the_database_refuses_writes_are_each_written_once(
    tmp_path: Path, ollama: FakeOllama, http: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr(exchanges_module, "MAX_WAITING_EXCHANGES", 8)
    path = tmp_path / "busy.sqlite3"
    async with await open_store(path, busy_timeout_ms=50) as store:
        engine = Engine(store, embedder=None, chat=OllamaChat(http, ollama.url, "m"),
                        character=Character("Écho", "Tu es Écho."))  # fmt: skip
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            replies = await asyncio.gather(*(
                engine.turn(Incoming(f"m{n}", n % 4, f"u{n % 4}", 10 + n % 3, "111", f"hi {n}"))
                for n in range(12)
            ))  # fmt: skip
            assert all(r is not None for r in replies)  # everyone answered anyway
            status = engine.status()
            assert status.exchanges_waiting == 8 and status.exchanges_dropped == 4
        finally:
            other.execute("ROLLBACK")
            other.close()
        written = await asyncio.gather(*(engine.flush_pending() for _ in range(10)))
        assert sum(written) == 8  # one flush wrote them; the others saw it running
        rows = await store.fetchall("SELECT exchange_id FROM outbox")
        assert len(rows) == len({r[0] for r in rows}) == 8
        replies_stored = await store.fetchall(
            "SELECT count(*) FROM messages WHERE role = 'assistant'"
        )
        assert replies_stored[0][0] == 8
        assert engine.status().exchanges_waiting == 0


async def test_a_reply_that_will_not_stop_is_cut_and_said_so(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    endless = " ".join(f"mot{n}" for n in range(3000))  # ~20,000 characters
    ollama.chat_reply = lambda payload: "{}" if "format" in payload else endless
    async with _bot_with(tmp_path, ollama, limits={"max_reply_chars": 3000}) as (echo, rec):
        cog: Any = echo.get_cog("Conversation")
        channel = fakes.text_channel(echo, CHANNEL)
        msgs = [fakes.message(echo, channel, author_id=u, content="raconte") for u in (1, 2, 3)]
        await asyncio.gather(*(cog.on_message(m) for m in msgs))
        sent = rec.contents()
        assert all(len(c) <= 2000 for c in sent)
        said = "".join(sent)
        assert said.count("I cut it there") == 3
        stored = await history.recent(echo.runtime.store, CHANNEL, limit=10)
        replies = [m.content for m in stored if m.role == "assistant"]
        assert len(replies) == 3
        assert all(len(r) <= 3000 and endless.startswith(r) for r in replies)
        # Reflected as stored: a row still waiting holds the stored reply, and a reflection
        # that already ran in the background (its row done, its text blanked) was asked with it.
        rows = await echo.runtime.store.fetchall("SELECT status, reply FROM outbox")
        assert len(rows) == 3
        asked = [
            json.loads(p["messages"][-1]["content"])["character_reply"]
            for path, p in ollama.calls
            if path == "/api/chat" and "format" in p
        ]
        assert all(a in replies for a in asked)
        for status, reply in rows:
            assert (status, reply) == ("done", "") if status == "done" else str(reply) in replies
        assert len(asked) >= sum(status == "done" for status, _ in rows)


class Broken:
    """A chat backend with a bug in it."""

    model = "m"

    async def chat(self, messages: Sequence[Message], **kw: Any) -> ChatResult:
        raise ZeroDivisionError(f"bug while reading {messages[-1]['content']}")


async def test_a_bug_in_a_turn_still_answers_and_is_logged_without_the_message(
    tmp_path: Path, ollama: FakeOllama, caplog: pytest.LogCaptureFixture
) -> None:
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        echo.runtime.engine.chat = Broken()
        cog: Any = echo.get_cog("Conversation")
        channel = fakes.text_channel(echo, CHANNEL)
        msgs = [fakes.message(echo, channel, author_id=u, content=f"{CANARY} {u}")
                for u in range(1, 6)]  # fmt: skip
        await asyncio.gather(*(cog.on_message(m) for m in msgs))
        assert rec.contents() == [UNAVAILABLE] * 5
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 5 and all("ZeroDivisionError" in r.getMessage() for r in errors)
        assert CANARY not in caplog.text

        # Any other event handler that raises: logged the same way by the client.
        try:
            raise RuntimeError(CANARY)
        except RuntimeError:
            await echo.on_error("on_raw_reaction_add")
        assert "event on_raw_reaction_add failed: RuntimeError" in caplog.text
        assert CANARY not in caplog.text


async def test_stats_show_what_was_turned_away(tmp_path: Path, ollama: FakeOllama) -> None:
    ollama.set("/api/chat", "slow", delay=0.05)
    async with _bot_with(
        tmp_path, ollama, limits={"turn_queue": 0}, discord={"quick_pause": 0}
    ) as (echo, rec):
        cog: Any = echo.get_cog("Conversation")
        channel = fakes.text_channel(echo, CHANNEL)
        await asyncio.gather(*(
            cog.on_message(fakes.message(echo, channel, author_id=7, content=f"vite {n}"))
            for n in range(6)
        ))  # fmt: skip
        rec.owner_id = 1  # what the whole bot turned away is for its owner
        await _command(echo, "stats", 1, permissions=MANAGE_GUILD)
        stats = rec.contents()[-1]
        assert "5 messages turned away (queue full) · 1 slow-down notice " in stats
        assert "Exchanges waiting for the database: 0 · dropped: 0" in stats
