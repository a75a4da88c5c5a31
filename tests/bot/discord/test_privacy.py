"""Where a person's memories are served: where they were learned by default, everywhere when the
person chooses it with /privacy (or the owner's default says so); /why and /memories say where
each memory can be used. Through the cogs, several people and places at once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from bot.discord.app import EchoBot
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _bot_with, _command, _opt, _say
from tests.fakes.canary import reflection_request
from tests.fakes.ollama import FakeOllama

OTHER_GUILD, OTHER_GUILD_CHANNEL = 222, 60
DM_CHANNEL = 70
CAT = "Alice has a ginger cat called Felix"
CELLO = "Bob plays the cello"
SECRET = "Alice keeps her diary under the lighthouse stairs"


def _served(ollama: FakeOllama, who: int, text: str) -> str:
    """The system message of this person's last reply prompt for this message."""
    return next(
        p["messages"][0]["content"]
        for path, p in reversed(ollama.calls)
        if path == "/api/chat" and reflection_request(p) is None
        and p["messages"][-1]["content"] == f"user{who}: {text}"
    )  # fmt: skip


async def _remember(echo: EchoBot, who: int, text: str, **where: Any) -> None:
    await echo.tree._call(fakes.interaction(
        echo, "remember", user_id=who, options=[_opt("text", text, 3)], **where,
    ))  # fmt: skip


async def _everywhere_at_once(echo: EchoBot, text: str) -> None:
    """Alice in the first server, the second server and DMs, and Bob in both servers."""
    here = fakes.text_channel(echo, CHANNEL)
    there = fakes.text_channel(echo, OTHER_GUILD_CHANNEL, guild_id=OTHER_GUILD)
    mention = {"mentions": [fakes.BOT_ID]}
    await asyncio.gather(
        _say(echo, here, ALICE, f"{text} ici"),
        _say(echo, there, ALICE, f"<@{fakes.BOT_ID}> {text} là-bas", **mention),
        _say(echo, fakes.dm_channel(echo, DM_CHANNEL, ALICE), ALICE, f"{text} en privé"),
        _say(echo, here, BOB, f"{text} ici"),
        _say(echo, there, BOB, f"<@{fakes.BOT_ID}> {text} là-bas", **mention),
    )


async def test_memories_are_served_where_learned_until_the_person_opts_in(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        await asyncio.gather(
            _remember(echo, ALICE, CAT, channel_id=CHANNEL),
            _remember(echo, ALICE, SECRET, channel_id=DM_CHANNEL, in_guild=False),
            _remember(echo, BOB, CELLO, channel_id=OTHER_GUILD_CHANNEL, guild_id=OTHER_GUILD),
        )
        await _everywhere_at_once(echo, "Bonjour")
        assert CAT in _served(ollama, ALICE, "Bonjour ici")
        assert CAT not in _served(ollama, ALICE, "Bonjour là-bas")
        assert CAT not in _served(ollama, ALICE, "Bonjour en privé")
        assert SECRET in _served(ollama, ALICE, "Bonjour en privé")
        assert CELLO in _served(ollama, BOB, "Bonjour là-bas")
        assert CELLO not in _served(ollama, BOB, "Bonjour ici")
        await _command(echo, "memories", ALICE)
        listing = rec.contents()[-1]
        assert f"only in server {fakes.GUILD_ID}" in listing and "only in DMs" in listing
        await _command(echo, "why", ALICE)
        [line] = [line for line in rec.contents()[-1].splitlines() if CAT in line]
        assert f"· only in server {fakes.GUILD_ID} ·" in line

        await _command(echo, "privacy", ALICE)
        assert rec.contents()[-1].startswith("Each memory is used only where you said it")
        await _command(echo, "privacy", ALICE, options=[_opt("memories", "everywhere", 3)])
        assert "in every server and in DMs (your choice)" in rec.contents()[-1]
        await _everywhere_at_once(echo, "Re")
        for where in ("ici", "là-bas", "en privé"):
            assert CAT in _served(ollama, ALICE, f"Re {where}")
        assert SECRET not in _served(ollama, ALICE, "Re ici")  # DMs stay DMs
        assert SECRET not in _served(ollama, ALICE, "Re là-bas")
        assert CELLO not in _served(ollama, BOB, "Re ici")  # Bob did not opt in
        await _command(echo, "memories", ALICE)
        assert "in every server and DMs" in rec.contents()[-1]

        await _command(echo, "privacy", ALICE, options=[_opt("memories", "default", 3)])
        assert "(the default here)" in rec.contents()[-1]
        await _everywhere_at_once(echo, "Encore")
        assert CAT not in _served(ollama, ALICE, "Encore là-bas")


async def test_the_owner_may_serve_memories_everywhere_by_default(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _bot_with(
        tmp_path, ollama, database=database, privacy={"memories_served": "everywhere"}
    ) as (
        echo,
        rec,
    ):
        await _remember(echo, ALICE, CAT, channel_id=CHANNEL)
        await _remember(echo, BOB, CELLO, channel_id=CHANNEL)
        await _command(echo, "privacy", BOB, options=[_opt("memories", "where_learned", 3)])
        await _everywhere_at_once(echo, "Salut")
        assert CAT in _served(ollama, ALICE, "Salut là-bas")
        assert CELLO in _served(ollama, BOB, "Salut ici")
        assert CELLO not in _served(ollama, BOB, "Salut là-bas")
        await _command(echo, "privacy", ALICE, options=[_opt("memories", "nowhere", 3)])
        assert rec.contents()[-1] == "choose where_learned, everywhere or default, not 'nowhere'."


async def test_a_memory_a_reflection_learned_in_one_server_stays_there(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Learned from a conversation, not /remember: the reflection's memory is served in the
    server where it was said, and a repeat in another server does not merge into it."""

    def answer(payload: dict[str, Any]) -> str:
        asked = reflection_request(payload)
        if asked is None:
            return "D'accord."
        found = [{"text": "Has a ginger cat called Felix", "kind": "fact", "scope": "global",
                  "confidence": 0.95}]  # fmt: skip
        return json.dumps({"memories": found if "Felix" in asked["user_message"] else [],
                           "summary": "", "state": {}})  # fmt: skip

    ollama.chat_reply = answer
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        there = fakes.text_channel(echo, OTHER_GUILD_CHANNEL, guild_id=OTHER_GUILD)
        await asyncio.gather(
            _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "Mon chat s'appelle Felix."),
            _say(echo, there, ALICE, f"<@{fakes.BOT_ID}> Mon chat s'appelle Felix.",
                 mentions=[fakes.BOT_ID]),
        )  # fmt: skip
        await asyncio.gather(*getattr(echo.get_cog("Conversation"), "_background", ()))
        await echo.runtime.worker.run_due()
        rows = await echo.runtime.store.fetchall(
            "SELECT origin FROM memories WHERE user_id = ? ORDER BY origin", (ALICE,)
        )
        assert [r[0] for r in rows] == [str(fakes.GUILD_ID), str(OTHER_GUILD)]
