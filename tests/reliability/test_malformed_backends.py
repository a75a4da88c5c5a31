"""Malformed backend answers degrade a turn, never break it: recall, turns and what /stats shows,
against the loopback fake Ollama answering nonsense."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory import Engine, MemoryConfig
from memory.backends.embedders import OllamaEmbedder
from memory.model import Kind, Scope
from memory.store import Store, Tx
from memory.store.tables import counters, memories
from memory.vectors.indexer import Indexer
from tests.fakes.ollama import FakeOllama

GUILD, STORY = "111", 10
TEXTS = ["Has a ginger cat called Felix", "Plays the cello", "Works nights in Leeds"]


async def _remember_all(store: Store, user_id: int) -> None:
    async def run(tx: Tx) -> None:
        for text in TEXTS:
            await memories.insert(
                tx, user_id=user_id, text=text, kind=Kind.FACT, scope=Scope.GLOBAL,
                story_id=STORY, origin=GUILD, confidence=0.9, now=1.0,
            )  # fmt: skip

    await store.transact(run)


async def _indexed_engine(store: Store, ollama: FakeOllama, http: httpx.AsyncClient) -> Engine:
    """An engine whose users 1..3 have memories with vectors from the healthy server."""
    for user_id in (1, 2, 3):
        await _remember_all(store, user_id)
    embedder = OllamaEmbedder(http, ollama.url, "nomic-embed-text")
    assert await Indexer(store, embedder).run_once() == 3 * len(TEXTS)
    return Engine(store, embedder=embedder, config=MemoryConfig(threshold=0.5))


@pytest.mark.parametrize(
    "mode",
    ["wrong_dim", "float32_overflow", "huge_int", "long_int", "deep", "not_list", "huge_body"],
)
async def test_a_malformed_embedding_degrades_the_turn_and_memories_are_still_served(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, mode: str
) -> None:
    engine = await _indexed_engine(store, ollama, http)
    ollama.set("/api/embed", mode)
    recall = await engine.recall(user_id=1, story_id=STORY, origin=GUILD, text="my cat Felix")
    assert recall.degraded
    assert len(recall.selected) == len(TEXTS)  # served by the other passes all the same
    assert (await counters.read_all(store))["degraded_turns"] == 1


async def test_the_dimension_stays_checked_after_a_healthy_turn(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    # The matrix is cached by the healthy turn; the next answer of another size is caught too.
    engine = await _indexed_engine(store, ollama, http)
    healthy = await engine.recall(user_id=1, story_id=STORY, origin=GUILD, text="cat Felix")
    ollama.set("/api/embed", "wrong_dim")
    wrong = await engine.recall(user_id=1, story_id=STORY, origin=GUILD, text="cat Felix")
    assert (healthy.degraded, wrong.degraded) == (False, True)
    assert all(s.score is None for s in wrong.selected)


@pytest.mark.parametrize("mode", ["wrong_dim", "float32_overflow", "deep"])
async def test_many_recalls_at_once_against_a_misbehaving_server_each_degrade_cleanly(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, mode: str
) -> None:
    engine = await _indexed_engine(store, ollama, http)
    ollama.set("/api/embed", mode)
    recalls = await asyncio.gather(
        *(
            engine.recall(user_id=1 + n % 3, story_id=STORY, origin=GUILD, text=f"cat {n}")
            for n in range(30)
        ),
        return_exceptions=True,
    )
    assert all(not isinstance(r, BaseException) and r.degraded for r in recalls), recalls
    assert (await counters.read_all(store))["degraded_turns"] == 30
    # The healthy server back: the next turn scores again.
    ollama.set("/api/embed", "ok")
    again = await engine.recall(user_id=1, story_id=STORY, origin=GUILD, text="cat Felix")
    assert not again.degraded


# --- end to end, through the Discord cog ---------------------------------------------------


async def test_a_turn_whose_embedding_has_the_wrong_dimension_is_answered_and_counted(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    from tests.bot import discord_fakes as fakes
    from tests.bot.discord.test_discord import (
        ALICE,
        CHANNEL,
        MANAGE_GUILD,
        _bot_with,
        _command,
        _remember,
    )

    async with _bot_with(tmp_path, ollama) as (echo, rec):
        await _remember(echo, ALICE, "Alice has a ginger cat called Felix")
        assert await echo.runtime.indexer.run_once() == 1
        # The model behind the same name now answers vectors of another size.
        ollama.set("/api/embed", "wrong_dim")
        ollama.chat_reply = lambda payload: "{}" if "format" in payload else "Felix va bien ?"
        cog: Any = echo.get_cog("Conversation")
        channel = fakes.text_channel(echo, CHANNEL)
        await cog.on_message(fakes.message(echo, channel, author_id=ALICE, content="mon chat"))
        assert rec.contents()[-1] == "Felix va bien ?"
        await _command(echo, "why", ALICE)
        why = rec.contents()[-1]
        assert "Degraded turn" in why and "ginger cat" in why  # served, by keywords
        rec.owner_id = ALICE  # the bot-wide figures are for its owner
        await _command(echo, "stats", ALICE, permissions=MANAGE_GUILD)
        assert "without it (all time, answered or not): 1" in rec.contents()[-1]


async def test_stats_and_the_outbox_never_show_the_password_of_the_backend_url(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    from tests.bot import discord_fakes as fakes
    from tests.bot.discord.test_discord import (
        ALICE,
        CHANNEL,
        MANAGE_GUILD,
        _bot_with,
        _command,
        _remember,
    )

    ollama.url = ollama.url.replace("http://", "http://echo:s3cr3t-pw@")
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        await _remember(echo, ALICE, "Alice plays the cello")
        ollama.set("/api/embed", "500")
        assert await echo.runtime.indexer.run_once() == 0
        rec.owner_id = ALICE  # the bot-wide figures are for its owner
        await _command(echo, "stats", ALICE, permissions=MANAGE_GUILD)
        stats = rec.contents()[-1]
        assert "HTTP 500" in stats and "http://***@127.0.0.1" in stats
        assert "s3cr3t" not in stats

        ollama.chat_replies = ["Joli !"]
        cog: Any = echo.get_cog("Conversation")
        channel = fakes.text_channel(echo, CHANNEL)
        await cog.on_message(fakes.message(echo, channel, author_id=ALICE, content="violoncelle"))
        ollama.set("/api/chat", "500")  # the reflection fails and is retried later
        await echo.runtime.worker.run_due()
        rows = await echo.runtime.store.fetchall("SELECT last_error FROM outbox")
        errors = [str(r[0]) for r in rows]
        assert errors and all("HTTP 500" in e and "s3cr3t" not in e for e in errors), errors
