"""Quick lines on Discord: a person's lines that come before the answer to the first one shows
are answered as one turn, after a short pause with no other line; a lone message waits for
nothing. Real discord.py messages, the loopback Ollama, the cog's pace on a virtual clock."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from bot.discord import streaming
from bot.discord.app import EchoBot
from memory import manage
from memory.manage import forgetting
from memory.store.tables import history
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _bot_with
from tests.bot.discord.test_following import _delete
from tests.bot.discord.test_streaming import VirtualClock
from tests.fakes import canary as canaries
from tests.fakes.ollama import FakeOllama

# `[discord] quick_pause`'s default.
QUICK_PAUSE = 2.0


def _answers(ollama: FakeOllama, held: asyncio.Event) -> list[dict[str, Any]]:
    """Replies name the last line they answer; a line holding "attends" waits for `held` (a
    slow model still writing when the next line comes). Returns what reflections were given."""
    given: list[dict[str, Any]] = []

    def reply(payload: dict[str, Any]) -> str:
        said = str(payload["messages"][-1]["content"])
        if "format" in payload:
            given.append(json.loads(said))
            return json.dumps({"memories": [], "summary": "", "state": {}})
        return f"réponse à : {said.split(': ', 1)[-1]}"

    async def pause(payload: dict[str, Any]) -> None:
        if "format" not in payload and "attends" in str(payload["messages"][-1]["content"]):
            await held.wait()

    ollama.chat_reply, ollama.pause = reply, pause
    return given


def _paced(echo: EchoBot, clock: VirtualClock) -> None:
    cog: Any = echo.get_cog("Conversation")
    cog.pace = streaming.Pace(interval=1.0, first_wait=0.5, clock=clock, sleep=clock.sleep)


async def _line(echo: EchoBot, clock: VirtualClock, at: float, author: int, text: str) -> Any:
    await clock.sleep(at)
    message = fakes.message(echo, fakes.text_channel(echo, CHANNEL), author_id=author, content=text)
    await echo.get_cog("Conversation").on_message(message)  # type: ignore[union-attr]
    return message


async def _reflected(echo: EchoBot) -> None:
    """The reflections the cog started after its replies, done."""
    cog: Any = echo.get_cog("Conversation")
    await asyncio.gather(*cog._background)
    await echo.after_turns()


def _replies(rec: fakes.Recorder) -> list[dict[str, Any]]:
    return [s.payload for s in rec.sent if s.method == "POST" and s.path.endswith("/messages")]


async def test_three_quick_lines_get_one_reply_to_the_last(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    held = asyncio.Event()
    given = _answers(ollama, held)
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        clock = VirtualClock()
        _paced(echo, clock)
        lines = ["attends", "j'ai un truc à te dire", "j'ai eu le poste !!"]
        sent = asyncio.gather(
            *(_line(echo, clock, at, ALICE, t) for at, t in zip((0, 0.7, 1.5), lines, strict=True))
        )
        await clock.run(sent)
        held.set()
        messages = sent.result()
        [reply] = _replies(rec)
        assert reply["content"] == "réponse à : j'ai eu le poste !!"
        assert int(reply["message_reference"]["message_id"]) == messages[-1].id
        stored = await history.recent(echo.runtime.store, CHANNEL, limit=10)
        assert [m.content for m in stored] == [*lines, "réponse à : j'ai eu le poste !!"]
        # The reflection read the three lines as one message.
        await _reflected(echo)
        assert [g["user_message"] for g in given] == ["\n".join(lines)]
        # Answered the quick pause after the last line, never before.
        assert clock.now >= 1.5 + QUICK_PAUSE


async def test_a_lone_message_waits_for_nothing(tmp_path: Path, ollama: FakeOllama) -> None:
    _answers(ollama, asyncio.Event())
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        clock = VirtualClock()
        _paced(echo, clock)
        await clock.run(_line(echo, clock, 0, ALICE, "salut"))
        [reply] = _replies(rec)
        assert reply["content"] == "réponse à : salut" and clock.now == 0.0


async def test_a_mention_ends_the_wait_and_a_shown_answer_is_not_stopped(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    held = asyncio.Event()
    _answers(ollama, held)
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        clock = VirtualClock()
        _paced(echo, clock)

        async def mention() -> None:
            await clock.sleep(0.5)
            message = fakes.message(
                echo, fakes.text_channel(echo, CHANNEL), author_id=ALICE,
                content=f"<@{fakes.BOT_ID}> tu es là ?", mentions=[fakes.BOT_ID],
            )  # fmt: skip
            await echo.get_cog("Conversation").on_message(message)  # type: ignore[union-attr]

        await clock.run(_line(echo, clock, 0, ALICE, "attends"), mention())
        held.set()
        [reply] = _replies(rec)
        assert reply["content"] == "réponse à : tu es là ?" and clock.now == 0.5
        # The next line, after the reply showed: a turn of its own, as always.
        await clock.run(_line(echo, clock, 1, ALICE, "merci"))
        assert [r["content"] for r in _replies(rec)][-1] == "réponse à : merci"


async def test_forgetting_a_quick_line_forgets_the_turn_that_read_it(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    held = asyncio.Event()
    canary = "zygomorphe"
    _answers(ollama, held)
    ollama.chat_reply = (
        lambda p: json.dumps(
            {"memories": [{"text": f"A un secret : {canary}", "kind": "fact",
                           "scope": "global", "confidence": 0.9}], "summary": "", "state": {}}
        )
        if "format" in p
        else "d'accord"
    )  # fmt: skip
    async with _bot_with(tmp_path, ollama) as (echo, _):
        clock = VirtualClock()
        _paced(echo, clock)
        sent = asyncio.gather(
            _line(echo, clock, 0, ALICE, f"attends, mon secret c'est {canary}"),
            _line(echo, clock, 0.5, ALICE, "voilà"),
        )
        await clock.run(sent)
        held.set()
        await _reflected(echo)
        assert await manage.list_memories(echo.runtime.store, ALICE)
        first = await history.by_source(echo.runtime.store, f"discord:{sent.result()[0].id}")
        await forgetting.forget_message(
            echo.runtime.store, first, actor_id=ALICE, engine=echo.runtime.engine
        )
        assert await manage.list_memories(echo.runtime.store, ALICE) == []
        stored = [m.content for m in await history.recent(echo.runtime.store, CHANNEL, limit=10)]
        assert not any(canary in m for m in stored)
        assert await canaries.stored(echo.runtime.store, tmp_path, canary) == 0


async def test_people_writing_quick_lines_at_once_each_get_one_reply(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    held = asyncio.Event()
    _answers(ollama, held)
    rng = random.Random(5)
    people = [ALICE, BOB, *range(2000, 2006)]
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        clock = VirtualClock()
        _paced(echo, clock)
        steps = []
        for person in people:
            start = rng.uniform(0, 3)
            steps += [
                _line(echo, clock, start, person, f"attends {person}"),
                _line(echo, clock, start + rng.uniform(0.1, 1.0), person, f"fin {person}"),
            ]
        await clock.run(*steps)
        held.set()
        contents = sorted(r["content"] for r in _replies(rec))
        assert contents == sorted(f"réponse à : fin {p}" for p in people)
        stored = [m.content for m in await history.recent(echo.runtime.store, CHANNEL, limit=60)]
        for person in people:
            assert stored.count(f"attends {person}") == 1 and stored.count(f"fin {person}") == 1


async def test_the_last_line_deleted_before_its_turn_leaves_the_others_answered(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """Deleted during the pause (before its turn stored it): nothing of it is kept, and the
    line before it is answered all the same."""
    secret = "QX7PAPILLON"
    deleted = asyncio.Event()
    _answers(ollama, asyncio.Event())

    async def pause(payload: dict[str, Any]) -> None:
        if "format" not in payload:
            await deleted.wait()  # the first answer is still being written then

    ollama.pause = pause
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        clock = VirtualClock()
        channel = fakes.text_channel(echo, CHANNEL)
        cog: Any = echo.get_cog("Conversation")
        second = fakes.message(echo, channel, author_id=ALICE, content=f"mon code : {secret}")

        async def sleep(seconds: float) -> None:
            if seconds == QUICK_PAUSE and not deleted.is_set():  # the second line waits
                await _delete(echo, second.id)
                deleted.set()
            await clock.sleep(seconds)

        cog.pace = streaming.Pace(interval=1.0, first_wait=0.5, clock=clock, sleep=sleep)

        async def then_deleted() -> None:
            await clock.sleep(0.5)
            await cog.on_message(second)

        await clock.run(_line(echo, clock, 0, ALICE, "attends"), then_deleted())
        [reply] = _replies(rec)
        assert reply["content"] == "réponse à : attends"
        stored = [m.content for m in await history.recent(echo.runtime.store, CHANNEL, limit=10)]
        assert stored == ["attends", "réponse à : attends"]
        await _reflected(echo)
        assert await canaries.stored(echo.runtime.store, tmp_path, secret) == 0
