"""/stats in a server shows that server's figures; the bot-wide ones are for the application's
owner (Discord's application info)."""

from __future__ import annotations

import asyncio
import re

import httpx

from bot.discord.app import EchoBot
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, MANAGE_GUILD, _opt, _say
from tests.fakes.ollama import FakeOllama
from tests.memory.followups.world import ASK, World, a_morning

OTHER_GUILD, OTHER_CHANNEL = 222, 60
MOD, OWNER = 1010, 1011

Bot = tuple[EchoBot, fakes.Recorder]


async def _stats(echo: EchoBot, who: int, **where: object) -> None:
    await echo.tree._call(fakes.interaction(echo, "stats", user_id=who, **where))  # type: ignore[arg-type]


async def test_a_servers_stats_count_that_server_only_and_the_owner_sees_everything(
    bot: Bot,
) -> None:
    echo, rec = bot
    rec.owner_id = OWNER
    here = fakes.text_channel(echo, CHANNEL)
    there = fakes.text_channel(echo, OTHER_CHANNEL, guild_id=OTHER_GUILD)
    remember = [_opt("text", "Aime le thé", 3)]
    await asyncio.gather(
        _say(echo, here, ALICE, "Bonjour"),
        _say(echo, there, BOB, f"<@{fakes.BOT_ID}> Salut", mentions=[fakes.BOT_ID]),
        _say(echo, there, ALICE, f"<@{fakes.BOT_ID}> Re", mentions=[fakes.BOT_ID]),
        echo.tree._call(fakes.interaction(echo, "remember", user_id=BOB, options=remember,
                                          channel_id=OTHER_CHANNEL, guild_id=OTHER_GUILD)),
    )  # fmt: skip
    await asyncio.gather(
        _stats(echo, MOD, channel_id=CHANNEL, permissions=MANAGE_GUILD),
        _stats(echo, MOD, channel_id=OTHER_CHANNEL, guild_id=OTHER_GUILD,
               permissions=MANAGE_GUILD),
        _stats(echo, ALICE, channel_id=CHANNEL),
        _stats(echo, ALICE, channel_id=40, in_guild=False),
    )  # fmt: skip
    answers = rec.contents()[-4:]  # in the order they finished
    for expected in (
        "Memories learned in this server: 0 (of 0 people)\nTurns here: 1 ·",  # the first
        "Memories learned in this server: 1 (of 1 person)\nTurns here: 2 ·",  # the second
        "You are missing Manage Server permission",  # Alice, in the first
        "cannot be used in direct messages",  # Alice, in DMs
    ):
        assert sum(expected in a for a in answers) == 1, expected
    assert all("Bot-wide" not in a and "turned away" not in a for a in answers)

    await _stats(echo, OWNER, channel_id=CHANNEL)  # no Manage Server needed: it is theirs
    owner = rec.contents()[-1]
    assert owner.startswith("Memories learned in this server: 0")
    assert "**Bot-wide** (you own the bot)\nMemories: 1 (of 1 person)" in owner
    assert "Turns with recall by meaning: 3 · without it (all time, answered or not): 0" in owner
    # The loop-lag monitor runs with the bot; no turn here waited for a matrix (a few memories).
    assert re.search(r"Longest event-loop stall in the last minute: \d+ ms", owner)
    assert "turns served before their vectors were loaded: 0" in owner
    await _stats(echo, OWNER, channel_id=41, in_guild=False)
    assert rec.contents()[-1].startswith("**Bot-wide**")


async def test_the_owners_stats_count_follow_ups_and_show_none_of_their_words(
    bot: Bot, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    echo, rec = bot
    rec.owner_id = OWNER
    await _stats(echo, OWNER, channel_id=CHANNEL)
    assert "Follow-ups" not in rec.contents()[-1]  # none yet: no line
    await a_morning(World(echo.runtime.store, ollama, http))
    await _stats(echo, OWNER, channel_id=CHANNEL)
    shown = rec.contents()[-1]
    assert (
        "Follow-ups: 1 planned · 2 sent · 0 refused (DMs closed) · 1 dropped (by its person 1)"
        in shown
    )
    assert ASK not in shown and "interview" not in shown
