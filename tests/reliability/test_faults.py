"""Database faults (BUSY, FULL), erasure under a running re-index, mentions, replays."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory import Engine, Incoming, manage
from memory.backends.chat import OllamaChat
from memory.backends.embedders import OllamaEmbedder
from memory.context.prompt import Character
from memory.model import Kind, Scope
from memory.store import Store, open_store
from memory.store.tables import memories, outbox
from memory.vectors.indexer import Indexer
from memory.write.worker import ReflectionWorker
from tests.fakes.canary import stored
from tests.fakes.ollama import FakeOllama

# Half a minute of faults and retries in all: `make test-quick` leaves it out.
pytestmark = pytest.mark.slow

REFLECTION = {"memories": [{"text": "Joue du violoncelle", "kind": "fact", "scope": "global",
                            "confidence": 0.95}], "summary": "s"}  # fmt: skip


def _engine(store: Store, ollama: FakeOllama, http: httpx.AsyncClient) -> Engine:
    return Engine(
        store, embedder=OllamaEmbedder(http, ollama.url, "e"),
        chat=OllamaChat(http, ollama.url, "m"), character=Character("Écho", "Tu es Écho."),
    )  # fmt: skip


def _message(n: int, text: str = "Je joue du violoncelle") -> Incoming:
    return Incoming(f"m{n}", 1, "Marie", 10, "111", text)


async def test_busy_database_the_reply_goes_out_and_the_reflection_comes_later(
    tmp_path: Path, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    path = tmp_path / "busy.sqlite3"
    ollama.chat_replies = ["Quel bel instrument !", json.dumps(REFLECTION)]
    async with await open_store(path, busy_timeout_ms=100) as store:
        engine = _engine(store, ollama, http)
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            reply = await engine.turn(_message(1))
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert reply is not None and reply.text == "Quel bel instrument !"
        assert await outbox.pending_count(store) == 0  # refused while busy, kept in memory
        assert await engine.flush_pending() == 1
        worker = ReflectionWorker(store, OllamaChat(http, ollama.url, "m"), character_name="Écho")
        assert await worker.run_due() == 1
        assert [m.text for m in await memories.list_for_user(store, 1)] == ["Joue du violoncelle"]


async def test_full_database_the_reply_goes_out_and_nothing_is_left_open(
    tmp_path: Path, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    path = tmp_path / "full.sqlite3"
    async with await open_store(path) as store:
        pages = (await store.fetchone("PRAGMA page_count"))[0]  # type: ignore[index]
    async with await open_store(path, max_pages=pages) as store:
        engine = _engine(store, ollama, http)
        ollama.chat_replies = ["Je t'écoute."]
        long_text = "Je raconte une très longue histoire. " * 400
        reply = await engine.turn(_message(2, long_text))
        assert reply is not None and reply.text == "Je t'écoute."
        # No transaction left open: a small write still works once there is room.
        await store.transact(lambda tx: tx.execute("SELECT 1"))
    async with await open_store(path) as store:  # room again
        engine = _engine(store, ollama, http)
        ollama.chat_replies = ["Encore là."]
        assert await engine.turn(_message(3, "Bonjour")) is not None
        assert await outbox.pending_count(store) == 1


async def test_a_forgotten_canary_stays_gone_while_the_indexer_runs(
    database: Path | str, tmp_path: Path, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    canary = "Le code du coffre est XK7-CANARY-4921"
    async with await open_store(database) as store:
        outcome = await manage.remember(
            store, user_id=1, story_id=10, origin="111", text=canary, kind=Kind.FACT,
            scope=Scope.GLOBAL,
        )  # fmt: skip
        for i in range(40):
            await manage.remember(store, user_id=1, story_id=10, origin="111",
                                  text=f"Souvenir ordinaire {i}", now=float(i))  # fmt: skip
        ollama.set("/api/embed", "slow", delay=0.2)
        indexer = Indexer(store, OllamaEmbedder(http, ollama.url, "e"), batch_size=8)
        indexing = asyncio.ensure_future(indexer.run_once())
        await asyncio.sleep(0.1)  # the canary's batch is in flight
        assert outcome.memory_id is not None
        await manage.forget(store, 1, outcome.memory_id)
        await indexing
        assert await memories.get(store, 1, outcome.memory_id) is None
        rows = await store.fetchall("SELECT count(*) FROM embeddings WHERE memory_id = ?",
                                    (outcome.memory_id,))  # fmt: skip
        assert rows[0][0] == 0
        assert await _settled(store)
        for word in ("canary", "xk7"):
            assert await stored(store, tmp_path, word) == 0, word


async def _settled(store: Store, passes: int = 20) -> bool:
    """Whether the checkpoint after an erasure succeeds within `passes` passes, as the
    scheduler's do: an autovacuum worker's ANALYZE (PostgreSQL) may hold a snapshot older than
    the erasure for longer than one checkpoint's patience on a loaded machine."""
    for _ in range(passes):
        if await store.checkpoint():
            return True
        await asyncio.sleep(0.1)
    return False


# Hostile replies, each a random string of mention pieces: the pieces' combinations are
# Hypothesis's in tests/bot/test_render.py (defang); here they go through the whole bot, from
# many people at once, in the channel and in their DMs.
PEOPLE = 10
TURNS_EACH = 25


async def test_hundreds_of_hostile_replies_to_people_at_once_never_ping(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    from tests.bot import discord_fakes as fakes
    from tests.bot.discord.test_discord import CHANNEL, _bot_with

    rng = random.Random(7)
    pieces = ["@everyone", "@here", "@Everyone", "<@&42>", "<@123>", "<@!123>", "hi", " ", "\n"]
    total = PEOPLE * TURNS_EACH
    replies = [
        "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 12))) for _ in range(total)
    ]
    ollama.chat_reply = lambda payload: replies.pop() if "format" not in payload else "{}"
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        cog: Any = echo.get_cog("Conversation")

        async def talk(person: int) -> None:
            # Half the people in the channel, half in their own DM.
            place = channel if person % 2 else fakes.dm_channel(echo, 9_000 + person, person)
            for n in range(TURNS_EACH):
                await asyncio.sleep(rng.uniform(0, 0.01))
                await cog.on_message(
                    fakes.message(echo, place, author_id=person, content=f"go {n}")
                )

        await asyncio.gather(*(talk(100 + p) for p in range(PEOPLE)))
        sent = rec.messages()
        assert replies == [] and len(sent) == total
        for payload in sent:
            assert payload["allowed_mentions"]["parse"] == []
            assert "@everyone" not in payload["content"].lower()
            assert "@here" not in payload["content"].lower()
            assert "<@&" not in payload["content"]


async def test_replayed_messages_and_repeated_ready_answer_once(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    from tests.bot import discord_fakes as fakes
    from tests.bot.discord.test_discord import CHANNEL, _bot_with

    async with _bot_with(tmp_path, ollama) as (echo, rec):
        for _ in range(3):
            await echo.on_ready()
        channel = fakes.text_channel(echo, CHANNEL)
        cog: Any = echo.get_cog("Conversation")
        for n in range(5):
            for _ in range(2):  # each gateway message delivered twice
                await cog.on_message(fakes.message(echo, channel, author_id=5, content=f"m{n}",
                                                   message_id=90_000 + n))  # fmt: skip
        await echo.runtime.worker.run_due()
        assert len(rec.messages()) == 5
        rows = await echo.runtime.store.fetchall("SELECT exchange_id FROM outbox")
        assert sorted(r[0] for r in rows) == [f"discord:{90_000 + n}" for n in range(5)]
