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
from memory import manage, short_date
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import _bot_with, _opt, _say
from tests.fakes.ollama import FakeOllama

ALICE = 1001
CHANNEL = 10
PARIS = ZoneInfo("Europe/Paris")
DAY = 86_400.0
# Wednesday 2 December 2026, 15:00 in Paris: the commands' "now".
NOW = datetime(2026, 12, 2, 15, 0, tzinfo=PARIS).timestamp()
NOW_DAY = datetime.fromtimestamp(NOW, PARIS).date()
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


async def test_remember_reads_tomorrow_on_the_bots_clock_in_the_characters_zone(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """/remember "my exam is tomorrow" at 23:30 in Paris on 2 Dec (22:30 UTC, still 2 Dec on
    the machine's clock in UTC): dated 3 Dec, the character's tomorrow, on the bot's clock."""
    late = datetime(2026, 12, 2, 23, 30, tzinfo=PARIS).timestamp()
    async with _bot_with(tmp_path, ollama,
                         character={"timezone": "Europe/Paris"}) as (echo, _):  # fmt: skip
        echo.runtime.engine.clock = lambda: late
        await _command(echo, "remember", ALICE, CHANNEL,
                       options=[_opt("text", "my exam is tomorrow", 3)])  # fmt: skip
        rows = await echo.runtime.store.fetchall("SELECT first_day, last_day FROM memory_dates")
        assert [tuple(r) for r in rows] == [("2026-12-03", "2026-12-03")]


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


async def _told_and_reworded(echo: EchoBot, who: int, channel: Any) -> tuple[int, int]:
    """`who` says they play the cello (three weeks ago) and keep bees (yesterday); five days
    ago they reworded the cello. Return the cello memory's id and its message's."""
    cello = await _told(echo, who, f"{who} plays the cello", channel, days_ago=21)
    await _told(echo, who, f"{who} keeps bees", channel, days_ago=1)
    store = echo.runtime.store
    [memory] = [m for m in await manage.list_memories(store, who) if "cello" in m.text]
    await manage.versions.edit(store, who, memory.id, f"{who} plays the viola",
                               now=NOW - 5 * DAY)  # fmt: skip
    return memory.id, cello


async def test_a_person_whose_discord_is_in_french_reads_the_dates_in_french(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = _reflect
    async with _bot_with(tmp_path, ollama, database=database,
                         character={"timezone": "Europe/Paris"}) as (echo, rec):  # fmt: skip
        echo.runtime.engine.clock = lambda: NOW
        channel = fakes.text_channel(echo, CHANNEL)
        viola, message = await _told_and_reworded(echo, ALICE, channel)
        link = LINK.format(place=fakes.GUILD_ID, channel=CHANNEL, message=message)
        await _say(echo, channel, ALICE, "what do I play?")
        answers = {}
        for locale in ("fr", "en-GB"):
            await _command(echo, "memories", ALICE, CHANNEL, locale=locale)
            await _command(echo, "why", ALICE, CHANNEL, locale=locale)
            await _command(echo, "memories", ALICE, CHANNEL, locale=locale,
                           options=[_opt("history", viola, 4)])  # fmt: skip
            answers[locale] = rec.contents()[-3:]
    page, why, versions = answers["fr"]
    for shown in (page, why):
        assert (
            f"· dit 11 nov., il y a trois semaines · [message]({link}) — {ALICE} plays the viola"
            " (en vigueur depuis le 27 nov. 2026, remplace une version antérieure: "
            f"/memories history {viola})"
        ) in shown
    assert "· dit hier · [message]" in _line(page, f"{ALICE} keeps bees")
    assert versions.splitlines()[0].startswith(f"`#{viola}` en vigueur depuis le 27 nov. 2026 (")
    assert versions.splitlines()[1].startswith("  du 10 nov. 2026 au 27 nov. 2026 (")
    assert "Your memories — page 1/1" in page  # the rest of the text stays English
    page, why, versions = answers["en-GB"]
    for shown in (page, why):
        assert (
            f"· said 11 Nov, three weeks ago · [message]({link}) — {ALICE} plays the viola "
            f"(current since 27 Nov 2026, replacing an earlier version: /memories history {viola})"
        ) in shown
    assert "· said yesterday · [message]" in _line(page, f"{ALICE} keeps bees")
    assert versions.splitlines()[0].startswith(f"`#{viola}` now, since 27 Nov 2026 (")
    assert versions.splitlines()[1].startswith("  10 Nov 2026 – 27 Nov 2026 (")


async def test_french_and_english_people_asking_at_once_each_read_their_own_language(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """The concurrent twin: people whose Discord is in French or in English, who told the bot
    things on different days, ask /why and /memories all at once."""
    ollama.chat_reply = _reflect
    people = {3000 + i: ("fr" if i % 2 else "en-US", 200 + i) for i in range(10)}
    async with _bot_with(tmp_path, ollama, database=database,
                         character={"timezone": "Europe/Paris"}) as (echo, rec):  # fmt: skip
        echo.runtime.engine.clock = lambda: NOW
        for i, (who, (_, channel_id)) in enumerate(people.items()):
            channel = fakes.dm_channel(echo, channel_id, who)
            await _told(echo, who, f"Person {who} keeps {i + 2} hives", channel,
                        days_ago=(i + 1) * 4)  # fmt: skip
            await _say(echo, channel, who, "hello")
        first = len(rec.messages())
        await asyncio.gather(*(
            _command(echo, name, who, channel_id, in_guild=False, locale=locale)
            for who, (locale, channel_id) in people.items() for name in ("why", "memories")
        ))  # fmt: skip
        answers = [m["content"] for m in rec.messages()[first:]]
    assert len(answers) == 2 * len(people)
    for i, (who, (locale, _)) in enumerate(people.items()):
        said = datetime.fromtimestamp(NOW - (i + 1) * 4 * DAY, PARIS).date()
        mine = [a for a in answers if f"Person {who} " in a]
        assert len(mine) == 2
        for answer in mine:
            line = _line(answer, f"Person {who} keeps {i + 2} hives")
            if locale == "fr":
                assert f"{short_date(said, today=NOW_DAY, language='fr')}, il y a " in line
                assert "· dit " in line
                assert "· said" not in line and " ago" not in line
            else:
                assert f"{said.day} {said:%b}, " in line and " ago" in line and "· said " in line
                assert "· dit" not in line and "il y a" not in line
