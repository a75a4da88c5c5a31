"""Erasures while others talk, and what was under way when one ran: a reply being written, a
reflection of the forgotten exchange, a reflection that read the forgotten words, a turn that
condensed them. None of them writes the forgotten words back. Each erasure command has its
twin here: one person erasing while others talk. On the `database` fixture's backend."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from bot.discord.app import EchoBot
from bot.discord.cogs.erasure import ConfirmErasure
from bot.discord.cogs.memories import ConfirmForget
from memory import manage
from memory.manage import forgetting
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _bot_with, _say
from tests.bot.discord.test_erasure import (
    ALICES,
    ALICES_DM,
    BOBS,
    CAROL,
    DM_CHANNEL,
    MANAGE_MESSAGES,
    SMALL_CONTEXT,
    _chatter,
    _chatter_until_condensed,
    _menu,
    _next_prompt,
    _press,
    _secret,
    _stored,
    _story_texts,
    _talk,
)
from tests.fakes import canary
from tests.fakes.ollama import Chaos, FakeOllama


class _Gate:
    """Holds the chat call whose text carries a marker until the test lets it go."""

    def __init__(self, marker: str, *, reflection: bool) -> None:
        self.marker = marker
        self.reflection = reflection
        self.held = asyncio.Event()
        self.open = asyncio.Event()
        self.payload: dict[str, Any] = {}

    async def __call__(self, payload: dict[str, Any]) -> None:
        asked = canary.reflection_request(payload)
        if self.reflection != (asked is not None):
            return
        text = asked["user_message"] if asked else payload["messages"][-1]["content"]
        if self.marker in text:
            self.payload = payload
            self.held.set()
            await self.open.wait()


async def _drained(echo: Any) -> None:
    """Every reflection due done: those the replies started in the background first (one
    running holds the worker, and run_due then returns at once with rows still due)."""
    await asyncio.gather(*getattr(echo.get_cog("Conversation"), "_background", ()))
    while await echo.runtime.worker.run_due():
        pass


async def _crowd(echo: EchoBot, channel: Any | None) -> None:
    """Four others talking meanwhile, in the channel (if given) and in their DMs."""

    async def one(p: int) -> None:
        dm = fakes.dm_channel(echo, 60_000 + p, p)
        for n, place in enumerate((channel or dm, dm)):
            await _say(echo, place, p, f"Le jardin {n} de {p} pousse bien.")
            await echo.runtime.worker.run_due()

    await asyncio.gather(*(one(4000 + n) for n in range(4)))


async def test_a_reply_under_way_is_not_stored_once_its_message_is_forgotten(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    ollama.pause = gate = _Gate("HOLD", reflection=False)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        alices = fakes.message(echo, channel, author_id=ALICE, content=_secret(ALICES) + " HOLD")
        turn = asyncio.create_task(echo.get_cog("Conversation").on_message(alices))  # type: ignore[union-attr]
        await gate.held.wait()  # her message is stored; the reply is being written

        async def forget() -> None:
            await _menu(echo, BOB, alices, permissions=MANAGE_MESSAGES)
            gate.open.set()

        await asyncio.gather(forget(), _crowd(echo, channel), turn)
        await echo.runtime.worker.run_due()
        assert f"Noté : {ALICES}." in rec.contents()  # it went out on Discord, before
        assert await _stored(echo, tmp_path, ALICES) == 0
        assert await manage.list_memories(echo.runtime.store, ALICE) == []


async def test_a_reflection_under_way_writes_nothing_of_a_forgotten_message(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    ollama.pause = gate = _Gate("HOLD", reflection=True)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        alices = await _say(echo, channel, ALICE, _secret(ALICES) + " HOLD")
        reflecting = asyncio.create_task(echo.runtime.worker.run_due())
        await gate.held.wait()

        async def forget() -> None:
            await _menu(echo, ALICE, alices)
            gate.open.set()

        await asyncio.gather(forget(), _crowd(echo, channel), reflecting)
        assert await _stored(echo, tmp_path, ALICES) == 0
        assert "A pour code" not in json.dumps(await _story_texts(echo))


async def test_a_reflection_that_read_the_forgotten_words_leaves_the_story_notes_alone(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Carol's reflection read the summary holding Alice's canary, then Alice forgot her
    message: what it proposes for the story may copy the canary, and is not written."""
    canary.script(ollama)
    ollama.pause = gate = _Gate("HOLD", reflection=True)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        alices = await _talk(echo, channel, ALICE, _secret(ALICES))
        await _say(echo, channel, CAROL, "HOLD le jardin pousse bien.")
        reflecting = asyncio.create_task(echo.runtime.worker.run_due())
        await gate.held.wait()

        async def forget() -> None:
            await _menu(echo, ALICE, alices)
            gate.open.set()

        await asyncio.gather(forget(), _crowd(echo, channel), reflecting)
        assert await _stored(echo, tmp_path, ALICES) == 0
        # An exchange queued after the erasure writes the story's notes again. (The crowd's may
        # all have been queued before it, and skip them: seen once in about 45 runs.)
        await _talk(echo, channel, BOB, "Le jardin pousse toujours bien.")
        await _drained(echo)
        notes = await _story_texts(echo)
        assert notes and ALICES not in notes


async def test_a_reflection_shown_the_forgotten_words_writes_none_of_them_for_its_person(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Bob's reflection was shown the summary and anchor holding Alice's canary, and copies it
    into a memory of Bob's; Alice runs /forget-me while the model answers, others talking. Its
    answer is not written: Bob's exchange is reflected again from the notes as they are now."""
    canary.script(ollama, copy=True)
    ollama.pause = gate = _Gate("HOLD", reflection=True)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _talk(echo, channel, ALICE, _secret(ALICES))
        await _say(echo, channel, BOB, "HOLD tu te souviens du code ?")
        reflecting = asyncio.create_task(echo.runtime.worker.run_due())
        await gate.held.wait()
        assert ALICES in gate.payload["messages"][-1]["content"]  # what Bob's reflection read

        async def forget_me() -> None:
            await _press(echo, ConfirmErasure(ALICE, ALICE), ALICE)
            gate.open.set()

        await asyncio.gather(forget_me(), _crowd(echo, channel), reflecting)
        # The reflection started after a turn (in the background) may be the one shown them.
        await _drained(echo)
        assert any(c.startswith("Erased everything about you:") for c in rec.contents())
        assert await _stored(echo, tmp_path, ALICES) == 0
        assert ALICES not in " ".join(
            m.text for m in await manage.list_memories(echo.runtime.store, BOB)
        )
        # Asked twice: once shown her words, once without them; applied once.
        asked = [
            p for path, p in ollama.calls
            if path == "/api/chat" and "HOLD" in str((canary.reflection_request(p) or {})
                                                     .get("user_message"))
        ]  # fmt: skip
        assert len(asked) == 2 and ALICES not in asked[1]["messages"][-1]["content"]
        done = await echo.runtime.store.fetchone(
            "SELECT count(*) FROM outbox WHERE user_id = ? AND status = 'done'", (BOB,)
        )
        assert done is not None and done[0] == 1


async def test_a_turn_under_way_does_not_condense_a_forgotten_message_back(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Carol's turn planned its prompt with Alice's message in the condensed history, then
    Alice forgot it: the condensed history the turn stores afterwards leaves it out."""
    canary.script(ollama)
    ollama.pause = gate = _Gate("HOLD", reflection=False)
    async with _bot_with(tmp_path, ollama, database=database, context=SMALL_CONTEXT) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        alices = await _talk(echo, channel, ALICE, _secret(ALICES))
        await _chatter_until_condensed(echo, channel, ALICES)
        await _chatter(echo, channel, 6)
        # Long enough that more history leaves: the turn condenses it with what was condensed.
        long = "HOLD " + "Et le jardin, les courges et les haricots, comment vont-ils ? " * 12
        turn = asyncio.create_task(_say(echo, channel, CAROL, long))
        await gate.held.wait()
        said = gate.payload["messages"]
        earlier = next(m for m in said if m["content"].startswith("Earlier in this conversation"))
        assert f"user{ALICE}: {_secret(ALICES)}" in earlier["content"]

        async def forget() -> None:
            await _menu(echo, ALICE, alices)
            gate.open.set()

        # The others talk elsewhere: a later turn here would store a newer condensed history.
        await asyncio.gather(forget(), _crowd(echo, None), turn)
        assert await _stored(echo, tmp_path, ALICES) == 0
        condensed = await echo.runtime.store.fetchone("SELECT summary FROM story_context")
        assert condensed is not None and "jardin" in condensed[0]


async def test_erasures_while_others_talk(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Alice forgets herself and Bob one message while six others talk in two channels and
    their DMs and the reflections run, some of them on Alice's and Bob's exchanges."""
    canary.script(ollama)
    ollama.set("/api/chat", "slow", 0.01)
    others = [3000 + n for n in range(6)]
    theirs = {p: f"P{n}ACANARY{1000 + n}" for n, p in enumerate(others)}
    async with _bot_with(tmp_path, ollama, database=database, context=SMALL_CONTEXT) as (echo, _):
        channels = [fakes.text_channel(echo, CHANNEL), fakes.text_channel(echo, CHANNEL + 1)]
        await _say(echo, channels[1], BOB, f"<@{fakes.BOT_ID}> Mon jardin a des tomates.",
                   mentions=[fakes.BOT_ID])  # fmt: skip
        bobs = await _say(echo, channels[0], BOB, _secret(BOBS))
        await _say(echo, channels[0], ALICE, _secret(ALICES))
        await _say(echo, fakes.dm_channel(echo, DM_CHANNEL, ALICE), ALICE, _secret(ALICES_DM))
        await echo.runtime.worker.run_due(limit=2)  # the rest are reflected during the erasures

        async def person(p: int) -> None:
            places = [*channels, fakes.dm_channel(echo, 40_000 + p, p)]
            for n in range(3):
                channel = places[n % 3]
                text = _secret(theirs[p]) if n == 0 else f"Le jardin {n} de {p} pousse bien."
                mention = f"<@{fakes.BOT_ID}> " if channel is channels[1] else ""
                await _say(echo, channel, p, mention + text, mentions=[fakes.BOT_ID])
                await echo.runtime.worker.run_due()

        async def forget_me() -> None:
            await asyncio.sleep(0.02)
            await _press(echo, ConfirmErasure(ALICE, ALICE), ALICE)

        async def forget_bobs() -> None:
            await asyncio.sleep(0.03)
            await _menu(echo, BOB, bobs)

        await asyncio.gather(*(person(p) for p in others), forget_me(), forget_bobs(),
                             echo.runtime.worker.run_due())  # fmt: skip
        await _drained(echo)
        assert await forgetting.settle_pending(echo.runtime.store) == 0

        for code in (ALICES, ALICES_DM, BOBS):
            assert await _stored(echo, tmp_path, code) == 0, code
        for p in others:
            [memory] = await manage.list_memories(echo.runtime.store, p)
            assert memory.text.endswith(theirs[p])
        for p in (*others[:2], BOB):
            prompt = await _next_prompt(echo, ollama, channels[0], p)
            assert ALICES not in prompt and BOBS not in prompt
            assert theirs[others[0]] in prompt  # the anchor of the first person's secret


async def test_forget_me_while_others_talk_and_copy_her_words(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Five people talk in two channels after Alice's canary reached the first one's summary,
    and their reflections copy what they are shown into their own memories, while Alice runs
    /forget-me (every LLM call after a random delay): none of them keeps her canary, each keeps
    the memory of their own."""
    canary.script(ollama, copy=True)
    ollama.set("/api/chat", "slow", 0.01)
    others = [3000 + n for n in range(5)]
    theirs = {p: f"P{n}BCANARY{2000 + n}" for n, p in enumerate(others)}
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        channels = [fakes.text_channel(echo, CHANNEL), fakes.text_channel(echo, CHANNEL + 1)]
        await _talk(echo, channels[0], ALICE, _secret(ALICES))
        rng = random.Random(28)

        async def person(p: int) -> None:
            said = ("Tu te souviens du code ?", _secret(theirs[p]), "Le jardin pousse bien.")
            for n, text in enumerate(said):
                channel = channels[n // 2]
                mention = f"<@{fakes.BOT_ID}> " if channel is channels[1] else ""
                await asyncio.sleep(rng.uniform(0, 0.03))
                await _say(echo, channel, p, mention + text, mentions=[fakes.BOT_ID])
                await echo.runtime.worker.run_due()

        async def copied() -> bool:
            rows = await echo.runtime.store.fetchall(
                "SELECT text FROM memories WHERE user_id <> ?", (ALICE,)
            )
            return any(ALICES in str(r[0]) for r in rows)

        async def forget_me() -> None:
            for _ in range(2000):  # once one has copied her canary, the others at work
                if await copied():
                    break
                await asyncio.sleep(0.005)
            else:
                raise AssertionError("no reflection copied her canary")
            await _press(echo, ConfirmErasure(ALICE, ALICE), ALICE)

        await asyncio.gather(*(person(p) for p in others), forget_me())
        await _drained(echo)
        assert await forgetting.settle_pending(echo.runtime.store) == 0
        assert any(c.startswith("Erased everything about you:") for c in rec.contents())
        assert await _stored(echo, tmp_path, ALICES) == 0
        for p in others:
            texts = [m.text for m in await manage.list_memories(echo.runtime.store, p)]
            assert f"A pour code de coffre {theirs[p]}" in texts
            assert ALICES not in " ".join(texts)


async def test_forget_me_while_others_talk_keeps_what_they_reworded(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Five people talk in two channels after Alice's canary reached the first one's summary:
    one message of each makes their reflection copy her canary, two are reworded (words of
    neither the message nor her exchange). Alice runs /forget-me meanwhile (every LLM call
    after a random delay): the copies go, every rewording stays."""
    canary.script(ollama, copy=True)
    ollama.set("/api/chat", "slow", 0.01)
    others = [3000 + n for n in range(5)]
    garden, novels = canary.REWORDED
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        channels = [fakes.text_channel(echo, CHANNEL), fakes.text_channel(echo, CHANNEL + 1)]
        await _talk(echo, channels[0], ALICE, _secret(ALICES))
        rng = random.Random(29)

        async def person(p: int) -> None:
            for n, text in enumerate((garden, "Tu te souviens du code ?", novels)):
                channel = channels[n // 2]
                mention = f"<@{fakes.BOT_ID}> " if channel is channels[1] else ""
                await asyncio.sleep(rng.uniform(0, 0.03))
                await _say(echo, channel, p, mention + text, mentions=[fakes.BOT_ID])
                await echo.runtime.worker.run_due()

        async def forget_me() -> None:
            for _ in range(2000):  # once one has copied her canary, the others at work
                rows = await echo.runtime.store.fetchall(
                    "SELECT text FROM memories WHERE user_id <> ?", (ALICE,)
                )
                if any(ALICES in str(r[0]) for r in rows):
                    break
                await asyncio.sleep(0.005)
            else:
                raise AssertionError("no reflection copied her canary")
            await _press(echo, ConfirmErasure(ALICE, ALICE), ALICE)

        await asyncio.gather(*(person(p) for p in others), forget_me())
        await _drained(echo)
        assert await forgetting.settle_pending(echo.runtime.store) == 0
        assert any(c.startswith("Erased everything about you:") for c in rec.contents())
        assert await _stored(echo, tmp_path, ALICES) == 0
        for p in others:
            texts = [m.text for m in await manage.list_memories(echo.runtime.store, p)]
            assert "Aime jardiner" in texts and "Dévore des livres" in texts, (p, texts)


# Each Discord erasure command, and what it erases of Alice's two secrets (or of her memory).
ERASURES = ("forget-me", "forget-member", "forget-this-message", "forget-memory")


@pytest.mark.parametrize("command", ERASURES)
async def test_one_person_erases_while_others_talk(
    database: Path | str, tmp_path: Path, ollama: FakeOllama, command: str
) -> None:
    """Alice erases with one command while four others talk in two channels and their DMs and
    the reflections run, every LLM call and every message after a random delay: what the
    command erases is stored nowhere and in no prompt; the rest of hers, and everything of the
    others, is intact."""
    canary.script(ollama)
    seed = ERASURES.index(command)
    ollama.chaos = Chaos(seed=seed, max_delay=0.02, failure_rate=0.0)
    delay = random.Random(seed)
    others = [5000 + n for n in range(4)]
    theirs = {p: f"O{n}PCANARY{2000 + n}" for n, p in enumerate(others)}
    async with _bot_with(tmp_path, ollama, database=database, context=SMALL_CONTEXT) as (echo, _):
        store = echo.runtime.store
        channels = [fakes.text_channel(echo, CHANNEL), fakes.text_channel(echo, CHANNEL + 1)]
        alices = await _talk(echo, channels[0], ALICE, _secret(ALICES))
        await _talk(echo, fakes.dm_channel(echo, DM_CHANNEL, ALICE), ALICE, _secret(ALICES_DM))
        [learned] = [m for m in await manage.list_memories(store, ALICE) if ALICES in m.text]

        said: list[int] = []
        talking = asyncio.Event()

        async def person(p: int) -> None:
            places = [*channels, fakes.dm_channel(echo, 40_000 + p, p)]
            for n in range(3):
                await asyncio.sleep(delay.uniform(0, 0.02))
                text = _secret(theirs[p]) if n == 0 else f"Le jardin {n} de {p} pousse bien."
                mention = f"<@{fakes.BOT_ID}> " if places[n] is channels[1] else ""
                await _say(echo, places[n], p, mention + text, mentions=[fakes.BOT_ID])
                said.append(p)
                if len(said) == len(others):  # four messages in: Alice erases while eight come
                    talking.set()
                await echo.runtime.worker.run_due()

        async def erase() -> None:
            await talking.wait()
            await asyncio.sleep(delay.uniform(0, 0.01))
            if command == "forget-me":
                await _press(echo, ConfirmErasure(ALICE, ALICE), ALICE)
            elif command == "forget-member":
                await _press(echo, ConfirmErasure(CAROL, ALICE, origin=str(fakes.GUILD_ID)), CAROL)
            elif command == "forget-this-message":
                await _menu(echo, ALICE, alices)
            else:
                press = fakes.component(echo, user_id=ALICE, channel_id=CHANNEL, custom_id="x")
                await ConfirmForget(ALICE, learned.id).confirm.callback(press)

        await asyncio.gather(*(person(p) for p in others), erase())
        await _drained(echo)
        assert await forgetting.settle_pending(store) == 0

        gone = {"forget-me": [ALICES, ALICES_DM], "forget-memory": [learned.text]}.get(
            command, [ALICES]
        )
        kept = [f"A pour code de coffre {ALICES_DM}"] if command != "forget-me" else []
        for words in gone:
            assert await _stored(echo, tmp_path, words) == 0, words
        if command == "forget-memory":  # the message it was learned from stays, as /forget says
            assert await _stored(echo, tmp_path, ALICES) > 0
        assert [m.text for m in await manage.list_memories(store, ALICE)] == kept
        for p in others:
            [memory] = await manage.list_memories(store, p)
            assert memory.text == f"A pour code de coffre {theirs[p]}"
            assert await _stored(echo, tmp_path, theirs[p]) > 0
        for who in (others[0], ALICE):
            prompt = await _next_prompt(echo, ollama, channels[0], who)
            assert not any(words in prompt for words in gone)
