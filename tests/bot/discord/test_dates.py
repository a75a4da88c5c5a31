"""When and where you told me: /why and /memories through real discord.py interactions show
each memory's date in the character's time zone and a jump link to the message it was learned
from, the date alone once that message is forgotten; many people at once each see their own."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.discord.app import EchoBot
from memory import manage
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import _bot_with, _opt, _say
from tests.fakes.ollama import FakeOllama

ALICE = 1001
CHANNEL = 10
PARIS = ZoneInfo("Europe/Paris")
DAY = 86_400.0
# Wednesday 2 December 2026, 15:00 in Paris: the commands' "now".
NOW = datetime(2026, 12, 2, 15, 0, tzinfo=PARIS).timestamp()
LINK = "https://discord.com/channels/{place}/{channel}/{message}"


def _reflect(payload: dict[str, Any]) -> str:
    """The loopback model: a short reply, and a reflection that keeps what the person said."""
    if "format" not in payload:
        return "Noted!"
    said = json.loads(payload["messages"][1]["content"])["user_message"]
    memory = {"text": said, "kind": "fact", "scope": "global", "confidence": 0.95}
    return json.dumps({"memories": [memory], "summary": "", "state": {}})


async def _told(echo: EchoBot, who: int, text: str, channel: Any, *, days_ago: float) -> int:
    """`who` says `text` in `channel`; the reflection keeps it as a memory; the message and the
    memory are moved `days_ago` before NOW. Return the message's id."""
    message = await _say(echo, channel, who, text)
    await echo.runtime.worker.reflect_now(f"discord:{message.id}")
    at = NOW - days_ago * DAY

    async def back(tx: Any) -> None:
        await tx.execute("UPDATE messages SET created_at = ? WHERE source_id = ?",
                         (at, f"discord:{message.id}"))  # fmt: skip
        await tx.execute("UPDATE memories SET created_at = ? WHERE user_id = ? AND text = ?",
                         (at - DAY, who, text))  # fmt: skip

    await echo.runtime.store.transact(back)
    return message.id


async def _command(echo: EchoBot, name: str, who: int, channel_id: int, **kw: Any) -> None:
    await echo.tree._call(fakes.interaction(echo, name, user_id=who, channel_id=channel_id, **kw))


def _line(content: str, text: str) -> str:
    [line] = [line for line in content.splitlines() if line.endswith(f"— {text}")]
    return line


async def test_why_and_memories_show_the_date_and_a_link_to_the_message_then_the_date_alone(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = _reflect
    async with _bot_with(tmp_path, ollama, database=database,
                         character={"timezone": "Europe/Paris"}) as (echo, rec):  # fmt: skip
        echo.runtime.engine.clock = lambda: NOW
        channel = fakes.text_channel(echo, CHANNEL)
        cello = await _told(echo, ALICE, "Alice plays the cello", channel, days_ago=21)
        dm = fakes.dm_channel(echo, 555, ALICE)
        bees = await _told(echo, ALICE, "Alice keeps bees", dm, days_ago=1)
        in_guild = LINK.format(place=fakes.GUILD_ID, channel=CHANNEL, message=cello)
        in_dm = LINK.format(place="@me", channel=555, message=bees)

        await _command(echo, "memories", ALICE, CHANNEL)
        page = rec.contents()[-1]
        assert f"· said 11 Nov, three weeks ago · [message]({in_guild}) —" in _line(
            page, "Alice plays the cello"
        )
        assert f"· said yesterday · [message]({in_dm}) —" in _line(page, "Alice keeps bees")
        await _say(echo, channel, ALICE, "what do I play?")
        await _command(echo, "why", ALICE, CHANNEL)
        why = rec.contents()[-1]
        assert f"· said 11 Nov, three weeks ago · [message]({in_guild}) —" in _line(
            why, "Alice plays the cello"
        )
        # In the DM, the DM's memory and its link (where_learned: only there).
        await _say(echo, dm, ALICE, "and my bees?")
        await _command(echo, "why", ALICE, 555, in_guild=False)
        assert f"· said yesterday · [message]({in_dm}) —" in _line(
            rec.contents()[-1], "Alice keeps bees"
        )

        # Said again by the person themself, the memory stands without its message: forgotten,
        # the message has no link any more; the date is the memory's own.
        await _command(echo, "remember", ALICE, CHANNEL,
                       options=[_opt("text", "Alice plays the cello", 3)])  # fmt: skip
        target = fakes.message(echo, channel, author_id=ALICE, content="x", message_id=cello)
        await echo.tree._call(fakes.message_command(
            echo, "Forget this message", user_id=ALICE, channel_id=CHANNEL, target=target,
        ))  # fmt: skip
        assert "Alice plays the cello" in {
            m.text for m in await manage.list_memories(echo.runtime.store, ALICE)
        }
        await _command(echo, "memories", ALICE, CHANNEL)
        line = _line(rec.contents()[-1], "Alice plays the cello")
        assert "· said 10 Nov, three weeks ago —" in line and "discord.com" not in line
        for sent in rec.messages()[-1:]:
            assert sent["allowed_mentions"] == {"parse": []}


async def test_many_people_at_once_each_see_their_own_dates_and_links(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """The concurrent twin: people who told the bot things on different days, in different
    channels, ask /why and /memories all at once."""
    ollama.chat_reply = _reflect
    people = {2000 + i: 100 + i for i in range(8)}  # person -> their channel
    async with _bot_with(tmp_path, ollama, database=database,
                         character={"timezone": "Europe/Paris"}) as (echo, rec):  # fmt: skip
        echo.runtime.engine.clock = lambda: NOW
        messages = {}
        for i, (who, channel_id) in enumerate(people.items()):
            channel = fakes.dm_channel(echo, channel_id, who)
            text = f"Person {who} keeps {i + 2} hives"
            messages[who] = await _told(echo, who, text, channel, days_ago=(i + 1) * 5)
            await _say(echo, channel, who, "hello")
        first = len(rec.messages())
        await asyncio.gather(*(
            _command(echo, name, who, channel_id, in_guild=False)
            for who, channel_id in people.items() for name in ("why", "memories")
        ))  # fmt: skip
        answers = [m["content"] for m in rec.messages()[first:]]
    assert len(answers) == 2 * len(people)
    for i, (who, channel_id) in enumerate(people.items()):
        said = datetime.fromtimestamp(NOW - (i + 1) * 5 * DAY, PARIS)
        link = LINK.format(place="@me", channel=channel_id, message=messages[who])
        mine = [a for a in answers if f"Person {who} " in a]
        assert len(mine) == 2
        for answer in mine:
            line = _line(answer, f"Person {who} keeps {i + 2} hives")
            assert f"{said.day} {said:%b}, " in line and f"[message]({link})" in line
            assert not any(f"Person {other} " in answer for other in people if other != who)


def test_a_jump_link_is_made_only_for_a_stored_discord_message() -> None:
    from bot.render import jump_url

    learned = manage.Learned
    assert jump_url(learned(1.0, "111", 10, "discord:42")) == LINK.format(
        place=111, channel=10, message=42
    )
    assert jump_url(learned(1.0, "dm", 555, "discord:42")) == LINK.format(
        place="@me", channel=555, message=42
    )
    assert jump_url(learned(1.0, "dm", 5, "terminal:abc")) is None
    assert jump_url(learned(1.0, "111")) is None  # the message is gone
