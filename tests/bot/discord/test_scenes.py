"""Scenes with several characters in one channel: the one named or replied to answers, else the
channel's default; a character's message makes another answer only within `[discord]
scene_chain`. Real discord.py objects; the characters' own webhook messages come back through
on_message as the gateway brings them."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord
import pytest

from bot.discord.app import EchoBot
from bot.discord.cogs.erasure import ConfirmErasure
from bot.discord.scenes import named
from tests.bot import discord_fakes as fakes
from tests.bot.discord import test_following as following
from tests.bot.discord.test_discord import CHANNEL, _bot_with, _say
from tests.bot.discord.test_erasure import _press
from tests.fakes import canary
from tests.fakes.ollama import Chaos, FakeOllama
from tests.memory.character.test_cards import v2
from tests.timebox import within

ALICE, BOB = 1001, 1002
OTHER, THIRD = 20, 30


def _characters(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"key": "ada", "name": "Ada", "persona": "Ada tient la librairie.", "default": True,
         "channels": [CHANNEL, OTHER, THIRD]},
        {"key": "bo", "name": "Bo", "persona": "Bo répare les vélos.",
         "channels": [CHANNEL, OTHER, THIRD]},
        *extra,
    ]  # fmt: skip


@asynccontextmanager
async def _scene(
    tmp_path: Path, ollama: FakeOllama, *, chain: int = 0, webhooks: bool = True, **kw: Any
) -> AsyncIterator[tuple[EchoBot, fakes.Recorder]]:
    async with _bot_with(
        tmp_path, ollama, characters=kw.pop("characters", _characters()),
        discord={"channels": [CHANNEL], "scene_chain": chain}, **kw,
    ) as (echo, rec):  # fmt: skip
        if webhooks:
            fakes.allow_webhooks(echo)
        yield echo, rec


def _speakers(rec: fakes.Recorder) -> list[str]:
    return [str(p.payload["username"]) for p in rec.webhook_posts()]


async def _echo_back(echo: EchoBot, channel: Any, post: fakes.Sent) -> None:
    """The gateway brings a webhook's message back to the bot."""
    await echo.get_cog("Conversation").on_message(fakes.received(echo, channel, post))  # type: ignore[union-attr]


async def test_the_character_named_answers_else_the_default(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _scene(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "bo, tu répares mon vélo ?")
        await _say(echo, channel, ALICE, "Bonjour à tous")  # "Bo" is not a word of it
        await _say(echo, channel, BOB, "Alors ADA, ce livre ?")
        await _say(echo, channel, BOB, "Ada, demande à Bo.")  # the first named answers
    assert _speakers(rec) == ["Bo", "Ada", "Ada", "Ada"]
    # One webhook per character in the channel, each made once.
    assert sorted(str(s.payload["name"]).split(" · ")[1] for s in rec.webhook_creations()) == [
        "ada", "bo",
    ]  # fmt: skip


async def test_the_character_replied_to_answers(tmp_path: Path, ollama: FakeOllama) -> None:
    async with _scene(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "Bo ?")
        bos = rec.webhook_posts()[-1].answer
        await _say(echo, channel, ALICE, "Et la chaîne ?", reply_to=bos)
        # Where the bot is only mentioned, Bo does not play: the default answers, and a reply
        # to its webhook message reaches it without a mention.
        elsewhere = fakes.text_channel(echo, 40)
        await _say(echo, elsewhere, BOB, "Bo, ici ?", mentions=[fakes.BOT_ID])
        there = rec.webhook_posts()[-1].answer
        await _say(echo, elsewhere, BOB, "Tu m'entends ?", reply_to=there)
    assert _speakers(rec) == ["Bo", "Bo", "Ada", "Ada"]


async def test_without_webhooks_the_bot_names_who_speaks_and_replies_find_them(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_replies = ["Voilà ton vélo."]
    async with _scene(tmp_path, ollama, webhooks=False) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "Bo, mon vélo ?")
        [first] = [s for s in rec.sent if s.path == f"/channels/{CHANNEL}/messages"]
        assert first.payload["content"] == "**Bo**\nVoilà ton vélo."
        mine = fakes._message_payload(CHANNEL, first.payload["content"])
        await _say(echo, channel, ALICE, "Merci !", reply_to=mine)
    replies = [s for s in rec.sent if s.path == f"/channels/{CHANNEL}/messages"]
    assert str(replies[-1].payload["content"]).startswith("**Bo**\n")


async def test_a_card_with_a_2100_character_name_answers_beside_another_character(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """The bot speaks itself (no Manage Webhooks), the long-named character's name heading the
    reply: the name is cut to Discord's 80 characters where the character is built, and the
    reply goes out, each part within 2,000 characters."""
    ollama.chat_replies = ["Bienvenue au phare."]
    card = tmp_path / "long.json"
    card.write_text(json.dumps(v2(name="N" * 2100, character_book=None)), encoding="utf-8")
    long = {"key": "long", "card": str(card), "default": True, "channels": [CHANNEL]}
    cast = [long, {**_characters()[1], "channels": [CHANNEL]}]
    async with _scene(tmp_path, ollama, webhooks=False, characters=cast) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        with within(20.0):  # on a name longer than a message, the split never ended
            await _say(echo, channel, ALICE, "Il y a quelqu'un ?")
    posts = [s for s in rec.sent if s.path == f"/channels/{CHANNEL}/messages"]
    said = [str(s.payload["content"]) for s in posts]
    assert said and all(len(c) <= 2000 for c in said)
    heading = "**" + "N" * 80 + "**"
    assert said[0].startswith(heading + "\n")
    assert "Bienvenue au phare." in said[-1]


async def test_many_people_talk_at_once_to_a_long_named_character_and_each_is_answered(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = lambda payload: "Oui ?"
    card = tmp_path / "long.json"
    card.write_text(json.dumps(v2(name="N" * 2100, character_book=None)), encoding="utf-8")
    places = [CHANNEL, OTHER, THIRD]
    long = {"key": "long", "card": str(card), "default": True, "channels": places}
    async with _scene(tmp_path, ollama, webhooks=False,
                      characters=[long, _characters()[1]]) as (echo, rec):  # fmt: skip
        channels = [fakes.text_channel(echo, place) for place in places]
        with within(30.0):
            await asyncio.gather(*(
                _say(echo, channels[n % 3], ALICE + n, f"Allô {n} ?", mentions=[fakes.BOT_ID])
                for n in range(12)
            ))  # fmt: skip
    replies = [s for s in rec.sent if s.path.endswith("/messages") and s.method == "POST"]
    answered = {s.payload["message_reference"]["message_id"] for s in replies}
    assert len(answered) == 12
    assert all(len(str(s.payload["content"])) <= 2000 for s in replies)


@pytest.mark.parametrize("chain", [0, 1, 3])
async def test_characters_answer_each_other_at_most_scene_chain_times(
    tmp_path: Path, ollama: FakeOllama, chain: int
) -> None:
    ollama.chat_reply = lambda payload: "Ada, Bo : on en parle ?"  # names both, always
    async with _scene(tmp_path, ollama, chain=chain) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        for round_ in range(2):
            before = len(rec.webhook_posts())
            await _say(echo, channel, ALICE, "Ada ?")
            # Every character's message comes back to the bot, as the gateway sends it.
            seen = before
            while seen < len(rec.webhook_posts()):
                seen += 1
                await _echo_back(echo, channel, rec.webhook_posts()[seen - 1])
            speakers = _speakers(rec)[before:]
            # The person's answer, then at most `chain` characters answering the other one.
            assert speakers == ["Ada", "Bo", "Ada", "Bo"][: 1 + chain], round_


async def test_a_characters_message_replayed_by_the_gateway_spends_the_chain_once(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """Every character's message comes back twice (a gateway replay, the same message id):
    with scene_chain = 3 the characters still answer each other three times, not fewer."""
    ollama.chat_reply = lambda payload: "Ada, Bo : on en parle ?"  # names both, always
    async with _scene(tmp_path, ollama, chain=3) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "Ada ?")
        seen = 0
        while seen < len(rec.webhook_posts()):
            seen += 1
            post = rec.webhook_posts()[seen - 1]
            await _echo_back(echo, channel, post)
            await _echo_back(echo, channel, post)  # the replay
        assert _speakers(rec) == ["Ada", "Bo", "Ada", "Bo"]


async def test_a_character_never_answers_itself_nor_another_bot(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = lambda payload: "Ada ici."
    async with _scene(tmp_path, ollama, chain=5) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "Ada ?")
        await _echo_back(echo, channel, rec.webhook_posts()[-1])  # names only herself
        await _say(echo, channel, 4242, "Bo, Ada !", author_bot=True)  # another bot
    assert _speakers(rec) == ["Ada"]


@dataclass(frozen=True)
class Played:
    key: str
    name: str
    avatar: bytes | None = None


def test_a_name_is_matched_as_a_whole_word_whatever_its_case() -> None:
    cast = [Played("ada", "Ada"), Played("bo", "Bo"), Played("jd", "J.D.")]
    assert named("BO!", cast) == cast[1]
    assert named("bonjour, adam", cast) is None
    assert named("Bo puis Ada", cast) == cast[1]
    assert named("alors j.d., et ada", cast) == cast[2]
    assert named("", cast) is None


async def test_characters_answer_people_in_several_channels_at_once(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chaos = Chaos(seed=33, max_delay=0.03, failure_rate=0.0)
    cy = {"key": "cy", "name": "Cy", "persona": "Cy chante.", "channels": [THIRD]}
    async with _scene(tmp_path, ollama, characters=_characters(cy)) as (echo, rec):
        rec.jitter = random.Random(33)
        cog = echo.get_cog("Conversation")
        echo_channels = {c: fakes.text_channel(echo, c) for c in (CHANNEL, OTHER, THIRD)}
        rng = random.Random(33)
        expected: dict[int, str] = {}
        said = []
        person = 2000
        for channel_id, channel in echo_channels.items():
            cast = ["Ada", "Bo", "Cy"] if channel_id == THIRD else ["Ada", "Bo"]
            for _ in range(6):
                person += 1
                who = rng.choice([*cast, ""])
                text = f"{who}, une question" if who else "Une question"
                message = fakes.message(echo, channel, author_id=person, content=text,
                                        mentions=[fakes.BOT_ID])  # fmt: skip
                expected[message.id] = who or "Ada"
                said.append(message)
        rng.shuffle(said)
        await asyncio.gather(*(cog.on_message(m) for m in said))  # type: ignore[union-attr]
    answered: dict[int, list[str]] = {}
    for post in rec.webhook_posts():
        link = str(post.payload["content"]).split("\n", 1)[0]
        answered.setdefault(int(link.rsplit("/", 1)[1]), []).append(str(post.payload["username"]))
    assert {m: names[0] for m, names in answered.items()} == expected
    assert all(len(names) == 1 for names in answered.values())  # once each
    # One webhook per character and channel, made once however many answered at once.
    made = sorted((s.path, str(s.payload["name"]).split(" · ")[1]) for s in rec.webhook_creations())
    pairs = {(f"/channels/{m.channel.id}/webhooks", expected[m.id].lower()) for m in said}
    assert made == sorted(pairs)


async def test_a_deleted_message_leaves_nothing_in_the_character_that_answered_its_reply(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Concurrent twin, in three channels at once: a person tells Ada a secret, her reply
    quotes it and names Bo, who answers her (a chain of 1). Two of them delete their message:
    nothing of it stays, in Bo's memory and story neither; the third's stays."""
    canary.script(ollama)
    quoting = ollama.chat_reply
    assert quoting is not None
    ollama.chat_reply = lambda p: quoting(p) + ("" if canary.reflection_request(p) else " Bo ?")
    ollama.chaos = Chaos(seed=34, max_delay=0.02, failure_rate=0.0)
    codes = {CHANNEL: "CH1CANARY1010", OTHER: "CH2CANARY2020", THIRD: "CH3CANARY3030"}
    async with _scene(tmp_path, ollama, chain=1, database=database) as (echo, rec):
        cog = echo.get_cog("Conversation")
        cog.channels |= {OTHER, THIRD}  # type: ignore[union-attr]

        async def scene(channel_id: int) -> discord.Message:
            channel = fakes.text_channel(echo, channel_id)
            said = await _say(
                echo, channel, 3000 + channel_id, f"Mon code est {codes[channel_id]}."
            )
            [adas] = [p for p in rec.webhook_posts() if str(said.id) in str(p.payload["content"])]
            await _echo_back(echo, channel, adas)
            return said

        said = await asyncio.gather(*(scene(c) for c in codes))
        assert _speakers(rec).count("Bo") == 3
        await asyncio.gather(*getattr(cog, "_background", ()))
        await echo.runtime.worker.run_due(limit=20)
        for code in codes.values():
            assert await canary.stored(echo.runtime.store, tmp_path, code) > 0

        await asyncio.gather(*(following._delete(echo, m.id, m.channel.id) for m in said[:2]))
        await following._settled(echo)
        for code in list(codes.values())[:2]:
            assert await canary.stored(echo.runtime.store, tmp_path, code) == 0, code
        assert await canary.stored(echo.runtime.store, tmp_path, codes[THIRD]) > 0


async def test_forget_me_leaves_nothing_in_the_character_that_answered_a_reply(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    quoting = ollama.chat_reply
    assert quoting is not None
    ollama.chat_reply = lambda p: quoting(p) + ("" if canary.reflection_request(p) else " Bo ?")
    code = "FM4CANARY4040"
    async with _scene(tmp_path, ollama, chain=1, database=database) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, f"Mon code est {code}.")
        await _echo_back(echo, channel, rec.webhook_posts()[-1])
        assert _speakers(rec) == ["Ada", "Bo"]
        await asyncio.gather(*getattr(echo.get_cog("Conversation"), "_background", ()))
        await echo.runtime.worker.run_due(limit=20)
        await _press(echo, ConfirmErasure(ALICE, ALICE), ALICE)
        await following._settled(echo)
        assert await canary.stored(echo.runtime.store, tmp_path, code) == 0


async def test_an_edit_takes_the_old_wording_out_of_the_character_that_answered_the_reply(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    quoting = ollama.chat_reply
    assert quoting is not None
    ollama.chat_reply = lambda p: quoting(p) + ("" if canary.reflection_request(p) else " Bo ?")
    old, new = "ED5CANARY5050", "ED6CANARY6060"
    async with _scene(tmp_path, ollama, chain=1, database=database) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        said = await _say(echo, channel, ALICE, f"Mon code est {old}.")
        await _echo_back(echo, channel, rec.webhook_posts()[-1])
        assert _speakers(rec) == ["Ada", "Bo"]
        await following._reflect(echo)
        await following._edit(echo, said, f"Mon code est {new}.")
        await following._reflect(echo)
        await following._settled(echo)
        assert await canary.stored(echo.runtime.store, tmp_path, old) == 0
        assert await canary.stored(echo.runtime.store, tmp_path, new) > 0


async def test_a_reply_to_a_characters_webhook_message_is_answered_after_a_restart(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """Where only a mention or a reply reaches the bot, a reply to a character's webhook
    message from before a restart still does; one to another application's webhook does
    not, and that webhook is not taken for a character of the same name."""
    async with _scene(tmp_path, ollama) as (echo, rec):
        elsewhere = fakes.text_channel(echo, 40)
        await _say(echo, elsewhere, BOB, "Ada, ici ?", mentions=[fakes.BOT_ID])
        adas = rec.webhook_posts()[-1].answer
        assert adas is not None
        faces = echo.get_cog("Conversation").faces  # type: ignore[union-attr]
        faces.speakers.clear()  # what a restart forgets
        faces._hooks.clear()
        await _say(echo, elsewhere, BOB, "Tu m'entends ?", reply_to=adas)
        assert _speakers(rec) == ["Ada", "Ada"]
        foreign = {**adas, "id": "777", "webhook_id": "4242", "application_id": "4343"}
        await _say(echo, elsewhere, BOB, "Et toi ?", reply_to=foreign)
        assert _speakers(rec) == ["Ada", "Ada"] and len(rec.messages()) == 2
        # Where both play, another application's webhook named like Bo is not Bo.
        named_bo = {**foreign, "channel_id": str(CHANNEL),
                    "author": {**foreign["author"], "username": "Bo"}}  # fmt: skip
        await _say(echo, fakes.text_channel(echo, CHANNEL), BOB, "Hein ?", reply_to=named_bo)
        assert _speakers(rec) == ["Ada", "Ada", "Ada"]
